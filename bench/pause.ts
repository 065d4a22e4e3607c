// 4. The pause a target suffers, measured inside it, for the first insertion
// into a script (one LiveEdit) and for a later change (a probe on a prepared
// script: a runtime assignment), on heaps of about 10, 100 and 500 MB.
import * as fs from 'fs';
import * as path from 'path';
import { Session } from '../src/api';
import { predictPauseMs } from '../src/instrument/liveedit';
import { BenchOptions, fmt, fmtStop, median, Proc, progress, ratio, Section, sleep, spinSeries, spinWindow, SpinWindow, table, TARGETS } from './lib';

const R = `globalThis[Symbol.for('paranode.runtime')]`;

/**
 * What a Session.probe reaching every script fetches first: the runtime's
 * prepared functions with their points (diagnostic, private CDP).
 */
async function listScripts(session: Session): Promise<void> {
  await (session as any).cdp.evaluate(`${R}.functionsOf([...${R}.scripts.keys()])`);
}

/**
 * Runtime level: how long the in-target runtime itself works on a later change,
 * timed inside the target around the runtime's addProbe (the call Session.probe
 * ends with). Diagnostic: it reaches the runtime through the session's private
 * CDP connection; "n/a" if that is not possible.
 */
async function runtimeLevel(session: Session, n: number): Promise<string> {
  try {
    const cdp = (session as any).cdp;
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const spec = { id: 100000 + i, match: '^victim1\\.js/formatRow1$', point: 'entry', where: 'preInsn', order: 'append',
        snippet: { body: `C[__c_rl${i}]++;`, counters: [`rl${i}`], timers: [] } };
      const ms = await cdp.evaluate(`(() => { const t = performance.now(); ${R}.addProbe(${JSON.stringify(spec)}); return performance.now() - t; })()`);
      await cdp.evaluate(`${R}.removeProbe(${spec.id})`);
      times.push(Number(ms));
    }
    return `${fmt(median(times), 3)} (${fmt(Math.min(...times), 3)}-${fmt(Math.max(...times), 3)})`;
  } catch (e) {
    return `n/a (${(e as Error).message})`;
  }
}

