// The consultant's answer: the most specific true nodes of the search history
// graph (true, with no true refinement), and the true functions whose own code
// takes a large share of the time themselves, most important (largest share
// of a thread's time they account for by themselves, over the part of the run
// they held in) first, each with the interval it held in and its source.
import { busyWarning } from '../cost/calibration';
import { codeLevel } from './focus-parts';
import { hypothesis } from './hypotheses';
import { PHASE_END, PHASE_START } from './search';
import type { PerformanceConsultant, SearchNode, TestRecord } from './search';
import type { SampledPath } from './next-steps';

export interface Bottleneck {
  hypothesis: string;
  /** the most specific focus it holds at ('/Process/<host>:<pid>' for the whole program) */
  focus: string;
  /** fraction of one thread's time (shareOf 'cpu': of the CPU time it got) */
  value: number;
  /** 'cpu': value is a share of the thread's CPU time (cpu_bound in /Code), 'time': of its wall time */
  shareOf: 'time' | 'cpu';
  threshold: number;
  /** seconds since the search started */
  interval: [number, number];
  /** module:line of a function, or the module */
  source: string | null;
  /** the thread whose value decided, "<pid>/<thread>" */
  thread: string | null;
  /**
   * For a function of a hypothesis that holds on the stack (cpu_bound,
   * sync_io, message_passing): the fraction of stack samples in which its own
   * code was running (the innermost of the program's frames; Node's built-ins
   * it calls count as its own). It ranks such functions.
   */
  self?: number;
  /** the commonest paths of calls to its function, from its thread's stack samples (hypotheses whose code is on the stack) */
  paths?: SampledPath[];
  /** the paranode command that measures it exactly: its metric at its focus, and how often its code runs */
  next?: string;
}

export interface Diagnosis {
  pid: number;
  bottlenecks: Bottleneck[];
  searchHistory: SearchNode[];
  cost: {
    /** the perturbation limit (null: none) */
    limit: number | null;
    /** observed cost per window, fraction of the busiest thread's time */
    observed: { avg: number; max: number; windows: number };
    /** observed over static-predicted cost, the correction applied to predictions at the end */
    predictionFactor: number;
    /** per window: its end (s since startedAt), the cost observed in it, the tests' predicted cost, the tests running */
    trace: { t: number; observed: number; predicted: number; tests: number }[];
    /**
     * the session before the search (the attach, the stack sampler's start): its length, the tool's
     * work in it (s of the busiest thread, high bound) and that work's share of it; no window covers it
     */
    beforeSearch?: { seconds: number; busiest: number; observed: number };
    /**
     * the search's end, from the last window to the search's stop (its tests' last running and
     * their taking out): its length, the tool's work in it (s of the busiest thread, high bound)
     * and that work's share of it; no window covers it
     */
    afterSearch?: { seconds: number; busiest: number; observed: number };
    /**
     * the detach, after the last window (diagnose's own, where it detached): its start (s since startedAt), its length, what it
     * stopped the main thread for (s: its last sample, the runtime's switching off, LiveEdits undone,
     * the debugger's commands and the last request by their round trips, a high bound) and that time's share of it
     */
    detach?: { at: number; seconds: number; main: number; observed: number };
    /**
     * where the calibration the costs were priced with was measured on a busy machine: the share of
     * its targets' time they waited for a CPU (its prices, and this observed cost, may read high)
     */
    calibrationWaited?: number;
  };
  /** when the search's clock started (ms since the epoch): time 0 of cost.trace and phases, to set them beside other records */
  startedAt: number;
  /** per whole-program hypothesis, the intervals it held in */
  phases: Record<string, [number, number][]>;
  /** seconds until every refinement of every true hypothesis was decided (null: not complete) */
  searchSeconds: number | null;
  durationSeconds: number;
  /** how the target ended, if it did during the session ("killed by SIGSEGV", "exited with code 0", ...) */
  targetFate?: string;
  /**
   * Per thread with stack samples, the functions whose own code ran most (their
   * self time, as V8's profiles give it), whatever the thresholds: a function
   * too small to hold a hypothesis by itself is still named here.
   */
  hottest?: Hottest[];
  /** how the stack samples were taken, where not as usual (V8 sampling a thread less often where reading them cost over their budget; by inspector interrupt) */
  sampling?: string[];
}

