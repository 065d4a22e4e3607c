// The Performance Consultant: Paradyn's W3 search for Node.js. Each node of the
// search history graph is a hypothesis (why) at a focus (where); it is tested
// by enabling its metric there for a while and comparing the value, a fraction
// of one thread's time, with the hypothesis's threshold. True nodes are refined
// (threads, then modules, then functions, then call sites and loops); false ones are dropped. The
// whole-program nodes stay enabled and are judged window after window, so a
// hypothesis can hold in one phase and not in another (when), and a new phase
// searches its refinements again. How many tests run at once is set by the
// cost limit: a test starts only if its predicted cost fits under the limit
// beside what is in place, and when the observed cost goes over it the newest
// test is taken out again (the cost-system paper, section 5).
import { EventEmitter } from 'events';
import type { Session } from '../session/session';
import { busySamples, sampledAt, type StackSamples, THREAD_SERIES } from '../session/series';
import { TargetGoneError } from '../inspector/cdp';
import { Interrupted } from '../session/errors';
import type { MetricManager } from '../metrics/manager';
import type { Calibration } from '../cost/calibration';
import { SAMPLE_INTERVAL_US } from '../agent/cpu-sampler';
import { runnableTime } from '../agent/runnable-time';
import type { MetricInstance } from '../metrics/instance';
import { parseCallSite, splitFocus } from '../metrics/focus';
import { calleeName, innermostCalls, loopName, pointMatches } from '../analysis/point-select';
import type { PointInfo } from '../analysis/functions';
import type { Prepared } from '../session/mechanisms/mechanism';
import { codeLevel, codeOf, sampleKey, threadLabel, threadOf } from './focus-parts';
import { HYPOTHESES, Hypothesis, hypothesis, thresholds as withThresholds } from './hypotheses';

/** the shortest test, seconds (a few samples) */
const MIN_TEST = 0.6;
/** windows a whole-program hypothesis must stay false for its phase to be over */
export const PHASE_END = 3;
/**
 * windows in a row it must hold again for a new phase, after one has ended: one
 * window over the threshold between false ones (a second in which a batch of tests
 * went in and out, the tool's cost priced high) does not search its subtree again
 */
export const PHASE_START = 2;
/** seconds between a test's insertion and the start of its window */
const SETTLE = 0.3;
/**
 * While nothing is left to test and every thread is busy with its event loop turning, the
 * threads are read this seldom (ms) at least: each read costs the thread by the read more than
 * by its stack samples (V8 cuts a profile, the tool's request runs, the debugger announces its
 * script), and the loaded server lost 5.6-6.9 % of its requests to its twin read every 200 ms
 * after its search was complete, 1.7-3.1 % every 600 ms (docs/BENCHMARKS.md section 71). V8
 * samples as often either way: only the windows are longer. A held event loop is seen only
 * where a whole read finds no turn of it, so an idle thread (which a read costs little) or one
 * whose loop was held in the last read keeps the search's pace: a loop held for 3 s between
 * idle seconds was seen as one phase in 17 s read every 500 ms, as two every 200 ms.
 */
export const QUIET_INTERVAL_MS = 500;
/** a thread is busy for the quiet pace where its event loop was active this share of the last read */
const QUIET_BUSY = 0.5;
/**
 * A whole-program hypothesis's windows (oldest first) end in a phase: the latest holds, and
 * it is the first phase, the end of a dip, or the PHASE_START-th window in a row after a
 * phase ended (as phasesOf reports them). One window over the threshold after the phase ended
 * (a busy second on a loaded machine) decides no refinement from the stack samples since the
 * start: CI's Node 22 decided the async-wait demo's module then, with the start-up's CPU in
 * them, at 20.7 % against the 20 % threshold, 4 s after the phase had ended. Timer tests still
 * start on such a window (they measure their own window): kept from them too, the async-wait
 * demo's callers were never tested in one CI run on Node 26.
 */
export function inPhase(tests: readonly { verdict: boolean }[]): boolean {
  let i = tests.length;
  while (i > 0 && tests[i - 1].verdict) i--;
  const run = tests.length - i;
  const before = tests.slice(0, i);
  return run > 0 && (!before.some((t) => t.verdict) || !phaseEnded(before) || run >= PHASE_START);
}

/** Windows (oldest first) whose last PHASE_END were false: a phase, if there was one, is over. */
function phaseEnded(tests: readonly { verdict: boolean }[]): boolean {
  return tests.length >= PHASE_END && tests.slice(-PHASE_END).every((t) => !t.verdict);
}

/**
 * What testing a loop costs its thread, per share of the thread its function's own
 * code takes: with any point of a function switched on, each of its other points
 * (each trip of each loop, each call site) runs a pass-through. Measured (Node 22
 * and 24): windows of 11-22 % with cpu-bound's hashRecord (own code 54-59 %, three
 * call sites a trip) and 14-26 % with test/fixtures/hot-loop.js's score (97 %) on
 * Node 22. Under a limit below it a loop is not tested ('too costly'), as a
 * breakpoint's pinning is not: run alone, it held the cpu-bound demo's search
 * over its 5 % limit on average (5.5-7.0 %, three runs on Node 24).
 */
export const LOOP_GUARD = 0.4;

/** stack samples a module's share is judged from: V8's profiler takes 100 a second, interrupts 5 */
const samplesNeeded = (st: StackSamples) => (st.profiled ? 100 : 20);
/** V8's profiler's samples a second at the sampler's shortest interval (without a cost limit) */
const PROFILER_RATE = 1e6 / SAMPLE_INTERVAL_US;

/**
 * A share of few samples says little: an I/O-bound thread busy in 5 of 100 samples puts
 * one hit at 20 %. Within two standard errors (binomial, at the threshold) of it.
 */
const near = (n: { threshold: number }, hits: number, base: number): boolean =>
  Math.abs(hits / base - n.threshold) < 2 * Math.sqrt(n.threshold * (1 - n.threshold) / base);

/** Two tests' threads are the same, or one is of no one thread (undefined): their costs add up. */
const sameThread = (a: string | undefined, b: string | undefined): boolean => a === undefined || b === undefined || a === b;

/** The sample keys of a module's anonymous functions in `counts` (each `<module>/<anonymous>@<line>`). */
function anonymousOf(counts: ReadonlyMap<string, number>, module: string): string[] {
  const prefix = `${module}/<anonymous>@`;
  return [...counts.keys()].filter((k) => k.startsWith(prefix) && !k.includes('/', prefix.length));
}

type Fn = { module: string; line: number; function: string; thread: string; points: PointInfo[]; prepared: Prepared };
const fnOf = (r: Fn): Fn => ({ module: r.module, line: r.line, function: r.function, thread: r.thread, points: r.points, prepared: r.prepared });

/** A function's call sites by callee name: how many calls, the first one's line, and their inner calls. */
export function callSitesOf(points: readonly PointInfo[]): Map<string, { calls: number; line: number; inner: number }> {
  const out = new Map<string, { calls: number; line: number; inner: number }>();
  for (const p of points) {
    const name = callNameOf(p);
    if (!name) continue;
    const g = out.get(name) ?? { calls: 0, line: p.line, inner: 0 };
    g.calls++;
    out.set(name, g);
  }
  const innermost = innermostCalls(points);
  if (innermost === null) {
    for (const [name, g] of out) g.inner = points.filter((p) => pointMatches(`inner:${name}`, p, points)).length;
  } else {
    // a call is inner to the call it is innermost in (point-select's isInnerCall): one pass
    // (the index holds suspensions too: not calls)
    for (const [p, q] of innermost) {
      const name = q && p.kind === 'call' ? callNameOf(q) : null;
      const g = name ? out.get(name) : undefined;
      if (g) g.inner++;
    }
  }
  return out;
}

