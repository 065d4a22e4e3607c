// 8. Observed cost (issue #3's observed_cost, the measuring half of #4's cost
// system), as Figure 1 of the cost-system paper: for workloads and levels of
// instrumentation, the timed cost (the timed part's time minus the same part
// run bare, in the same benchmark) next to the observed cost's low and high
// bounds over exactly that part.
import { calibration } from '../src/cost/calibration';
import { predictPlan, STATIC_ENTRY, STATIC_TRIPS } from '../src/cost/predict';
import { planRequest } from '../src/mdl/evaluate';
import { MetricManager } from '../src/metrics/manager';
import { BenchOptions, fmt, median, Proc, progress, Section, table, TARGETS } from './lib';

type Level = 'base' | 'calls' | 'cpu';
const LEVELS: Level[] = ['base', 'calls', 'cpu'];
const LABEL: Record<Level, string> = {
  base: 'Base: launched, nothing inserted',
  calls: 'Procedure: `procedure_calls@/Code/**` (a counter per function)',
  cpu: 'Procedure CPU: `cpu@/Code/**` (a CPU timer per function)',
};

/** One run: the timed part's total ms, and the observed cost over it ([low, high] ms). */
async function run(lib: string, reps: number, level: Level): Promise<{ ms: number; low: number; high: number; pred: number }> {
  const requests = level === 'base' ? [] : [{ metric: level === 'calls' ? 'procedure_calls' : 'cpu', focus: '/Code/**' }];
  const { session: s, manager: mm } = await MetricManager.launch([process.execPath, 'work.js', lib, String(reps), 'warm'], requests, { stdio: 'pipe', cwd: TARGETS });
  const p = new Proc(s.child!, `work.js ${lib} under ${level}`);
  await p.waitFor(/warm\n/, 0);
  // the predicted cost (static frequencies, no correction: the paper's Figure 3), a fraction of the thread's time
  let pred = 0;
  if (requests.length) {
    const m = mm.library.metric(requests[0].metric);
    const plan = planRequest(mm.library, m, [{ hierarchy: '/Code', kind: 'function', path: '/Code/**' }], '_pnm0$fn', () => '_pnk0');
    pred = (await predictPlan(plan, s, await mm.costCalibration())).cost;
  }
  const cost = await mm.enable('observed_cost');
  p.send('go');
  const m = await p.waitFor(/work \S+ (\S+) \S+\n/, 0);
  await s.sample();
  const r = cost.value().range!;
  await s.waitForExit().catch(() => undefined);
  return { ms: Number(m[1]), low: r[0] * 1000, high: r[1] * 1000, pred };
}

export async function benchCost(opts: BenchOptions): Promise<Section> {
  const c = await calibration({ progress });
  const body: string[] = [];
  const runs = opts.quick ? 2 : 5;
  const rows: string[][] = [];
  const reps: Record<string, number> = { esprima: opts.quick ? 4 : 8, marked: opts.quick ? 4 : 8 };
  for (const lib of ['esprima', 'marked']) {
    const got: Record<Level, { ms: number; low: number; high: number; pred: number }[]> = { base: [], calls: [], cpu: [] };
    for (let r = 0; r < runs; r++) {
      for (const level of LEVELS.map((_l, i) => LEVELS[(i + r) % LEVELS.length])) {
        progress(`cost: ${lib} run ${r + 1}/${runs}: ${level}`);
        got[level].push(await run(lib, reps[lib], level));
      }
    }
    const base = median(got.base.map((x) => x.ms));
    for (const level of LEVELS) {
      const g = got[level];
      const t = median(g.map((x) => x.ms));
      const timed = t - base;
      const low = median(g.map((x) => x.low)), high = median(g.map((x) => x.high));
      const inside = level === 'base' ? '' : timed < low ? 'below' : timed > high ? 'above' : 'inside';
      const pred = median(g.map((x) => x.pred)) * base;
      rows.push([lib, LABEL[level], `${fmt(t, 0)} (${fmt(Math.min(...g.map((x) => x.ms)), 0)}-${fmt(Math.max(...g.map((x) => x.ms)), 0)})`,
        level === 'base' ? '' : fmt(timed, 0), fmt(low, 1), fmt(high, 0), inside, level === 'base' ? '' : `${fmt(pred, 1)} (${fmt(100 * pred / base, 1)}%)`]);
    }
  }
  body.push(`\`bench/targets/work.js <lib> <reps> warm\` under \`MetricManager.launch\`: the program warms up (esprima 5, marked 30 parses), ` +
    'then `observed_cost` is enabled and the timed part runs (esprima: parse esprima.js with ranges, locations, tokens and comments; ' +
    `marked: its README × 20), ${reps.esprima} repetitions. T: the timed part's total ms as the program measured it, median of ${runs} runs ` +
    '(min-max), the levels taking turns. C_observed: T minus Base\'s T. C_low / C_high: the observed cost over the timed part ' +
    '(handler runs per cost class × calibrated cost: low as in optimized code, high as in code V8 did not optimize), median over the runs.', '',
    table(['workload', 'level', 'T ms', 'C_observed ms', 'C_low ms', 'C_high ms', 'C_observed', 'C_pred ms (of base T)'], rows), '',
    'C_pred: the predicted cost before insertion (src/cost/predict.ts: each point\'s handler at its calibrated high cost × static frequencies, ' +
    `${STATIC_ENTRY} entries a second per function, an exit as often as its entry, a call site or await as often times ${STATIC_TRIPS} per loop around it, two loops at most), uncorrected as in the paper's Figure 3, × base T.`, '',
    `Calibration used (ns per run, optimized / unoptimized): slot ${c.mechanism.slot.map((x) => fmt(x, 1)).join(' / ')}, ` +
    `counter ${c.primitive.n.map((x) => fmt(x, 2)).join(' / ')}, CPU timer start+stop ${c.primitive.cpuPair.map((x) => fmt(x, 0)).join(' / ')}, ` +
    `wall timer start+stop ${c.primitive.wallPair.map((x) => fmt(x, 0)).join(' / ')} (Node ${c.node}, measured ${c.measuredAt}).`);
  return { title: '8. Observed and predicted cost against the timed cost (the cost-system paper\'s Figures 1 and 3)', body };
}
