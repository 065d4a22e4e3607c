// 2. Time to attach (Session.attach until it resolves) and to place a probe, on
// a small target; against the start-up time of the same target without the
// tool and a sampling round trip, both measured in the same run.
import { Session } from '../src/api';
import { BenchOptions, fmt, median, Proc, progress, ratio, Section, table, TARGETS, timeMs } from './lib';

export async function benchAttach(opts: BenchOptions): Promise<Section> {
  const reps = opts.quick ? 3 : 7;
  const m: Record<string, number[]> = {};
  const add = (k: string, v: number) => { (m[k] ??= []).push(v); };
  const body: string[] = [];
  const problems: string[] = [];
  for (let r = 0; r < reps; r++) {
    progress(`attach: repetition ${r + 1}/${reps}`);
    // baseline: the plain start-up of the target, spawn until it prints "ready"
    let t0 = timeMs();
    const p = Proc.spawn('small.js');
    await p.waitFor(/ready/, 0);
    add('startup', timeMs() - t0);
    try {
      await p.request('call 1000', /done/);
      t0 = timeMs();
      const s = await Session.attach(p.pid);
      add('attach', timeMs() - t0);
      t0 = timeMs();
      await s.sample();
      add('rtt', timeMs() - t0);
      t0 = timeMs();
      const first = await s.probe('/Code/small.js/work.entry: n++');
      add('probe1', timeMs() - t0);
      t0 = timeMs();
      const second = await s.probe('/Code/small.js/helper.entry: h++');
      add('probe2', timeMs() - t0);
      await p.request('call 1000', /done/);
      await s.sample();
      const vals = new Map(s.metrics().map((x) => [x.name, x.total]));
      if (first.placed !== 1 || second.placed !== 1 || vals.get('n') !== 1000 || vals.get('h') !== 1000) {
        problems.push(`repetition ${r + 1}: placed ${first.placed}/${second.placed}, n=${vals.get('n')}, h=${vals.get('h')} (expected 1, 1, 1000, 1000)`);
      }
      t0 = timeMs();
      await s.removeProbe(second.id);
      add('remove', timeMs() - t0);
      t0 = timeMs();
      await s.detach();
      add('detach', timeMs() - t0);
      await p.request('call 10', /done/); // still alive and answering
    } finally {
      await p.stop();
    }
    // launch: Session.launch until it resolves, and until the program printed "ready"
    t0 = timeMs();
    const s = await Session.launch([process.execPath, 'small.js'], [], { stdio: 'pipe', cwd: TARGETS });
    add('launch', timeMs() - t0);
    const lp = new Proc(s.child!, 'small.js (launch)');
    await lp.waitFor(/ready/, 0);
    add('launchReady', timeMs() - t0);
    t0 = timeMs();
    await s.probe('/Code/small.js/work.entry: n++');
    add('probeLaunched', timeMs() - t0);
    await lp.stop();
    await s.waitForExit();
  }
  const med = (k: string) => median(m[k] ?? []);
  const range = (k: string) => `${fmt(Math.min(...m[k]), 1)}-${fmt(Math.max(...m[k]), 1)}`;
  const base = med('startup');
  const rtt = med('rtt');
  body.push(`Target: \`bench/targets/small.js\` (4 functions, idle on stdin), ${reps} repetitions, each on a fresh process. ` +
    'Times are wall-clock in the tool process (ms); ratios are to the plain start-up of the same target ' +
    '(`node small.js` until it prints "ready") and to one sampling round trip (`Session.sample()`: one `Runtime.evaluate` ' +
    'through the agent), both measured in the same run.', '');
  body.push(table(['step', 'median ms', 'min-max ms', '× plain start-up', '× sampling round trip'], [
    ['plain start-up of the target (baseline)', fmt(base, 1), range('startup'), '1.00', ratio(base, rtt)],
    ['one sampling round trip `Session.sample()` (baseline)', fmt(rtt, 2), range('rtt'), ratio(rtt, base), '1.00'],
    ['`Session.attach(pid)` until it resolves', fmt(med('attach'), 1), range('attach'), ratio(med('attach'), base), ratio(med('attach'), rtt)],
    ['first probe `work.entry: n++` (prepares small.js by LiveEdit)', fmt(med('probe1'), 1), range('probe1'), ratio(med('probe1'), base), ratio(med('probe1'), rtt)],
    ['second probe `helper.entry: h++` (script already prepared)', fmt(med('probe2'), 1), range('probe2'), ratio(med('probe2'), base), ratio(med('probe2'), rtt)],
    ['`removeProbe`', fmt(med('remove'), 1), range('remove'), ratio(med('remove'), base), ratio(med('remove'), rtt)],
    ['`detach()` (restores small.js by LiveEdit)', fmt(med('detach'), 1), range('detach'), ratio(med('detach'), base), ratio(med('detach'), rtt)],
    ['`Session.launch` until it resolves', fmt(med('launch'), 1), range('launch'), ratio(med('launch'), base), ratio(med('launch'), rtt)],
    ['`Session.launch` until the program printed "ready"', fmt(med('launchReady'), 1), range('launchReady'), ratio(med('launchReady'), base), ratio(med('launchReady'), rtt)],
    ['probe `work.entry: n++` on a launched target (load-time slots)', fmt(med('probeLaunched'), 1), range('probeLaunched'), ratio(med('probeLaunched'), base), ratio(med('probeLaunched'), rtt)],
  ]), '');
  body.push(problems.length ? `**Problems**: ${problems.join('; ')}.` : 'Check: in every repetition both probes were placed at 1 point and counted exactly 1,000 calls, and the target answered after detach.');
  return { title: '2. Time to attach and to place a probe', body };
}