/**
 * One of a thread's hottest functions: `self` of `samples` stack samples had its
 * own code running (by inspector interrupt, which sees no frames of Node's code:
 * it innermost of the program's frames); by V8's profiler those are the busy
 * thread's samples, by inspector interrupt all samples (interrupts miss functions
 * with no interrupt check)
 */
export interface Hottest {
  thread: string;
  /**
   * "<module>/<function>" (a method by its own name; "<module>/<function>@<line>", its start line, where
   * the samples saw two functions of that name in the module); Node's own code as
   * "node:<module>/<function>", or "(native)/<function>" for code without a script
   */
  function: string;
  self: number;
  /** V8's profiler only, where more than `self`: the share that had it innermost of the program's frames, Node's code it called running (the share the consultant judges it by) */
  withNode?: number;
  samples: number;
  by: 'profiler' | 'interrupt';
  /** one of Node's own functions, by its self time (V8's profiler only) */
  node?: true;
  /** for Node's code: the program function innermost below it in most of its samples */
  calledFrom?: string;
  /** for the thread's HOTTEST_PATHS hottest program functions: the commonest path of calls to it */
  paths?: SampledPath[];
}

/** How many of a thread's hottest functions are listed with the path that led to them most often. */
export const HOTTEST_PATHS = 3;

/** How many of a thread's hottest functions a diagnosis lists: where the top functions are within a point of each other (a formatter's 4-6 %, a compiler's 2-3 %), five leave out some that hold as much */
export const HOTTEST = 10;
/** The most a thread's list of hottest program functions holds with those tied with its last (hottestCut) */
export const HOTTEST_TIED = 2 * HOTTEST;

/**
 * Of functions with their samples, the HOTTEST most sampled, then those the
 * samples cannot tell from the last of them (fewer by at most one standard error
 * of the difference of two counts, √(a + b)), up to HOTTEST_TIED: where a
 * profile is flat (a formatter's tenth at 1.9 %, the next ones at 1.7-1.8 % of
 * 1,100 samples), a cut at exactly ten is where the samples fell, not where the
 * time is.
 */
export function hottestCut<T extends [string, number]>(xs: readonly T[]): T[] {
  const sorted = [...xs].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const out = sorted.slice(0, HOTTEST);
  const last = out[out.length - 1]?.[1] ?? 0;
  for (const x of sorted.slice(HOTTEST, HOTTEST_TIED)) {
    if (last - x[1] > Math.sqrt(last + x[1])) break;
    out.push(x);
  }
  return out;
}

/**
 * Runs of true windows; a dip of fewer than PHASE_END false windows does not end a
 * phase, and after the first phase a new one holds for PHASE_START windows in a row
 * (or to the end of the search), as the search's (fewer is a blip: no new phase).
 */
export function phasesOf(tests: TestRecord[]): [number, number][] {
  // each run: from, to, its most true windows in a row
  const out: [number, number, number][] = [];
  let falses = PHASE_END, row = 0;
  for (const t of tests) {
    if (!t.verdict) { falses++; row = 0; continue; }
    row++;
    const last = out[out.length - 1];
    if (last && falses < PHASE_END) { last[1] = t.to; last[2] = Math.max(last[2], row); } else out.push([t.from, t.to, row]);
    falses = 0;
  }
  const end = tests.length ? tests[tests.length - 1].to : 0;
  return out.filter((p, i) => i === 0 || p[2] >= PHASE_START || p[1] === end).map(([a, b]) => [a, b]);
}

/**
 * Build the diagnosis. `explains(a, b)`: function node a calls function b (a
 * caller is explained by a true callee for hypotheses that count callees).
 * `selfShare(n)`: the share of stack samples function node n's own code was running in.
 * A true function whose own code ran in at least half the threshold's share
 * is a bottleneck itself, whatever its callees.
 */
