// A breakpoint's interpreter pinning, predicted and observed against the real
// slowdown (issue #15 items 3 and 4). test/fixtures/pinning.js runs two
// loops back to back (hot: an arithmetic loop; cold: a synchronous child
// process); attached with a pause limit of 0 (no LiveEdit, as on Node 26),
// a counter at hot's entry (or cold's) is reached by a breakpoint, which keeps
// the function in V8's interpreter while it is set. Windows alternate: plain,
// hot pinned, plain, cold pinned, ..., and each pinned window's loop rate is
// compared with the plain windows beside it.
// `npm run bench -- --only pinning`, or: node dist/bench/pinning.js [--quick] [--rounds n]
import * as path from 'path';
import { calibration, classCost } from '../src/cost/calibration';
import { MetricManager } from '../src/metrics/manager';
import { Session } from '../src/session/session';
import { BenchOptions, FIXTURES, fmt, median, Proc, progress, Section, sleep, table } from './lib';

interface Window { rate: number; seconds: number; own: Map<string, number>; samples: number; pinned: number; observed: [number, number] }

export async function benchPinning(opts: BenchOptions & { rounds?: number }): Promise<Section> {
  const rounds = opts.rounds ?? (opts.quick ? 1 : 3);
  const secs = opts.quick ? 2 : 4;
  const cal = await calibration({ progress });
  const p = Proc.spawn(path.join(FIXTURES, 'pinning.js'), ['3600'], FIXTURES);
  await p.waitFor(/ready/);
  const s = await Session.attach(p.pid, { maxPauseMs: 0 });
  const mm = new MetricManager([s]);
  const rows: string[][] = [];
  try {
    const cost = await mm.enable('observed_cost');
    await s.watchThreads({ stacks: true });
    s.startSampling(200);
    const count = async () => {
      const m = await p.request('count', /count (\d+) (\d+) ([\d.]+)/);
      return { hots: Number(m[1]), ms: Number(m[3]) };
    };
    const own = () => new Map(s.stackSamples('main').own);
    /** one window of `secs` seconds (waited for: the target runs on its own, it is its rate that is measured) */
    const window = async (): Promise<Window> => {
      await s.sample();
      const a = await count(), o0 = own(), n0 = s.stackSamples('main').samples, pin0 = s.sampled('_pnx:pinned')?.last ?? 0, c0 = cost.value().range!;
      await sleep(secs * 1000);
      await s.sample();
      const b = await count(), o1 = own(), c1 = cost.value().range!;
      const d = new Map([...o1].map(([k, v]) => [k, v - (o0.get(k) ?? 0)]));
      const seconds = (b.ms - a.ms) / 1000;
      return { rate: (b.hots - a.hots) / seconds, seconds, own: d, samples: s.stackSamples('main').samples - n0, pinned: (s.sampled('_pnx:pinned')?.last ?? 0) - pin0, observed: [(c1[0] - c0[0]) / seconds, (c1[1] - c0[1]) / seconds] };
    };
    await window(); // warm-up
    const results: Record<'hot' | 'cold', { plain: number[]; pinned: number[]; share: number[]; observed: [number, number][]; pinnedSamples: number[] }> = {
      hot: { plain: [], pinned: [], share: [], observed: [], pinnedSamples: [] },
      cold: { plain: [], pinned: [], share: [], observed: [], pinnedSamples: [] },
    };
    for (let r = 0; r < rounds; r++) {
      for (const fn of ['hot', 'cold'] as const) {
        progress(`pinning: round ${r + 1} of ${rounds}, ${fn}`);
        const plain = await window();
        // its own code and its caller's (where V8 gives an inlined or pinned function's ticks), as the consultant prices it
        const keys = [`pinning.js/${fn}`, `pinning.js/${fn}Loop`];
        const share = keys.reduce((x, k) => x + (plain.own.get(k) ?? 0), 0) / plain.samples;
        const probe = await s.probe(`/Code/pinning.js/${fn}.entry: pin_${fn}++`);
        if (probe.byBreakpoint !== 1) throw new Error(`expected a breakpoint at ${fn}'s entry: ${JSON.stringify(probe)}`);
        const pinned = await window();
        await s.removeProbe(probe.id);
        const after = await window();
        const R = results[fn];
        R.plain.push((plain.rate + after.rate) / 2);
        R.pinned.push(pinned.rate);
        R.share.push(share);
        R.observed.push(pinned.observed);
        R.pinnedSamples.push(pinned.pinned / pinned.samples);
      }
    }
    const [flo, fhi] = cal.pinned;
    for (const fn of ['hot', 'cold'] as const) {
      const R = results[fn];
      const plain = median(R.plain), pinned = median(R.pinned), share = median(R.share);
      const slow = plain / pinned;
      const obs = [median(R.observed.map((o) => o[0])), median(R.observed.map((o) => o[1]))];
      rows.push([
        `${fn}()`, fmt(plain, 1), fmt(pinned, 1), `${fmt(slow, 2)}×`,
        `${fmt(100 * share, 1)} %`, `${fmt(1 + share * (flo - 1), 2)}-${fmt(1 + share * (fhi - 1), 2)}×`,
        `${fmt(100 * median(R.pinnedSamples), 1)} %`, `${fmt(1 / (1 - Math.min(0.99, obs[0])), 2)}-${fmt(1 / (1 - Math.min(0.99, obs[1])), 2)}×`,
      ]);
    }
  } finally {
    await s.detach().catch(() => undefined);
    await p.stop();
  }
  return {
    title: 'A breakpoint\'s interpreter pinning: predicted and observed against the measured slowdown',
    body: [
      `test/fixtures/pinning.js, attached with \`maxPauseMs: 0\` (no LiveEdit: breakpoints, as on Node 26 for every script loaded before attach); ` +
      `${rounds} round(s) of windows of ${secs} s: plain, a counter at the function's entry (one breakpoint, hit once per loop), plain again. ` +
      `Loop rate: hot loops a second (the two loops take turns, so it is the program's rate). ` +
      `Share: of V8's stack samples in the plain window, those in which the function's or its caller's own code ran (what the consultant prices). ` +
      `Predicted: 1 + share × (F − 1), F the calibrated pinning factors ${fmt(cal.pinned[0], 1)}-${fmt(cal.pinned[1], 1)}. ` +
      `Observed: 1 / (1 − observed_cost) over the pinned window, low and high bound (breakpoint hits, pinned samples ${'×'} (1 − 1/F) × 10 ms, the tool's work). ` +
      `Breakpoint hits cost ${fmt(classCost(cal, 'breakpoint:n1')[0] / 1e6, 2)} ms each here. Medians over the rounds.`,
      '',
      table(['pinned', 'plain loops/s', 'pinned loops/s', 'measured slowdown', 'share', 'predicted', 'pinned samples', 'observed'], rows),
    ],
  };
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const rounds = args.includes('--rounds') ? Number(args[args.indexOf('--rounds') + 1]) : undefined;
  benchPinning({ quick: args.includes('--quick'), rounds }).then((sec) => {
    process.stdout.write(`### ${sec.title}\n\n- Command: \`node dist/bench/pinning.js ${args.join(' ')}\`; Node ${process.version}\n\n${sec.body.join('\n')}\n`);
  }, (e) => { console.error(e); process.exit(1); });
}