/** The callee name a point is a call site of (null: not a call, or a callee with no name). */
function callNameOf(p: PointInfo): string | null {
  return p.kind === 'call' && p.callee !== undefined ? calleeName(p.callee) : null;
}

/** The callee names of a function's call sites (callSitesOf's keys, without counting). */
function calleeNamesOf(points: readonly PointInfo[]): Set<string> {
  const out = new Set<string>();
  for (const p of points) {
    const name = callNameOf(p);
    if (name) out.add(name);
  }
  return out;
}

export type NodeState = 'unknown' | 'waiting' | 'testing' | 'true' | 'false' | 'too costly' | 'not testable';

export interface TestRecord { from: number; to: number; value: number; verdict: boolean }

export interface SearchNode {
  id: number;
  parent: number | null;
  hypothesis: string;
  /** '' is the whole program */
  focus: string;
  state: NodeState;
  /** the last test's value, a fraction of one thread's time (shareOf 'cpu': of its CPU time) */
  value?: number;
  /** 'cpu': the value is a share of the CPU time the thread got in the window, not of its wall time */
  shareOf?: 'cpu';
  threshold: number;
  /** the thread whose value decided (for a focus over several threads) */
  thread?: string;
  /** predicted cost of its test (s/s) when last considered */
  predictedCost?: number;
  /** seconds since the search started */
  tests: TestRecord[];
  /** the function's source (module:line) */
  source?: string;
  note?: string;
  /**
   * a function tested by a timer because a function of its module that calls it
   * held the stack samples (sample key): V8 may have inlined it there, and that
   * caller's samples hold its time
   */
  inlinedInto?: string;
}

export interface ConsultantOptions {
  /** the perturbation limit, a fraction of a thread's time (default 0.05; Infinity: none) */
  maxOverhead?: number;
  /** a fixed number of tests at once instead of (or beside) the cost limit */
  maxTests?: number;
  /** how long each test observes, seconds (default 1) */
  testSeconds?: number;
  /** thresholds by hypothesis name */
  thresholds?: Record<string, number>;
  /** only these hypotheses (default all) */
  hypotheses?: string[];
  /** when the search will be ended (ms since the epoch: a duration's end), where known */
  endsAt?: number;
}

interface Active {
  node: SearchNode;
  inst: MetricInstance;
  /** per-thread totals and time when the window started (after the first sample) */
  start?: { t: number; totals: Map<string, number> };
  startedAt: number;
  permanent: boolean;
  staticCost: number;
  /** over the limit by itself: runs alone, shortened (the debt it runs up pauses the search after it) */
  alone?: boolean;
  /** how long it observes (a test over the limit by itself is shortened) */
  seconds: number;
  /** the calls of the tested function (call site), counted for intrusion compensation */
  calls?: { inst: MetricInstance; start?: Map<string, number>; timings: number };
  /** the thread's CPU time (the whole-program test's instance): the value is a share of it */
  cpu?: { inst: MetricInstance; start?: Map<string, number> };
  /** the time the thread waited for a CPU (the hypothesis' waitMetric): taken off the window */
  wait?: { inst: MetricInstance; start?: Map<string, number> };
  /** the time its event loop was idle (the hypothesis' idleMetric): a wait inside it is not taken off */
  idle?: { inst: MetricInstance; start?: Map<string, number> };
}

export class PerformanceConsultant extends EventEmitter {
  readonly nodes: SearchNode[] = [];
  readonly limit: number;
  private readonly maxTests: number;
  private readonly testSeconds: number;
  private readonly thresholds: Map<string, number>;
  private readonly hyps: Hypothesis[];
  private readonly active: Active[] = [];
  private readonly t0 = Date.now();
  private busy = false;
  private stopped = false;
  /** observed over predicted cost of what was in place (reported; predictions use counted entry rates instead) */
  factor = 1;
  /** entries per second of functions counted by their tests ("<module>/<function>"): later predictions use them */
  private readonly rates = new Map<string, number>();
  private readonly known = (r: { module: string; function: string }) => this.rates.get(`${r.module}/${r.function}`);
  /**
   * The share of its thread's time a function's own code takes, from V8's
   * stack samples (what pinning it in the interpreter slows, cost/predict):
   * not the built-ins and natives it calls, which stay optimized. A function
   * inlined into its caller has its ticks there (Node 22's profiler gives them
   * to the caller), and once pinned it is inlined nowhere, so its callers in
   * its module, and the module's anonymous functions, are added to its share.
   * Interrupt samples miss small functions: not known then.
   */
  private selfShare(callersOf: (key: string) => Set<string> | undefined) {
    return (r: { module: string; function: string; thread: string }): number | undefined => {
      const st = this.session.stackSamples(r.thread);
      if (!st.profiled || st.samples < samplesNeeded(st)) return undefined;
      const own = (k: string) => st.own.get(k) ?? 0;
      const self = sampleKey(`${r.module}/${r.function}`);
      // its callers and the module's anonymous functions by key, itself by its line where its key is shared
      const keys = new Set([...callersOf(`${r.thread}\0${self}`) ?? [], ...anonymousOf(st.own, r.module)]);
      keys.delete(self);
      return [...keys].reduce((a, k) => a + own(k), this.samplesOf(st, 'own', `${r.module}/${r.function}`)) / st.samples;
    };
  }

  /**
   * Per module, "<thread>\0<module>/<name>" -> the functions of that module with a call
   * site naming it (sample keys), and the list it was made from
   */
  private readonly callers = new Map<string, { of: Fn[]; by: Map<string, Set<string>> }>();

  /** The functions of a module with a call site naming `<module>/<name>` in a thread (callersIn made it). */
  private callersOf(key: string): Set<string> | undefined {
    const rest = key.slice(key.indexOf('\0') + 1);
    return this.callers.get(rest.slice(0, rest.lastIndexOf('/')))?.by.get(key);
  }

  private async predict(n: SearchNode) {
    // the whole program's tests need no functions; a code node's its module's (functionsOf)
    const module = this.moduleOf(n);
    if (module === undefined) return this.manager.predict(this.metricOf(n), n.focus, { known: this.known });
    await this.callersIn(module);
    return this.manager.predict(this.metricOf(n), n.focus, { known: this.known, selfShare: this.selfShare((k) => this.callersOf(k)) });
  }

  /** The callers index of one module's functions (callersOf), made again when its list is. */
  private async callersIn(module: string): Promise<void> {
    const fns = await this.functionsOf(module);
    if (this.callers.get(module)?.of === fns) return;
    const by = new Map<string, Set<string>>();
    for (const f of fns) {
      for (const callee of calleeNamesOf(f.points)) {
        const k = `${f.thread}\0${f.module}/${callee}`;
        let set = by.get(k);
        if (!set) by.set(k, (set = new Set()));
        set.add(sampleKey(`${f.module}/${f.function}`));
      }
    }
    this.callers.set(module, { of: fns, by });
  }

  /** The module a code node is in (undefined: the node has no /Code part). */
  private moduleOf(n: SearchNode): string | undefined {
    for (let m: SearchNode | undefined = n; m; m = m.parent === null ? undefined : this.nodes[m.parent - 1]) {
      const level = this.level(m);
      if (level === undefined) return undefined;
      if (level === 'module') return codeOf(m.focus);
    }
    return undefined;
  }

  /** The functions of the module a node is in (every function where it is under no module node). */
  private functionsNear(n: SearchNode): Promise<Fn[]> {
    const module = this.moduleOf(n);
    return module === undefined ? this.functions() : this.functionsOf(module);
  }