export function diagnosis(c: PerformanceConsultant, pid: number, processFocus: string, explains: (a: SearchNode, b: SearchNode) => boolean,
  selfShare: (n: SearchNode) => number | undefined = () => undefined): Diagnosis {
  const nodes = c.nodes;
  const top = (n: SearchNode): SearchNode => { let p = n; while (p.parent !== null) p = nodes[p.parent - 1]; return p; };
  const phases: Record<string, [number, number][]> = {};
  for (const n of nodes) if (n.parent === null) phases[n.hypothesis] = phasesOf(n.tests);
  const isTrue = (n: SearchNode) => n.state === 'true';
  const out: Bottleneck[] = [];
  for (const n of nodes.filter(isTrue)) {
    const h = hypothesis(n.hypothesis);
    const self = h.onStack && codeLevel(n.focus, n.parent === null ? undefined : nodes[n.parent - 1].focus) === 'function' ? selfShare(n) : undefined;
    if (self === undefined || self < n.threshold / 2) {
      if (nodes.some((k) => k.parent === n.id && isTrue(k))) continue;
      if (h.inclusive && nodes.some((k) => k !== n && isTrue(k) && k.hypothesis === n.hypothesis && explains(n, k))) continue;
    }
    const base = { hypothesis: n.hypothesis, value: n.value ?? 0, shareOf: n.shareOf ?? 'time' as const, threshold: n.threshold, source: n.source ?? null, thread: n.thread ?? null, ...(self !== undefined ? { self } : {}) };
    if (n.parent === null) {
      for (const p of phases[n.hypothesis]) out.push({ ...base, focus: processFocus, interval: p, value: mean(n.tests.filter((t) => t.verdict && t.from >= p[0] && t.to <= p[1])) });
      continue;
    }
    const last = [...n.tests].reverse().find((t) => t.verdict)!;
    const phase = phases[top(n).hypothesis].find(([a, b]) => a <= last.to && last.from <= b);
    out.push({ ...base, focus: n.focus, interval: phase ? [Math.min(phase[0], last.from), Math.max(phase[1], last.to)] : [last.from, last.to] });
  }
  // a call site or a loop is a part of its function's own time: it ranks by no more than that; and a
  // bottleneck counts for the part of the run it held in (a 1 s phase of the tool's own cost
  // at 80% weighs less than a function at 60% all along)
  const weight = new Map<Bottleneck, number>();
  const run = Math.max(c.now(), 1e-3);
  for (const b of out) {
    const n = nodes.find((k) => k.focus === b.focus && k.hypothesis === b.hypothesis);
    const up = n && n.parent !== null ? nodes[n.parent - 1] : undefined;
    const level = up && codeLevel(b.focus, up.focus);
    const inside = level === 'callsite' || level === 'loop';
    const upSelf = up && inside ? selfShare(up) : undefined;
    const held = Math.min(1, Math.max(0, b.interval[1] - b.interval[0]) / run);
    // by its own code only where that made it a bottleneck: a function V8 inlined has no samples of its own
    const own = b.self !== undefined && b.self >= b.threshold / 2 ? b.self : undefined;
    let w = (own ?? (upSelf !== undefined ? Math.min(b.value, upSelf) : b.value)) * held;
    // and after its function where that is listed too (tested later, it held until later)
    const fn = inside ? out.find((x) => x.focus === up!.focus && x.hypothesis === b.hypothesis) : undefined;
    if (fn) w = Math.min(w, weight.get(fn) ?? w);
    weight.set(b, w);
  }
  out.sort((a, b) => weight.get(b)! - weight.get(a)!);
  const ranked = waitersAfterBusy(out, weight);
  const trace = c.costTrace;
  return {
    pid,
    bottlenecks: ranked,
    searchHistory: nodes.map((n) => ({ ...n, tests: [...n.tests] })),
    cost: {
      limit: Number.isFinite(c.limit) ? c.limit : null,
      observed: { avg: trace.length ? trace.reduce((a, x) => a + x.observed, 0) / trace.length : 0, max: Math.max(0, ...trace.map((x) => x.observed)), windows: trace.length },
      predictionFactor: c.factor,
      trace: [...trace],
      ...(c.beforeSearch ? { beforeSearch: { ...c.beforeSearch } } : {}),
      ...(c.afterSearch ? { afterSearch: { ...c.afterSearch } } : {}),
      ...(c.calibration && busyWarning(c.calibration) ? { calibrationWaited: c.calibration.waited } : {}),
    },
    phases,
    startedAt: c.startedAt,
    searchSeconds: c.searchSeconds ?? null,
    durationSeconds: c.now(),
  };
}