export async function benchPause(opts: BenchOptions): Promise<Section> {
  const sizes = opts.quick ? [10, 100] : [10, 100, 500];
  const laterCount = opts.quick ? 6 : 15;
  const floorCount = opts.quick ? 3 : 5;
  const victimChars = [1, 2, 3].map((k) => fs.readFileSync(path.join(TARGETS, `victim${k}.js`), 'utf8').length);
  const pauseRows: string[][] = [];
  const toolRows: string[][] = [];
  const problems: string[] = [];
  const notes = new Set<string>();
  let laterUnder1 = 0;
  let laterTotal = 0;
  for (const mb of sizes) {
    progress(`pause: heap ${mb} MB: growing the target's heap`);
    const p = Proc.spawn('heap.js', [String(mb)], TARGETS, ['--max-old-space-size=4096']);
    try {
      const ready = await p.waitFor(/ready (\d+)/, 0);
      const heap = Number(ready[1]);
      await p.request('warm', /warm/);
      progress(`pause: heap ${(heap / 1e6).toFixed(0)} MB: ${floorCount} noise-floor windows`);
      const floor: SpinWindow[] = [];
      for (let i = 0; i < floorCount; i++) floor.push(await spinWindow(p, () => sleep(300)));
      progress('pause: attach');
      let s: Session | null = null;
      const att = await spinWindow(p, async () => { s = await Session.attach(p.pid, { maxPauseMs: 1e9 }); });
      const session = s as unknown as Session;
      const first: SpinWindow[] = [];
      for (let k = 1; k <= 3; k++) {
        progress(`pause: first insertion into victim${k}.js (LiveEdit)`);
        first.push(await spinWindow(p, () => session.probe(`/Code/victim${k}.js/handle${k}.entry: h${k}++`)));
      }
      // later changes: one continuous spin, each change next to a null action (a 2 ms sleep of the tool)
      // and a minimal round trip to the runtime (Session.sample), 20 ms apart
      progress(`pause: ${laterCount} later changes (probes on prepared scripts) and ${laterCount} removals, with controls`);
      const fns = ['sumFields', 'checksum', 'formatRow'];
      const ids: number[] = [];
      const steps: { name: string; fn: () => Promise<unknown> }[] = [];
      for (let i = 0; i < laterCount; i++) {
        const k = (i % 3) + 1;
        const fn = fns[Math.floor(i / 3) % fns.length];
        steps.push({ name: 'null', fn: () => sleep(2) });
        steps.push({ name: 'sample', fn: () => session.sample() });
        steps.push({ name: 'list', fn: () => listScripts(session) });
        steps.push({ name: 'later', fn: async () => { ids.push((await session.probe(`/Code/victim${k}.js/${fn}${k}.entry: x${i}++`)).id); } });
      }
      const series = await spinSeries(p, steps);
      const inTarget = await runtimeLevel(session, laterCount);
      // check that the probes count, before removing some
      await p.request('warm', /warm/);
      await session.sample();
      const vals = new Map(session.metrics().map((x) => [x.name, x.total]));
      for (let k = 1; k <= 3; k++) if (vals.get(`h${k}`) !== 2000) problems.push(`heap ${mb} MB: h${k} = ${vals.get(`h${k}`)}, expected 2000`);
      for (let i = 0; i < laterCount; i++) if (vals.get(`x${i}`) !== 2000) problems.push(`heap ${mb} MB: x${i} = ${vals.get(`x${i}`)}, expected 2000`);
      const removal = (await spinSeries(p, ids.map((id) => ({ name: 'remove', fn: () => session.removeProbe(id) })))).get('remove')!;
      const later = series.get('later')!;
      const nul = series.get('null')!;
      const rtt = series.get('sample')!;
      const list = series.get('list')!;
      for (const n of session.notes) notes.add(n);
      progress('pause: detach (restores 3 scripts)');
      let det: SpinWindow | null = null;
      try {
        det = await spinWindow(p, () => session.detach());
      } catch (e) {
        problems.push(`heap ${mb} MB: the target died during or right after \`detach()\` while its main thread was busy: ${(e as Error).message.split('\n')[0]}`);
      }

      laterUnder1 += later.filter((w) => w.stop < 1).length;
      laterTotal += later.length;
      type Stop = { stop: number; toolMs: number; gc: number };
      const st = (w: Stop[]) => `${fmtStop(median(w.map((x) => x.stop)))} (${fmtStop(Math.min(...w.map((x) => x.stop)))}-${fmtStop(Math.max(...w.map((x) => x.stop)))})`;
      const predicted = median(victimChars.map((c) => predictPauseMs(heap, c)));
      pauseRows.push([
        `${(heap / 1e6).toFixed(0)}`,
        st(floor),
        fmtStop(att.stop),
        st(first),
        fmt(predicted, 0),
        st(nul),
        st(rtt),
        st(list),
        st(later),
        `${later.filter((w) => w.stop < 1).length} / ${later.length}`,
        inTarget,
        st(removal),
        det ? fmtStop(det.stop) : '**target died**',
        ratio(median(first.map((x) => x.stop)), median(later.map((x) => x.stop))),
      ]);
      const gcs = (w: Stop[]) => { const g = w.filter((x) => x.gc > 0); return g.length ? `${g.length}: max ${fmt(Math.max(...g.map((x) => x.gc)))}` : 'none'; };
      toolRows.push([
        `${(heap / 1e6).toFixed(0)}`,
        fmt(att.toolMs, 0),
        fmt(median(first.map((x) => x.toolMs)), 0),
        fmt(median(later.map((x) => x.toolMs)), 1),
        fmt(median(removal.map((x) => x.toolMs)), 1),
        det ? fmt(det.toolMs, 0) : '**target died**',
        gcs(first),
        gcs(later),
      ]);
    } finally {
      await p.stop();
    }
  }
  const body: string[] = [];
  body.push('Method: the target (`bench/targets/heap.js <MB>`) first grows its heap with arrays of small live objects ' +
    '(`{i, k, next}`, 10,000 per array) and loads three small modules (`victim1-3.js`, about 0.9 KB each, not yet prepared). ' +
    'During each measurement it runs a busy loop (`bench/targets/spin.js`) that reads `performance.now()` back to back and ' +
    'records every gap over 0.1 ms between two reads, with its start time; every 10 ms it yields to the event loop (so that ' +
    'the tool\'s messages and stdin get through; that turn counts as a gap too). The tool spins the target 100 ms, acts, ' +
    'waits 100 ms; the **stop** of an action is the largest gap that overlaps the action\'s interval in the tool (epoch clocks ' +
    'of both processes, 1 ms slack). So it is the longest the main thread could not run JavaScript while the tool acted; ' +
    'noise (the OS taking the CPU away on this shared 2-core machine, a garbage collection) can add to it, so the noise ' +
    `floor is measured the same way around a 300 ms sleep of the tool (${floorCount} windows per heap). ` +
    '"<0.1" means no gap over 0.1 ms at all. "First insertion" is the first probe into each victim module (the session ' +
    'plans it and prepares it by one `Debugger.setScriptSource`); "later change" is a probe on a function of a module ' +
    'already prepared (no code change: an assignment in the in-target runtime). The later changes run in one continuous ' +
    'spin, 20 ms apart, each next to two controls: a null action (the tool sleeps 2 ms and sends nothing: what the noise ' +
    'alone gives an interval of that length) and `Session.sample()` (the smallest round trip to the in-target runtime), ' +
    'and the runtime\'s `functionsOf` of every script (the first part, up to 1,000 prepared functions with their points, of ' +
    'what a `Session.probe()` reaching every script fetches; sent through the session\'s private CDP connection); ' +
    '`removeProbe` likewise. The later change\'s "in-target runtime time" is the same ' +
    'step timed inside the target around the runtime\'s `addProbe` (through the session\'s private CDP connection; ' +
    'without the CDP round trip and the evaluation of the request). "Predicted" is paranode\'s own pause model ' +
    '(`predictPauseMs` in `src/instrument/liveedit.ts`) for that heap and script size.', '');
  body.push('Largest stop of the target\'s main thread during the action, ms: median over the actions (min-max in parentheses).', '');
  body.push(table(['heap used (MB)', 'noise floor (300 ms, no action)', 'attach', 'first insertion (LiveEdit), 3×', 'predicted by paranode',
    `null action (2 ms), ${laterCount}×`, `\`sample()\` round trip, ${laterCount}×`, `\`functionsOf\` request, ${laterCount}×`, `later change, ${laterCount}×`, 'later changes under 1 ms',
    'later change, in-target runtime time', `removeProbe, ${laterCount}×`, 'detach (restores 3 scripts)', 'first ÷ later'], pauseRows), '');
  body.push('Tool-side wall time of the same actions, ms (median), and the garbage collections the target reported inside the ' +
    'actions\' intervals (number of actions with one: largest, ms).', '');
  body.push(table(['heap used (MB)', 'attach', 'first insertion', 'later change', 'removeProbe', 'detach', 'GC during first insertions', 'GC during later changes'], toolRows), '');
  body.push(`Goal: a later change pauses the target under 1 ms whatever the heap: ${laterUnder1} of ${laterTotal} later changes stopped it under 1 ms ` +
    '(compare with the null action and the `sample()` round trip of the same series).');
  if (notes.size) body.push('', `Session notes: ${[...notes].map((n) => `"${n}"`).join('; ')}.`);
  body.push('', problems.length ? `**Problems**: ${problems.join('; ')}.` : 'Check: after the insertions every counter (`handle<k>` entries and the later changes) counted exactly the 2,000 calls made.');
  return { title: '4. Pause of the target: first insertion vs. later change, by heap size', body };
}