  /** the session's time before the search, the tool's work in it (s of the busiest thread) and its share */
  beforeSearch?: { seconds: number; busiest: number; observed: number };
  /** from the last window to the end of the search (its tests taken out): its length, the tool's work in it (s, busiest thread), its share */
  afterSearch?: { seconds: number; busiest: number; observed: number };
  /** observed cost per window (fraction, the busiest thread), for the report */
  readonly costTrace: { t: number; observed: number; predicted: number; tests: number }[] = [];
  private costInst?: MetricInstance;
  /** each thread's waits for a CPU: the cost is a share of the rest of the window */
  private waitInst?: MetricInstance;
  private costStart?: { t: number; totals: Map<string, number>; ongoing: Map<string, number>; waits: Map<string, number> };
  private completeAt?: number;
  private cal?: Calibration;
  /** the calibration the search priced with (once it started) */
  get calibration(): Calibration | undefined { return this.cal; }
  /**
   * New tests a step may start: predictions from static frequencies can be
   * far off until observed cost has corrected them, so the number doubles
   * with each step that stays under the limit and starts again at 4 over it.
   */
  private ramp = 4;
  private startedSince = 0;
  /**
   * Per thread, cost over the limit not yet paid back (seconds of
   * instrumentation): each window adds (observed - limit) x its length; no test
   * starts in a thread while its debt is above 0, so over time each thread's
   * cost averages to at most the limit. The limit is of each thread's time: a
   * dear test in one worker holds back no test in another.
   */
  private readonly debt = new Map<string, number>();
  private readonly endsAt?: number;
  private fns?: { at: number; list: Fn[] };

  constructor(readonly manager: MetricManager, opts: ConsultantOptions = {}) {
    super();
    this.limit = opts.maxOverhead ?? 0.05;
    this.endsAt = opts.endsAt;
    this.maxTests = opts.maxTests ?? Infinity;
    this.testSeconds = opts.testSeconds ?? 1;
    this.thresholds = withThresholds({ instrumentation: Number.isFinite(this.limit) ? this.limit : 0.05, ...opts.thresholds });
    this.hyps = opts.hypotheses ? opts.hypotheses.map(hypothesis) : [...HYPOTHESES];
  }

  private get session(): Session { return this.manager.sessions[0]; }
  /** seconds since the search started */
  now(): number { return (Date.now() - this.t0) / 1000; }
  /** when the search's clock started (ms since the epoch): time 0 of its windows and phases */
  get startedAt(): number { return this.t0; }

  /** Enable the whole-program tests (they stay for the whole search) and the observed cost. */
  async start(): Promise<void> {
    this.cal = await this.manager.costCalibration();
    // the stack samples take at most half the limit (reading them costs by their depth, and each one
    // the thread's time: its calibrated high price); none: all of them
    // (under a limit, at the longest interval first: each restart of V8's profiler logs the program's code
    // again, a loaded server's requests lost meanwhile; see CpuSampler.shorter)
    await this.session.watchThreads({ stacks: true, samplingBudget: this.limit / 2, samplePriceNs: this.cal.stackSample[1], endsAt: this.endsAt, longFirst: Number.isFinite(this.limit) });
    this.costInst = await this.manager.enable('observed_cost');
    // before the search: what the tool's work in the session so far took of the busiest thread, over its time
    const seconds = this.session.countedSeconds;
    const perThread = this.costInst.threadTotalsBefore();
    const before = Math.max(0, ...perThread.values());
    if (seconds > 0) this.beforeSearch = { seconds, busiest: before, observed: Math.min(1, before / seconds) };
    // the limit is of the whole session: what that work took of a thread over the limit is its first debt,
    // paid back by a pause in its testing as a window's is (on the loaded server the attach took 0.2-0.5 s
    // of its main thread in 0.5-1.2 s, and a search that began testing at once held it a point or two under
    // its twin over a 30-s session beyond the limit; bench/http.ts against runs with no tool)
    if (seconds > 0 && Number.isFinite(this.limit)) for (const [k, v] of perThread) this.debt.set(k, Math.max(0, v - this.limit * seconds));
    // the cost is judged against the time each thread could run (agent/runnable-time.ts)
    this.waitInst = await this.manager.enable('cpu_wait').catch(() => undefined);
    for (const h of this.hyps) {
      const node = this.add(null, h, '');
      await this.begin(node, true);
    }
    this.session.on('sample', this.onSample);
    this.session.on('thread', this.onThread);
    // listed while the first window runs: its refinement wants it
    this.programNames().catch(() => undefined);
  }

  /** The search is complete: every node under a true node has been decided. */
  get complete(): boolean {
    return this.completeAt !== undefined;
  }

  /** Seconds from the start to completion (undefined while searching). */
  get searchSeconds(): number | undefined { return this.completeAt; }

  private readonly onSample = () => { void this.tick(); };
  /** A thread that started (or was reached) after a whole-program node was refined: the node gains it as a child. */
  private readonly onThread = () => {
    for (const n of this.nodes) if (n.parent === null && n.state === 'true' && this.refined.has(n.id)) this.refined.delete(n.id);
  };

  /** End the search: tests not yet decided are decided on what they measured; every test's code goes. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.session.off('sample', this.onSample);
    this.session.off('thread', this.onThread);
    while (this.busy) await new Promise((r) => setImmediate(r));
    // what was measured so far by tests not yet decided stays in the history
    for (const a of [...this.active]) {
      if (!a.permanent) this.conclude(a, true);
      await this.end(a).catch(() => undefined);
    }
    await this.observeEnd();
    if (this.costInst) await this.manager.disable(this.costInst).catch(() => undefined);
    if (this.waitInst) await this.manager.disable(this.waitInst).catch(() => undefined);
  }

  /**
   * The stretch no window covers at the search's end: the tests' last running and their
   * taking out (slot switches, LiveEdits undone, the deoptimizations they cause are charged
   * by the runtime as they happen). One more sample reads what the runtime charged.
   */
  private async observeEnd(): Promise<void> {
    const prev = this.costStart;
    if (!this.costInst || !prev) return;
    await this.session.sample().catch(() => undefined);
    const seconds = this.now() - prev.t;
    if (seconds <= 0) return;
    let busiest = 0;
    for (const [k, v] of this.costInst.threadTotals()) busiest = Math.max(busiest, v - (prev.totals.get(k) ?? 0));
    this.afterSearch = { seconds, busiest, observed: Math.min(1, busiest / seconds) };
  }

  private add(parent: SearchNode | null, h: Hypothesis, focus: string, source?: string): SearchNode {
    const node: SearchNode = { id: this.nodes.length + 1, parent: parent?.id ?? null, hypothesis: h.name, focus, state: 'unknown', threshold: this.thresholds.get(h.name)!, tests: [], source };
    this.nodes.push(node);
    this.emit('node', node);
    return node;
  }

  private hyp(node: SearchNode): Hypothesis { return this.hyps.find((h) => h.name === node.hypothesis)!; }
  private metricOf(node: SearchNode): string {
    const h = this.hyp(node);
    return codeOf(node.focus) !== undefined ? h.codeMetric! : h.metric;
  }