/**
 * A thread that waits while another thread of the process is CPU-bound most
 * likely waits on it (a main thread on its workers, workers on a busy one
 * handing out work): its waiting ranks after the busy thread's CPU-bound
 * bottlenecks, by weight among what follows them.
 */
export function waitersAfterBusy(out: Bottleneck[], weight: Map<Bottleneck, number>): Bottleneck[] {
  const busy = new Set(out.filter((b) => b.hypothesis === 'cpu_bound' && b.thread !== null).map((b) => b.thread));
  const waitsOnOther = (b: Bottleneck) => b.hypothesis === 'waiting' && b.thread !== null && [...busy].some((t) => t !== b.thread);
  const rest = out.filter((b) => !waitsOnOther(b));
  const lastBusy = rest.reduce((at, b, i) => (b.hypothesis === 'cpu_bound' && b.thread !== null ? i : at), -1);
  const tail = [...rest.slice(lastBusy + 1), ...out.filter(waitsOnOther)].sort((a, b) => weight.get(b)! - weight.get(a)!);
  return [...rest.slice(0, lastBusy + 1), ...tail];
}

const mean = (ts: TestRecord[]) => (ts.length ? ts.reduce((a, t) => a + t.value, 0) / ts.length : 0);

const pct = (x: number) => `${(100 * x).toFixed(x < 0.1 ? 1 : 0)}%`;