  private async begin(node: SearchNode, permanent = false): Promise<void> {
    const metric = this.metricOf(node);
    const staticCost = (await this.predict(node)).cost;
    try {
      const notes = this.session.notes.length;
      const inst = await this.manager.enable(metric, node.focus);
      // snippets that found no point to go to (e.g. await points of a script LiveEdit refused) measure nothing
      const probes = inst.perSession.flatMap((ps) => ps.probes);
      if (probes.length && probes.every((p) => p.placed === 0)) {
        await this.manager.disable(inst);
        node.state = 'not testable';
        node.note = `no point of it could be instrumented${this.session.notes.length > notes ? `: ${this.session.notes[this.session.notes.length - 1]}` : ''}`;
        this.emit('node', node);
        return;
      }
      const h = this.hyp(node);
      const level = this.level(node);
      const fn = h.compensate && (level === 'function' || level === 'callsite' || level === 'loop');
      // a loop's timer runs once per entry into the loop, not per trip
      const counter = level === 'loop' ? 'loop_entries' : 'procedure_calls';
      const calls = fn ? { inst: await this.manager.enable(counter, node.focus), timings: level === 'callsite' ? await this.timingsPerCall(node) : 1 } : undefined;
      const top = h.codeShareOfCpu && level ? this.active.find((a) => a.permanent && a.node === this.topOf(node)) : undefined;
      const cpu = top ? { inst: top.inst } : undefined;
      // the whole program only: among threads, the one that got the CPU is the bottleneck, not those
      // that waited for it (on an overloaded machine every runnable thread waits)
      const wait = h.waitMetric && node.parent === null ? { inst: await this.manager.enable(h.waitMetric, node.focus) } : undefined;
      const idle = wait && h.idleMetric ? { inst: await this.manager.enable(h.idleMetric, node.focus) } : undefined;
      node.state = 'testing';
      node.note = node.inlinedInto ? `tested by a timer: ${node.inlinedInto}, which calls it, holds the stack samples (V8 may have inlined it there)` : undefined;
      if (cpu) node.shareOf = 'cpu';
      this.active.push({ node, inst, startedAt: this.now(), permanent, staticCost, seconds: this.testSeconds, calls, cpu, wait, idle });
      this.emit('node', node);
    } catch (e) {
      node.state = 'not testable';
      node.note = (e as Error).message;
      this.emit('node', node);
    }
  }

  /** Per-thread fractions of a test's window: "<pid>/<thread>" → value. */
  private fractions(a: Active, t: number): Map<string, number> {
    const out = new Map<string, number>();
    const dt = t - a.start!.t;
    const calls = a.calls?.inst.threadTotals();
    const each = a.calls && this.cal ? a.calls.timings * this.cal.primitive[this.hyp(a.node).compensate!][1] / 2 / 1e9 : 0;
    const cpu = a.cpu?.inst.threadTotals();
    const wait = a.wait?.inst.threadTotals();
    const idle = a.idle?.inst.threadTotals();
    // a thread's growth of a total over the window
    const since = (now: Map<string, number> | undefined, from: Map<string, number> | undefined, k: string) => (now?.get(k) ?? 0) - (from?.get(k) ?? 0);
    for (const [k, total] of a.inst.threadTotals()) {
      const own = total - (a.start!.totals.get(k) ?? 0);
      // the time it waited for a CPU while its event loop was not idle (see Hypothesis.waitMetric)
      let waited = since(wait, a.wait?.start, k);
      if (idle && wait) waited = Math.min(waited, Math.max(0, dt - since(idle, a.idle!.start, k) - own));
      const n = since(calls, a.calls?.start, k);
      // a share of the CPU time the thread got; of the window's wall time if it got none, less the
      // time it waited for a CPU (it would have run that much sooner on a machine of its own)
      const got = since(cpu, a.cpu?.start, k);
      const per = cpu && got > 1e-3 * dt ? got : dt - waited;
      out.set(k, per > 0 ? Math.min(cpu || wait ? 1 : Infinity, Math.max(0, own - n * each) / per) : 0);
    }
    return out;
  }

  /** Which level of /Code a node is at (undefined: none). */
  private level(n: SearchNode): 'module' | 'function' | 'callsite' | 'loop' | undefined {
    return codeLevel(n.focus, n.parent === null ? undefined : this.nodes[n.parent - 1].focus);
  }

  private isFunction(n: SearchNode): boolean { return this.level(n) === 'function'; }

  /**
   * A call site's timer stops and starts again around each call its receiver
   * and arguments make: timings per call, for intrusion compensation.
   */
  private async timingsPerCall(n: SearchNode): Promise<number> {
    const cs = parseCallSite(`/Code/${codeOf(n.focus)!}`)!;
    const fn = (await this.functionsNear(n)).find((f) => `/Code/${f.module}/${f.function}` === cs.fn);
    const g = fn && callSitesOf(fn.points).get(cs.callee);
    return g ? 1 + g.inner / g.calls : 1;
  }

  private conclude(a: Active, partial = false): void {
    const t = this.now();
    if (!a.start || t - a.start.t <= 0) { a.node.state = 'unknown'; a.node.note = 'not measured long enough'; return; }
    const fr = this.fractions(a, t);
    if (a.calls) {
      // the function's entry rate, counted: its later predictions use it
      const code = codeOf(a.node.focus)!;
      let n = 0;
      for (const [k, v] of a.calls.inst.threadTotals()) n += v - (a.calls.start?.get(k) ?? 0);
      this.rates.set(code, n / (t - a.start.t));
    }
    const thread = threadOf(a.node.focus);
    let value = 0, at: string | undefined;
    for (const [k, v] of fr) if ((!thread || k === thread) && (at === undefined || v > value)) { value = v; at = k; }
    const verdict = value >= a.node.threshold;
    a.node.tests.push({ from: a.start.t, to: t, value, verdict });
    a.node.value = value;
    a.node.thread = at;
    a.node.state = verdict ? 'true' : 'false';
    if (partial) a.node.note = 'decided on a shortened test (the search ended)';
    this.openWindow(a, t);
    this.emit('node', a.node);
  }

  /** A test's window opens: the totals it is measured from. */
  private openWindow(a: Active, t: number): void {
    a.start = { t, totals: a.inst.threadTotals() };
    if (a.calls) a.calls.start = a.calls.inst.threadTotals();
    if (a.cpu) a.cpu.start = a.cpu.inst.threadTotals();
    if (a.wait) a.wait.start = a.wait.inst.threadTotals();
    if (a.idle) a.idle.start = a.idle.inst.threadTotals();
  }

  /** One step after each sample: judge finished tests, refine, keep the cost under the limit, start tests. */
  private async tick(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      const t = this.now();
      for (const a of this.active) {
        // a test's window opens a settling time after its code went in: V8 re-optimizes
        // code whose handlers changed, which would count into a short window
        if (a.start || (!a.permanent && t - a.startedAt < SETTLE)) continue;
        this.openWindow(a, t);
      }
      const observed = this.observeCost(t);
      for (const a of [...this.active]) {
        if (!a.start || a.start.t + a.seconds > t) continue;
        this.conclude(a);
        if (a.permanent) {
          // a whole-program node is judged every window; a new true phase searches again
          // (after a dip of fewer windows the phase goes on: its search resumes where it was)
          if (this.phaseBegins(a.node)) this.refresh(a.node);
          continue;
        }
        await this.end(a);
        if (a.alone) a.node.note = `tested alone, over the limit by itself; the search paused after it to pay the cost back`;
      }
      for (const n of this.nodes) if (n.state === 'true' && !this.refined.has(n.id)) await this.refine(n);
      if (observed !== undefined) await this.regulate(observed);
      await this.admit();
      // a refinement is still wanted while its whole-program hypothesis holds, or held
      // until a moment ago (a short dip suspends the search of its subtree, it does not end it)
      const pending = this.nodes.some((n) => (['unknown', 'waiting', 'testing'].includes(n.state) || (n.state === 'true' && !this.refined.has(n.id))) && n.parent !== null && !this.phaseOver(this.topOf(n)));
      // and a hypothesis false from the start has been watched for as long as a phase takes to end
      const judged = this.nodes.filter((n) => n.parent === null).every((n) => n.tests.length >= PHASE_END || n.state === 'true' || n.state === 'not testable');
      if (!pending && judged && this.completeAt === undefined) { this.completeAt = t; this.emit('complete'); }
      this.pace(!pending && judged, t);
      this.emit('tick');
    } catch (e) {
      // a target that exits mid-search ends it through its exit, the session's signal (the
      // search's duration) through the stop that follows; what was found stays
      if (!this.stopped && !(e instanceof TargetGoneError) && !(e instanceof Interrupted)) this.emit('error', e);
    } finally {
      this.busy = false;
    }
  }

  /** the session's interval while the search ran, where the quiet pace (QUIET_INTERVAL_MS) replaced it */
  private searchIntervalMs: number | null = null;
  /** each thread's event loop active, idle and held time (s) at the last tick, for the pace */
  private readonly loopSeen = new Map<string, number[]>();
  private quietTimes = 0;

  /**
   * Nothing left to test (`settled`) and every thread busy, its loop not held: the threads are
   * read every QUIET_INTERVAL_MS; else (the search resumes, a thread idles or its loop is held)
   * at the search's pace again. Only the session's own timer is paced: a caller that samples by
   * itself keeps its pace.
   */
  private pace(settled: boolean, t: number): void {
    const s = this.session;
    const now = s.samplingIntervalMs;
    const busy = this.loopsBusy();
    if (now === null) return;
    if (settled && busy && this.searchIntervalMs === null && now < QUIET_INTERVAL_MS) {
      this.searchIntervalMs = now;
      s.startSampling(QUIET_INTERVAL_MS);
      if (this.quietTimes++ === 0) s.notes.push(`stack samples: read every ${QUIET_INTERVAL_MS} ms from ${t.toFixed(1)} s, nothing being left to test and every thread busy (every ${now} ms while the search tested): each read costs the thread`);
    } else if ((!settled || !busy) && this.searchIntervalMs !== null) {
      const was = this.searchIntervalMs;
      this.searchIntervalMs = null;
      if (now !== QUIET_INTERVAL_MS) return;
      s.startSampling(was);
      if (this.quietTimes === 1) s.notes.push(`stack samples: read every ${was} ms again from ${t.toFixed(1)} s (${settled ? 'a thread idled or its event loop was held' : 'the search resumed'}), and every ${QUIET_INTERVAL_MS} ms whenever nothing is left to test and every thread is busy`);
    }
  }

  /** Every thread's event loop was active for QUIET_BUSY of the time since the last tick, and no read found it held. */
  private loopsBusy(): boolean {
    const s = this.session;
    let busy = true;
    for (const th of s.threadIds) {
      const v = ['elu_active', 'elu_idle', 'blocked'].map((n) => s.value(THREAD_SERIES + n, th) ?? NaN);
      const was = this.loopSeen.get(th);
      this.loopSeen.set(th, v);
      if (!was || v.some(Number.isNaN)) { busy = false; continue; }
      const [active, idle, held] = v.map((x, k) => x - was[k]);
      if (held > 0 || !(active + idle > 0) || active / (active + idle) < QUIET_BUSY) busy = false;
    }
    return busy;
  }

  private topOf(n: SearchNode): SearchNode {
    let p = n;
    while (p.parent !== null) p = this.nodes[p.parent - 1];
    return p;
  }

  /** A whole-program hypothesis that had a phase holds again, for the PHASE_START-th window in a row after that phase ended. */
  private phaseBegins(top: SearchNode): boolean {
    const before = top.tests.slice(0, -PHASE_START);
    return top.tests.slice(-PHASE_START).every((t) => t.verdict) && top.tests.length > PHASE_START &&
      before.some((t) => t.verdict) && this.phaseOver({ ...top, tests: before });
  }

  /** A whole-program hypothesis false for the last PHASE_END windows: its phase is over. */
  private phaseOver(top: SearchNode): boolean {
    return phaseEnded(top.tests);
  }

  /** Is the node's top-level hypothesis true now (its refinements are wanted)? */
  private live(n: SearchNode): boolean {
    let p: SearchNode = n;
    while (p.parent !== null) {
      const up = this.nodes[p.parent - 1];
      if (up.state !== 'true') return false;
      p = up;
    }
    return true;
  }

  private readonly refined = new Set<number>();

  /**
   * A top-level node turned true again: its earlier refinements are tested again. One
   * with none (the instrumentation's own cost, flickering about its threshold under a
   * limit of the same size) leaves the search as complete as it was.
   */
  private refresh(top: SearchNode): void {
    const under = new Set([top.id]);
    let again = false;
    for (const n of this.nodes) {
      if (n.parent === null || !under.has(n.parent)) continue;
      under.add(n.id);
      if (n.state === 'true' || n.state === 'false') { n.state = 'unknown'; this.refined.delete(n.id); again = true; }
    }
    if (again) this.completeAt = undefined;
  }

  /** Children of a true node: its threads, else modules, else functions. */
  private async refine(n: SearchNode): Promise<void> {
    this.refined.add(n.id);
    const h = this.hyp(n);
    const parts = splitFocus(n.focus);
    const thread = parts.find((p) => p.startsWith('/Thread/'));
    const code = parts.find((p) => p.startsWith('/Code/'));
    const s = this.session;
    const fresh = this.freshChild(n);
    if (!thread && !code && s.threadIds.length > 1) {
      for (const t of s.threadIds) { const f = `/Thread/${s.pid}/${t}`; if (fresh(f)) this.add(n, h, f); }
      return;
    }
    if (!h.codeMetric) return;
    const label = threadLabel(n.focus);
    const join = (c: string) => [c, thread].filter(Boolean).join(',');
    if (!code) {
      // the modules by name alone: their functions are listed for the modules that hold
      const modules = (await s.modules()).filter((r) => r.thread === label).map((r) => r.module);
      for (const m of [...new Set(modules)].sort()) { const f = join(`/Code/${m}`); if (fresh(f)) this.add(n, h, f, m); }
    } else if (this.isFunction(n)) {
      const fns = (await this.functionsNear(n)).filter((r) => r.thread === label);
      const program = new Set((await this.programNames()).filter((r) => r.thread === label).map((r) => r.function.replace(/^.*\./, '')));
      await this.refineInside(n, fns, program, join);
    } else if (this.level(n) === 'module') {
      const fns = (await this.functionsOf(code.slice(6))).filter((x) => x.thread === label);
      this.noteSharedKeys(fns);
      for (const r of fns) {
        const f = join(`/Code/${r.module}/${r.function}`);
        if (fresh(f)) this.add(n, h, f, `${r.module}:${r.line}`);
      }
    }
  }

  /**
   * "<module>/<function>" -> its start line, for the functions whose stack samples'
   * key (sampleKey) another function of their module has: `A.parse` and `B.parse`
   * are both `parse` in a frame, and read each other's samples unless told apart
   * by line (StackSamples.byLine).
   */
  private readonly sharedKeys = new Map<string, number>();

  /** One module's functions (of one thread): note those that share a sample key (sharedKeys). */
  private noteSharedKeys(fns: Fn[]): void {
    const byKey = new Map<string, Fn[]>();
    for (const f of fns) {
      const k = sampleKey(`${f.module}/${f.function}`);
      const g = byKey.get(k);
      if (g) g.push(f); else byKey.set(k, [f]);
    }
    for (const g of byKey.values()) if (g.length > 1) for (const f of g) this.sharedKeys.set(`${f.module}/${f.function}`, f.line);
  }

  /** @internal A function's samples in one of a thread's counts, by its start line where its key is shared (sharedKeys). */
  samplesOf(st: StackSamples, which: 'hits' | 'leaves' | 'own', code: string): number {
    return sampledAt(st, which, sampleKey(code), this.sharedKeys.get(code));
  }

  /**
   * Whether a focus has no child node under n yet, counting it as one from then on. A
   * module's children can be its 21,688 functions: one pass over the nodes, then a set.
   */
  private freshChild(n: SearchNode): (focus: string) => boolean {
    const children = new Set<string>();
    for (const x of this.nodes) if (x.parent === n.id) children.add(x.focus);
    return (focus) => !children.has(focus) && !!children.add(focus);
  }

  /**
   * Inside a true function: its call sites and its loops, only for a hypothesis
   * that holds on the stack, whose code metric can be placed there, and only
   * when the function's own code was running (the innermost of the program's
   * frames) in at least half the threshold's share of stack samples: the time
   * of its callees that are functions of the program is theirs and is tested at
   * them. So the call sites tested are those of callees the search has no node
   * for (Node's built-ins, native code), and a loop tells on which lines the
   * function's own time goes (loops have slots only where the script was
   * prepared at load).
   */
  /** program: the short names of the thread's functions (a call to one is tested at its own node) */
  private async refineInside(n: SearchNode, fns: Fn[], program: Set<string>, join: (c: string) => string): Promise<void> {
    const h = this.hyp(n);
    const lib = this.manager.library;
    const placeable = (at: string) => lib.metric(h.codeMetric!).constraints.some((c) => lib.constraints.get(c.name)?.hierarchy === at);
    const atCalls = placeable('/Code/*/*'), atLoops = placeable('/Code/*/loop@*');
    if (!h.onStack || (!atCalls && !atLoops)) return;
    const st = this.session.stackSamples(threadLabel(n.focus));
    // too few samples to judge yet: asked again at the next step
    if (st.samples < samplesNeeded(st)) { this.refined.delete(n.id); return; }
    const code = codeOf(n.focus)!;
    const self = this.samplesOf(st, 'leaves', code) / busySamples(st);
    if (self < n.threshold / 2) return;
    const fn = fns.find((f) => `${f.module}/${f.function}` === code);
    if (!fn) return;
    const fresh = this.freshChild(n);
    const add = (child: string, line: number): SearchNode | undefined => {
      const f = join(`/Code/${code}/${child}`);
      if (fresh(f)) return this.add(n, h, f, `${fn.module}:${line}`);
    };
    // Function.prototype.call and apply run a function of the program (tested at its own node)
    const tested = (callee: string) => program.has(callee) || callee === 'call' || callee === 'apply';
    if (atCalls) for (const [callee, g] of [...callSitesOf(fn.points)].sort(([a], [b]) => a.localeCompare(b))) if (!tested(callee)) add(`${callee}()`, g.line);
    if (!atLoops || fn.prepared !== 'load') return;
    // a loop has no stack samples of its own: its test switches every point of the function on (see LOOP_GUARD)
    const guard = LOOP_GUARD * self;
    for (const p of fn.points) {
      const loop = p.kind === 'loop' ? add(loopName(p, fn.points), p.line) : undefined;
      if (!loop || guard <= this.limit) continue;
      loop.state = 'too costly';
      loop.note = `a loop's test switches on every point of ${code}, which runs in ${(100 * self).toFixed(0)}% of the thread's samples: ` +
        `about ${(100 * guard).toFixed(0)}% of the thread, over the ${(100 * this.limit).toFixed(1)}% limit`;
      loop.predictedCost = guard;
      this.emit('node', loop);
    }
  }

  /** Stack samples of a node's thread: how many, and in how many its function (module: "<module>/") was. */
  private sampled(n: SearchNode): { samples: number; hits: number; thread: string } {
    const label = threadLabel(n.focus);
    const code = codeOf(n.focus)!;
    const st = this.session.stackSamples(label);
    return { samples: st.samples, hits: this.isFunction(n) ? this.samplesOf(st, 'hits', code) : st.hits.get(`${code}/`) ?? 0, thread: `${this.session.pid}/${label}` };
  }

  /**
   * For a hypothesis that holds only where its code is on the stack, the
   * runtime's stack samples decide a module by the share of samples it was on
   * the stack in: timers in every function of a large module would cost far
   * over any limit, and its functions are measured one by one anyway.
   * Where V8's sampling profiler took them (CpuSampler: unbiased, it samples
   * by signal), they decide a function's CPU-time share too: no code goes
   * into the program for it, no LiveEdit, no breakpoint on a hot path. Its
   * call sites out of the program (Node's built-ins it calls) by callBySamples.
   */
  private bySamples(n: SearchNode): 'wait' | 'test' | 'decided' {
    const h = this.hyp(n);
    if (!h.onStack) return 'test';
    const level = this.level(n);
    const label = threadLabel(n.focus);
    const st = this.session.stackSamples(label);
    // interrupt samples miss small functions (taken only at function entries and
    // loop back edges): they only order the functions' timer tests
    const profiledCpu = h.codeShareOfCpu && st.profiled;
    // decided from the samples since the start only while the hypothesis is in a phase (see inPhase)
    const top = this.topOf(n);
    const now = !top.tests.length || inPhase(top.tests);
    if (level === 'callsite' && profiledCpu) return now ? this.callBySamples(n, st) : 'wait';
    if (level !== 'module' && !(level === 'function' && profiledCpu)) return 'test';
    if (!now) return 'wait';
    if (st.samples < samplesNeeded(st)) return 'wait';
    const code = codeOf(n.focus)!;
    const hits = level === 'function' ? this.samplesOf(st, 'hits', code) : st.hits.get(`${code}/`) ?? 0;
    // a share of the samples that found the thread busy, as a timer test's share of the CPU time it got
    const ofCpu = h.codeShareOfCpu && st.profiled && st.samples > st.idle;
    const base = ofCpu ? busySamples(st) : st.samples;
    // V8 gives the ticks of a function inlined into code optimized before the profiler
    // started (or while it runs) to its caller (the worker-imbalance demo's crunch, into the message callback
    // that calls it, in the first seconds). Where a function never seen in the samples has
    // a caller in its module (a call site naming it) whose own code holds a threshold's
    // share, they cannot say which of the two holds it, and a timer does (cheap if it is
    // seldom called). A function seen in the samples is decided by them: esprima's
    // nextToken holds the threshold, and timers on the small functions it calls (each
    // sampled, under it) ran the search under the limit 125-180 s instead of ~4 s.
    // A few samples of its own do not clear it: the ticks from before V8 inlined it
    // (CI's Node 22: crunch decided false, its callback reported in its place), nor
    // do those from after a LiveEdit of its script threw the caller's inlined copy away
    // (a timer test of crunch begun, then taken out: crunch decided from its samples at
    // 20%, the callback's 60% from before ranked first; 2 of 3 CIs): where the caller holds
    // more of them than the function itself, a timer tells.
    if (level === 'function') {
      const share = hits / base;
      const key = sampleKey(code);
      const callers = this.callersOf(`${label}\0${code.slice(0, code.lastIndexOf('/'))}/${key.slice(key.lastIndexOf('/') + 1)}`);
      // a callback (an anonymous function) only: where a named function holds it (esprima's scanner
      // methods over isStrictModeReservedWord) a CPU timer around a tiny callee it had inlined costs
      // more than the callee's own time, and read it over the threshold (1 of 3 bench runs)
      const holds = (k: string) => { const held = (st.leaves.get(k) ?? 0) / base; return held >= n.threshold && held > share; };
      const holder = [...callers ?? []].find((k) => k !== key && /\/<anonymous>@\d+$/.test(k) && holds(k));
      if (holder) {
        n.inlinedInto = holder;
        return 'test';
      }
    }
    // decided once the share is clear of the threshold, or at five times the samples needed, whatever it is then
    if (near(n, hits, base) && !this.enoughNear(st)) return 'wait';
    this.decide(n, hits / base, !!ofCpu, `decided from ${base} stack samples${ofCpu ? ' of the busy thread' : ''} (on the stack in ${hits})`);
    return 'decided';
  }

  /**
   * A share near its threshold waits for five times the samples needed, or where V8
   * samples less often than without a limit (reading the samples costs: 25 a second at
   * 40 ms), for as long as those take without one. A search under the limit is then no
   * longer (the compiler's took 13.7-14.4 s, against 9.3 s without one, waiting for 500
   * samples at 40 ms), its decisions near a threshold from fewer samples (the note says how many).
   */
  private enoughNear(st: StackSamples): boolean {
    const wanted = 5 * samplesNeeded(st);
    return st.samples >= wanted || (st.profiled && this.now() >= wanted / PROFILER_RATE);
  }

  /** A node decided by its share of stack samples, no test run. */
  private decide(n: SearchNode, value: number, ofCpu: boolean, note: string): void {
    n.value = value;
    n.thread = `${this.session.pid}/${threadLabel(n.focus)}`;
    if (ofCpu) n.shareOf = 'cpu';
    n.tests.push({ from: 0, to: this.now(), value, verdict: value >= n.threshold });
    n.state = value >= n.threshold ? 'true' : 'false';
    n.note = note;
    // a function first sent to a timer test (its caller held the samples) whose own samples decided it
    // before the test started: the samples are its own, nothing of its caller's is its
    delete n.inlinedInto;
    this.emit('node', n);
  }

  /**
   * A call site out of the program (a built-in: `createHash()`) by V8's stack
   * samples: those in which the frame just inside its function's is Node's code
   * of the callee's name are in the call (on the cpu-bound demo each timer around
   * such a call took up to 93% of the thread, and the search under a limit paused
   * to pay it back). A share of half the threshold or more is decided by them
   * (near the threshold, once there are enough). Under it, the samples may
   * have missed some of the call: a function inlined into code optimized before
   * the profiler started has no frame, and its ticks go to the function it is in.
   * So the share is bounded from above by the call's samples under the function
   * and under every caller of it, plus their own code's samples; clearly under
   * the threshold so, it does not hold; else timers decide.
   */
  private callBySamples(n: SearchNode, st: StackSamples): 'wait' | 'test' | 'decided' {
    if (st.samples < samplesNeeded(st)) return 'wait';
    const cs = parseCallSite(`/Code/${codeOf(n.focus)!}`)!;
    const base = busySamples(st);
    const fn = sampleKey(cs.fn.slice(6));
    const hits = st.calls.get(`${fn}\0${cs.callee}`) ?? 0;
    const enough = this.enoughNear(st);
    // A call the samples see in half the threshold's share or more (an inlined one has no frame)
    // is measured by them, near the threshold after more samples: a timer around a call about as
    // short as its clock cannot (CI's Node 22: createHash in 18-25 % of the samples, its timer
    // read 1-2 %, with a thread-clock read of 1.6 µs and a call shorter than that)
    if (near(n, hits, base) && !enough) return 'wait';
    if (hits / base >= n.threshold / 2) {
      this.decide(n, hits / base, true, `decided from ${base} stack samples of the busy thread (in the call in ${hits})`);
      return 'decided';
    }
    const around = [fn, ...[...st.above].filter(([, inner]) => inner.has(fn)).map(([outer]) => outer)];
    const bound = around.reduce((a, k) => a + (st.calls.get(`${k}\0${cs.callee}`) ?? 0) + (st.own.get(k) ?? 0), 0);
    if (bound / base >= n.threshold || near(n, bound, base)) return 'test';
    this.decide(n, hits / base, true, `decided from ${base} stack samples of the busy thread (in the call in ${hits}; at most ${bound} with its callers' and their own code's)`);
    return 'decided';
  }

  /** The program's functions (not Node's own), fetched at most once a second (code keeps loading); one fetch at a time. */
  private functions(): Promise<Fn[]> {
    const t = this.now();
    if (this.fns && t - this.fns.at <= 1) return Promise.resolve(this.fns.list);
    this.listing ??= this.session.resources('/Code/**').then((all) => {
      const list = all.filter((r) => !r.module.startsWith('node:')).map(fnOf);
      this.fns = { at: t, list };
      return list;
    }).finally(() => { this.listing = undefined; });
    return this.listing;
  }

  /** The program's functions by name, without their points (see Session.functionNames), fetched at most once a second; one fetch at a time. */
  private programNames(): Promise<{ module: string; function: string; thread: string }[]> {
    const t = this.now();
    if (this.names && t - this.names.at <= 1) return Promise.resolve(this.names.list);
    this.naming ??= this.session.functionNames().then((list) => {
      this.names = { at: t, list };
      return list;
    }).finally(() => { this.naming = undefined; });
    return this.naming;
  }
  private names?: { at: number; list: { module: string; function: string; thread: string }[] };
  private naming?: Promise<{ module: string; function: string; thread: string }[]>;

  /**
   * One module's functions, as functions() lists them (from its list where that is fresh):
   * listing every function parses every script loaded before the agent (2.7 s on the Fastify
   * server), one module's only its own (54-87 ms).
   */
  private functionsOf(module: string): Promise<Fn[]> {
    const t = this.now();
    const had = this.byModule.get(module);
    if (had && t - had.at <= 1) return had.list;
    // a glob's wildcards in the name: the module is found in the whole list
    const whole = (this.fns && t - this.fns.at <= 1) || /[*?]/.test(module);
    const list = whole ? this.functions().then((l) => l.filter((f) => f.module === module))
      : this.session.resources(`/Code/${module}/*`).then((all) => all.filter((r) => r.module === module).map(fnOf));
    this.byModule.set(module, { at: t, list });
    list.catch(() => { if (this.byModule.get(module)?.list === list) this.byModule.delete(module); });
    return list;
  }
  private readonly byModule = new Map<string, { at: number; list: Promise<Fn[]> }>();
  private listing?: Promise<Fn[]>;
  /** the last window of observed cost: when it opened, and the ongoing cost each thread saw in it (see observeCost) */
  private lastWindow?: { from: number; perThread: Map<string, number> };

  /**
   * What the running tests cost the thread a new test goes to (all threads:
   * the busiest). The limit is per thread, so tests in different threads do not
   * add up. What runs is priced by what it was seen to cost in the last window
   * (the cost-system paper: observed cost plus the new request's predicted cost),
   * what is newer than that window by its prediction.
   */
  private committedOn(thread: string | undefined): number {
    const w = this.lastWindow;
    const busiest = w ? Math.max(0, ...w.perThread.values()) : 0;
    let c = w ? (thread === undefined ? busiest : w.perThread.get(thread) ?? busiest) : 0;
    for (const a of this.active) {
      const on = threadOf(a.node.focus);
      if ((w && a.startedAt <= w.from) || (thread !== undefined && on !== undefined && on !== thread)) continue;
      c += a.staticCost;
    }
    return c;
  }

  /**
   * The observed cost over the last window (busiest thread), and the correction of
   * predictions. The debt counts all of it; what the running tests go on costing is
   * judged without the one-off work (ONE_OFF_CLASSES): a LiveEdit that placed or removed
   * a test took 14-28% of a 0.6 s window in the worker demo's busy thread, and the newest
   * test, whatever it cost, was taken out for it, to be placed again (two more LiveEdits)
   * after the pause. Returns the busiest thread's ongoing cost.
   */
  private observeCost(t: number): number | undefined {
    if (!this.costInst) return undefined;
    const totals = this.costInst.threadTotals();
    const ongoing = this.costInst.threadTotals({ ongoing: true });
    const waits = this.waitInst?.threadTotals() ?? new Map<string, number>();
    const prev = this.costStart;
    if (!prev) { this.costStart = { t, totals, ongoing, waits }; return undefined; }
    if (t - prev.t < Math.min(0.5, this.testSeconds)) return undefined;
    const dt = t - prev.t;
    let observed = 0, running = 0;
    const perThread = new Map<string, number>();
    for (const [k, v] of totals) {
      const ran = runnableTime(dt, (waits.get(k) ?? 0) - (prev.waits.get(k) ?? 0));
      const x = (v - (prev.totals.get(k) ?? 0)) / ran;
      const y = ((ongoing.get(k) ?? 0) - (prev.ongoing.get(k) ?? 0)) / ran;
      if (Number.isFinite(this.limit)) this.debt.set(k, Math.max(0, (this.debt.get(k) ?? 0) + (x - this.limit) * ran));
      perThread.set(k, y);
      observed = Math.max(observed, x);
      running = Math.max(running, y);
    }
    this.lastWindow = { from: prev.t, perThread };
    this.costStart = { t, totals, ongoing, waits };
    const predicted = this.active.reduce((x, a) => x + a.staticCost, 0);
    if (predicted > 1e-6 && running > 0) {
      const ratio = Math.min(1e4, Math.max(1e-2, running / predicted));
      this.factor = Math.sqrt(this.factor * ratio);
    }
    this.costTrace.push({ t, observed, predicted, tests: this.active.filter((a) => !a.permanent).length });
    return running;
  }

  /**
   * Over the limit: the newest test goes and waits to be tried again. A test
   * over the limit by itself stays (it cannot be made cheaper), shortened; the
   * cost over the limit is paid back by a pause in testing (see debt).
   */
  private async regulate(observed: number): Promise<void> {
    if (observed > this.limit) this.ramp = 4;
    else if (this.startedSince > 0) this.ramp = Math.min(1024, this.ramp * 2);
    this.startedSince = 0;
    if (observed <= this.limit) return;
    // each thread over the limit by its own tests (and those of no one thread)
    for (const [thread, x] of this.lastWindow?.perThread ?? []) {
      if (x > this.limit) await this.regulateThread(thread, x);
    }
  }

  private async regulateThread(thread: string, observed: number): Promise<void> {
    const optional = this.active.filter((a) => !a.permanent && sameThread(threadOf(a.node.focus), thread));
    const newest = optional[optional.length - 1];
    if (!newest) return;
    if (observed > 2 * this.limit && optional.length > 2) {
      // far over: the newer half goes at once
      for (const a of optional.slice(Math.floor(optional.length / 2))) await this.takeOut(a, observed);
      return;
    }
    if (optional.length === 1) {
      // a short test of a dear function still sees many calls: shorten it, and the pause after
      if (!newest.alone) newest.seconds = Math.max(MIN_TEST, this.testSeconds * this.limit / observed);
      newest.alone = true;
      return;
    }
    await this.takeOut(newest, observed);
  }

  /** A test's instrumentation goes. */
  private async end(a: Active): Promise<void> {
    this.active.splice(this.active.indexOf(a), 1);
    await this.manager.disable(a.inst);
    if (a.calls) await this.manager.disable(a.calls.inst);
    if (a.wait) await this.manager.disable(a.wait.inst);
    if (a.idle) await this.manager.disable(a.idle.inst);
  }

  private async takeOut(a: Active, observed: number): Promise<void> {
    await this.end(a);
    a.node.state = 'waiting';
    a.node.note = `taken out: the running tests cost ${(100 * observed).toFixed(1)}% of the thread, over the ${(100 * this.limit).toFixed(1)}% limit`;
    this.emit('node', a.node);
  }

  /** Start waiting tests, breadth first, while their predicted cost fits under the limit. */
  private async admit(): Promise<void> {
    const waiting = (n: SearchNode) => (n.state === 'unknown' || n.state === 'waiting') && n.parent !== null && this.live(n);
    const isCode = (n: SearchNode) => codeOf(n.focus) !== undefined;
    // decided from the stack samples first: that costs the target nothing, so no debt holds it
    // back (esprima's search under the limit waited up to 10 s for its debt to decide its
    // functions from samples it already had, and completed in 21-24 s against 4.6 s unlimited)
    // a function's callers by name, for functions V8 may have inlined into them (bySamples)
    for (const m of new Set(this.nodes.filter((n) => waiting(n) && this.level(n) === 'function').map((n) => this.moduleOf(n)!))) await this.callersIn(m);
    const queue = this.nodes.filter(waiting).filter((n) => !isCode(n) || this.bySamples(n) === 'test');
    let budget = this.ramp;
    // threads where a test waits for the one before it (breadth first within each thread); undefined: all
    const held = new Set<string | undefined>();
    const isHeld = (on: string | undefined) => held.has(undefined) || (on === undefined ? held.size > 0 : held.has(on));
    // breadth first; among the functions of a module, the most often sampled first
    const depth = (n: SearchNode): number => (n.parent === null ? 0 : 1 + depth(this.nodes[n.parent - 1]));
    const hits = (n: SearchNode) => (this.hyp(n).onStack && isCode(n) ? this.sampled(n).hits : 0);
    queue.sort((a, b) => depth(a) - depth(b) || hits(b) - hits(a) || a.id - b.id);
    for (const n of queue) {
      const on = threadOf(n.focus);
      if (isHeld(on)) continue;
      const running = this.active.filter((a) => !a.permanent);
      if (running.length >= this.maxTests) return;
      const mine = running.filter((a) => sameThread(threadOf(a.node.focus), on));
      if (mine.some((a) => a.alone) || this.debtOn(on) > 0) { held.add(on); continue; }
      // one very hot function must not make every other prediction dear: no global factor here.
      // Summed static predictions of every running test (the whole program's 2.4 % on the worker
      // demo, 0.5-0.9 % observed) made each worker's module test "over the limit by itself", run one
      // at a time with a pause after it (14.5 s against 7.5 s unlimited)
      const committed = this.committedOn(on);
      const prediction = await this.predict(n);
      const p = prediction.cost;
      n.predictedCost = p;
      // a breakpoint keeps its function in V8's interpreter for as long as it is set, however short
      // the test: never where that alone breaks the limit (a hot handler on a V8 without LiveEdit)
      if (prediction.pinned > this.limit) {
        const dear = prediction.pinning[0];
        n.state = 'too costly';
        n.note = `its points are reached by breakpoints here, and a function holding one runs in V8's interpreter: ` +
          `${dear.path} (${dear.known ? `its own code, and its callers' that it may be inlined into, ${(100 * dear.share).toFixed(1)}% of the thread's samples` : 'its own time not known from samples'}) ` +
          `would cost about ${(100 * prediction.pinned).toFixed(1)}% of the thread, over the ${(100 * this.limit).toFixed(1)}% limit`;
        this.emit('node', n);
        continue;
      }
      if (committed + p <= this.limit) {
        if (budget-- <= 0) return;
        this.startedSince++;
        await this.begin(n);
        continue;
      }
      // over the limit by itself: tested alone in its thread, with a pause in that thread after it
      if (!mine.length) {
        await this.begin(n);
        const a = this.active[this.active.length - 1];
        if (a?.node === n) { a.alone = true; a.seconds = Math.max(MIN_TEST, this.testSeconds * this.limit / p); }
        held.add(on);
        continue;
      }
      if (n.state !== 'waiting') { n.state = 'waiting'; this.emit('node', n); }
      held.add(on);
    }
  }

  /** A thread's cost debt; of no one thread (undefined): the largest. */
  private debtOn(thread: string | undefined): number {
    return thread === undefined ? Math.max(0, ...this.debt.values()) : this.debt.get(thread) ?? 0;
  }
}