/** The ranked report, as text. */
export function renderDiagnosis(d: Diagnosis): string {
  const lines: string[] = [];
  const searched = d.searchSeconds !== null ? `search complete after ${d.searchSeconds.toFixed(1)} s` : `search not complete after ${d.durationSeconds.toFixed(1)} s`;
  const lim = d.cost.limit === null ? 'no limit' : `limit ${pct(d.cost.limit)}`;
  lines.push(`paranode: diagnosis of process ${d.pid}: ${searched}; ${d.searchHistory.length} nodes tested; instrumentation cost ${pct(d.cost.observed.avg)} on average, ${pct(d.cost.observed.max)} at most (${lim})`);
  const pre = d.cost.beforeSearch;
  if (pre) lines.push(`paranode: before the search (the attach or launch, the sampler's start): the tool's work took ${Math.round(pre.busiest * 1000)} ms of the busiest thread in ${Math.round(pre.seconds * 1000)} ms (${pct(pre.observed)}; no cost window covers it: what is over the limit is paid back by a pause in testing)`);
  const post = d.cost.afterSearch;
  if (post) lines.push(`paranode: the search's end (after the last window: its tests taken out): the tool's work took ${Math.round(post.busiest * 1000)} ms of the busiest thread in ${Math.round(post.seconds * 1000)} ms (${pct(post.observed)})`);
  const det = d.cost.detach;
  if (det) lines.push(`paranode: the detach (after the last window): it stopped the main thread for ${Math.round(det.main * 1000)} ms in ${Math.round(det.seconds * 1000)} ms (${pct(det.observed)})`);
  if (d.cost.calibrationWaited !== undefined) {
    lines.push(`paranode: the costs were priced by a calibration measured on a busy machine (its targets waited for a CPU ${pct(d.cost.calibrationWaited)} of their time): they may read up to 2× high; \`paranode calibrate\` on a quiet machine measures them again`);
  }
  if (d.targetFate) lines.push(`paranode: the target ${d.targetFate}; the diagnosis covers what was sampled until then`);
  if (!d.bottlenecks.length) lines.push('no hypothesis held: no bottleneck found above the thresholds');
  d.bottlenecks.forEach((b, i) => {
    lines.push(`${String(i + 1).padStart(2)}. ${hypothesis(b.hypothesis).title}`);
    lines.push(`    at ${b.focus}${b.thread && !b.focus.includes('/Thread/') ? `  (thread ${b.thread})` : ''}`);
    const self = b.self !== undefined ? `; its own code in ${pct(b.self)} of stack samples` : '';
    lines.push(`    ${pct(b.value)} of ${b.shareOf === 'cpu' ? "the thread's CPU time" : "a thread's time"} (threshold ${pct(b.threshold)})${self}, ${b.interval[0].toFixed(1)}-${b.interval[1].toFixed(1)} s${b.source ? `, ${b.source}` : ''}`);
    for (const p of b.paths ?? []) lines.push(`    reached by ${p.functions.join(' > ')} (${pct(p.share)} of the samples it was in)`);
    if (b.next) lines.push(`    next: ${b.next}`);
  });
  // what the limit kept the search from testing: a developer reads it as "not known", not as "not a bottleneck"
  const costly = d.searchHistory.filter((n) => n.state === 'too costly');
  if (costly.length) {
    lines.push(`not tested, too costly under the limit (${costly.length}):`);
    for (const n of costly.slice(0, 5)) lines.push(`  $ ${n.hypothesis} @ ${n.focus} (${n.note ?? 'too costly'})`);
    if (costly.length > 5) lines.push(`  ... and ${costly.length - 5} more (--history lists them)`);
  }
  const byThread = new Map<string, Hottest[]>();
  for (const h of d.hottest ?? []) byThread.set(h.thread, [...(byThread.get(h.thread) ?? []), h]);
  for (const [thread, hs] of byThread) {
    const of = hs[0].by === 'profiler' ? `${hs[0].samples} stack samples of the busy thread` : `${hs[0].samples} stack samples by inspector interrupt, which miss small functions`;
    const program = hs.filter((h) => !h.node), node = hs.filter((h) => h.node);
    if (program.length) lines.push(`hottest functions of thread ${thread} by ${hs[0].by === 'profiler' ? 'self time' : 'their own code'} (${of}, any share): ` +
      program.map((h) => `${h.function} ${pct(h.self)}${h.withNode !== undefined && pct(h.withNode) !== pct(h.self) ? ` (${pct(h.withNode)} with Node's code it calls)` : ''}`).join(', '));
    for (const h of program) for (const p of h.paths ?? []) lines.push(`  reached by ${p.functions.join(' > ')} (${pct(p.share)} of the samples it was in)`);
    if (node.length) lines.push(`hottest of Node's own code in thread ${thread} (self time, counted in its caller's share with Node's code): ` +
      node.map((h) => `${h.function}${h.calledFrom ? ` (called from ${h.calledFrom})` : ''} ${pct(h.self)}`).join(', '));
  }
  lines.push(...d.sampling ?? []);
  return lines.join('\n') + '\n';
}

const MARK: Record<string, string> = { unknown: '?', waiting: '…', testing: '~', true: '+', false: '-', 'too costly': '$', 'not testable': 'x' };

/** The search history graph as an indented tree (live view and --history). */
export function renderHistory(nodes: SearchNode[], opts: { onlyTrue?: boolean } = {}): string {
  const lines: string[] = [];
  const walk = (parent: number | null, depth: number) => {
    for (const n of nodes.filter((x) => x.parent === parent)) {
      if (opts.onlyTrue && parent !== null && n.state === 'false') continue;
      const v = n.value !== undefined ? ` ${pct(n.value)}/${pct(n.threshold)}` : '';
      lines.push(`${'  '.repeat(depth)}${MARK[n.state]} ${n.hypothesis}${n.focus ? ` @ ${n.focus}` : ''}${v}${n.state === 'too costly' || n.state === 'not testable' ? ` (${n.note ?? n.state})` : ''}`);
      walk(n.id, depth + 1);
    }
  };
  walk(null, 0);
  return lines.join('\n') + '\n';
}
