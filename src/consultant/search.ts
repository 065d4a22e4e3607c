// The Performance Consultant: Paradyn's W3 search for Node.js. Each node of the
// search history graph is a hypothesis (why) at a focus (where); it is tested
// by enabling its metric there for a while and comparing the value, a fraction
// of one thread's time, with the hypothesis's threshold. True nodes are refined
// (threads, then modules, then functions); false ones are dropped. The
// whole-program nodes stay enabled and are judged window after window, so a
// hypothesis can hold in one phase and not in another (when), and a new phase
// searches its refinements again. How many tests run at once is set by the
// cost limit: a test starts only if its predicted cost fits under the limit
// beside what is in place, and when the observed cost goes over it the newest
// test is taken out again (the cost-system paper, section 5).
import { EventEmitter } from 'events';
import type { Session } from '../api/session';
import type { MetricManager } from '../metrics/manager';
import type { MetricInstance } from '../metrics/instance';
import { splitFocus } from '../metrics/focus';
import { HYPOTHESES, Hypothesis, thresholds as withThresholds } from './hypotheses';

export type NodeState = 'unknown' | 'waiting' | 'testing' | 'true' | 'false' | 'too costly' | 'not testable';

export interface TestRecord { from: number; to: number; value: number; verdict: boolean }

export interface SearchNode {
  id: number;
  parent: number | null;
  hypothesis: string;
  /** '' is the whole program */
  focus: string;
  state: NodeState;
  /** the last test's value, a fraction of one thread's time */
  value?: number;
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
}

interface Active {
  node: SearchNode;
  inst: MetricInstance;
  /** per-thread totals and time when the window started (after the first sample) */
  start?: { t: number; totals: Map<string, number> };
  startedAt: number;
  permanent: boolean;
  staticCost: number;
  /** over the limit by itself: runs alone, and the search pauses after it (duty cycle) */
  alone?: boolean;
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
  /** observed over static-predicted cost of what is in place: corrects later predictions */
  factor = 1;
  /** observed cost per window (fraction, the busiest thread), for the report */
  readonly costTrace: { t: number; observed: number; predicted: number; tests: number }[] = [];
  private costInst?: MetricInstance;
  private costStart?: { t: number; totals: Map<string, number> };
  private completeAt?: number;
  /** no test starts before this (seconds): the pause after a test that alone was over the limit */
  private quietUntil = 0;
  private fns?: { at: number; list: { module: string; line: number; function: string; thread: string }[] };

  constructor(readonly manager: MetricManager, opts: ConsultantOptions = {}) {
    super();
    this.limit = opts.maxOverhead ?? 0.05;
    this.maxTests = opts.maxTests ?? Infinity;
    this.testSeconds = opts.testSeconds ?? 1;
    this.thresholds = withThresholds({ instrumentation: Number.isFinite(this.limit) ? this.limit : 0.05, ...opts.thresholds });
    this.hyps = opts.hypotheses ? opts.hypotheses.map((n) => { const h = HYPOTHESES.find((x) => x.name === n); if (!h) throw new Error(`unknown hypothesis "${n}" (known: ${HYPOTHESES.map((x) => x.name).join(', ')})`); return h; }) : [...HYPOTHESES];
  }

  private get session(): Session { return this.manager.sessions[0]; }
  /** seconds since the search started */
  now(): number { return (Date.now() - this.t0) / 1000; }

  /** Enable the whole-program tests (they stay for the whole search) and the observed cost. */
  async start(): Promise<void> {
    this.costInst = await this.manager.enable('observed_cost');
    for (const h of this.hyps) {
      const node = this.add(null, h, '');
      await this.begin(node, true);
    }
    this.session.on('sample', () => { void this.tick(); });
  }

  /** The search is complete: every node under a true node has been decided. */
  get complete(): boolean {
    return this.completeAt !== undefined;
  }

  /** Seconds from the start to completion (undefined while searching). */
  get searchSeconds(): number | undefined { return this.completeAt; }

  async stop(): Promise<void> {
    this.stopped = true;
    while (this.busy) await new Promise((r) => setImmediate(r));
    // what was measured so far by tests not yet decided stays in the history
    for (const a of this.active.splice(0)) {
      if (!a.permanent) this.conclude(a, true);
      await this.manager.disable(a.inst).catch(() => undefined);
    }
    if (this.costInst) await this.manager.disable(this.costInst).catch(() => undefined);
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
    return splitFocus(node.focus).some((p) => p.startsWith('/Code/')) ? h.codeMetric! : h.metric;
  }

  private async begin(node: SearchNode, permanent = false): Promise<void> {
    const metric = this.metricOf(node);
    const staticCost = (await this.manager.predict(metric, node.focus)).cost;
    try {
      const inst = await this.manager.enable(metric, node.focus);
      node.state = 'testing';
      node.note = undefined;
      this.active.push({ node, inst, startedAt: this.now(), permanent, staticCost });
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
    for (const [k, v] of a.inst.threadTotals()) out.set(k, dt > 0 ? (v - (a.start!.totals.get(k) ?? 0)) / dt : 0);
    return out;
  }

  private conclude(a: Active, partial = false): void {
    const t = this.now();
    if (!a.start || t - a.start.t <= 0) { a.node.state = 'unknown'; a.node.note = 'not measured long enough'; return; }
    const fr = this.fractions(a, t);
    const thread = splitFocus(a.node.focus).find((p) => p.startsWith('/Thread/'))?.slice('/Thread/'.length);
    let value = 0, at: string | undefined;
    for (const [k, v] of fr) if ((!thread || k === thread) && (at === undefined || v > value)) { value = v; at = k; }
    const verdict = value >= a.node.threshold;
    a.node.tests.push({ from: a.start.t, to: t, value, verdict });
    a.node.value = value;
    a.node.thread = at;
    a.node.state = verdict ? 'true' : 'false';
    if (partial) a.node.note = 'decided on a shortened test (the search ended)';
    a.start = { t, totals: a.inst.threadTotals() };
    this.emit('node', a.node);
  }

  /** One step after each sample: judge finished tests, refine, keep the cost under the limit, start tests. */
  private async tick(): Promise<void> {
    if (this.busy || this.stopped) return;
    this.busy = true;
    try {
      const t = this.now();
      for (const a of this.active) if (!a.start) a.start = { t, totals: a.inst.threadTotals() };
      const observed = this.observeCost(t);
      for (const a of [...this.active]) {
        if (a.start!.t + this.testSeconds > t) continue;
        const before = a.node.state;
        this.conclude(a);
        if (a.permanent) {
          // a whole-program node is judged every window; a new true phase searches again
          if (a.node.state === 'true' && before !== 'true') this.refresh(a.node);
          continue;
        }
        this.active.splice(this.active.indexOf(a), 1);
        await this.manager.disable(a.inst);
        if (a.alone) this.pauseAfter(a, t);
      }
      for (const n of this.nodes) if (n.state === 'true' && !this.refined.has(n.id)) await this.refine(n);
      if (observed !== undefined) await this.regulate(observed);
      await this.admit();
      const pending = this.nodes.some((n) => ['unknown', 'waiting', 'testing'].includes(n.state) && n.parent !== null && this.live(n));
      const judged = this.nodes.filter((n) => n.parent === null).every((n) => n.tests.length > 0 || n.state === 'not testable');
      if (!pending && judged && this.completeAt === undefined) { this.completeAt = t; this.emit('complete'); }
      this.emit('tick');
    } catch (e) {
      if (!this.stopped) this.emit('error', e);
    } finally {
      this.busy = false;
    }
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

  /** A top-level node turned true again: its earlier refinements are tested again. */
  private refresh(top: SearchNode): void {
    const under = new Set([top.id]);
    for (const n of this.nodes) {
      if (n.parent === null || !under.has(n.parent)) continue;
      under.add(n.id);
      if (n.state === 'true' || n.state === 'false') { n.state = 'unknown'; this.refined.delete(n.id); }
    }
    this.completeAt = undefined;
  }

  /** Children of a true node: its threads, else modules, else functions. */
  private async refine(n: SearchNode): Promise<void> {
    this.refined.add(n.id);
    const h = this.hyp(n);
    const parts = splitFocus(n.focus);
    const thread = parts.find((p) => p.startsWith('/Thread/'));
    const code = parts.find((p) => p.startsWith('/Code/'));
    const s = this.session;
    const exists = (f: string) => this.nodes.some((x) => x.parent === n.id && x.focus === f);
    if (!thread && !code && s.threadIds.length > 1) {
      for (const t of s.threadIds) { const f = `/Thread/${s.pid}/${t}`; if (!exists(f)) this.add(n, h, f); }
      return;
    }
    if (!h.codeMetric) return;
    const label = thread?.split('/')[3] ?? 'main';
    const fns = (await this.functions()).filter((r) => r.thread === label);
    const join = (c: string) => [c, thread].filter(Boolean).join(',');
    if (!code) {
      for (const m of [...new Set(fns.map((r) => r.module))].sort()) { const f = join(`/Code/${m}`); if (!exists(f)) this.add(n, h, f, m); }
    } else if (fns.some((r) => r.module === code.slice(6))) {
      for (const r of fns.filter((x) => x.module === code.slice(6))) {
        const f = join(`/Code/${r.module}/${r.function}`);
        if (!exists(f)) this.add(n, h, f, `${r.module}:${r.line}`);
      }
    }
  }

  /** The program's functions (not Node's own), fetched at most once a second (code keeps loading). */
  private async functions(): Promise<{ module: string; line: number; function: string; thread: string }[]> {
    const t = this.now();
    if (!this.fns || t - this.fns.at > 1) {
      const list = (await this.session.resources('/Code/**')).filter((r) => !r.module.startsWith('node:')).map((r) => ({ module: r.module, line: r.line, function: r.function, thread: r.thread }));
      this.fns = { at: t, list };
    }
    return this.fns.list;
  }

  /** The observed cost over the last window (busiest thread), and the correction of predictions. */
  private observeCost(t: number): number | undefined {
    if (!this.costInst) return undefined;
    const totals = this.costInst.threadTotals();
    const prev = this.costStart;
    if (!prev) { this.costStart = { t, totals }; return undefined; }
    if (t - prev.t < Math.min(0.5, this.testSeconds)) return undefined;
    let observed = 0;
    for (const [k, v] of totals) observed = Math.max(observed, (v - (prev.totals.get(k) ?? 0)) / (t - prev.t));
    this.costStart = { t, totals };
    const predicted = this.active.reduce((x, a) => x + a.staticCost, 0);
    if (predicted > 1e-6 && observed > 0) {
      const ratio = Math.min(1e4, Math.max(1e-2, observed / predicted));
      this.factor = Math.sqrt(this.factor * ratio);
    }
    this.costTrace.push({ t, observed, predicted: predicted * this.factor, tests: this.active.filter((a) => !a.permanent).length });
    return observed;
  }

  /**
   * Over the limit: the newest test goes and waits to be tried again. A test
   * over the limit by itself stays (it cannot be made cheaper) and is paid
   * for by a pause after it, so that the cost averaged over both is the limit.
   */
  private async regulate(observed: number): Promise<void> {
    if (observed <= this.limit) return;
    const optional = this.active.filter((a) => !a.permanent);
    const newest = optional[optional.length - 1];
    if (!newest) return;
    if (optional.length === 1) {
      newest.alone = true;
      return;
    }
    this.active.splice(this.active.indexOf(newest), 1);
    await this.manager.disable(newest.inst);
    newest.node.state = 'waiting';
    newest.node.note = `taken out: observed cost ${(100 * observed).toFixed(1)}% over the ${(100 * this.limit).toFixed(1)}% limit`;
    this.emit('node', newest.node);
  }

  /** After a test alone over the limit: pause so that its cost averaged over test and pause is the limit. */
  private pauseAfter(a: Active, t: number): void {
    const during = this.costTrace.filter((x) => x.t > a.startedAt && x.t <= t);
    const cost = during.length ? during.reduce((x, y) => x + y.observed, 0) / during.length : 0;
    if (cost <= this.limit) return;
    this.quietUntil = t + (t - a.startedAt) * (cost / this.limit - 1);
    a.node.note = `tested alone at ${(100 * cost).toFixed(1)}% cost, then ${(this.quietUntil - t).toFixed(1)} s without tests`;
  }

  /** Start waiting tests, breadth first, while their predicted cost fits under the limit. */
  private async admit(): Promise<void> {
    if (this.now() < this.quietUntil) return;
    const queue = this.nodes.filter((n) => (n.state === 'unknown' || n.state === 'waiting') && n.parent !== null && this.live(n));
    for (const n of queue) {
      const running = this.active.filter((a) => !a.permanent);
      if (running.length >= this.maxTests || running.some((a) => a.alone)) return;
      const committed = this.active.reduce((x, a) => x + a.staticCost * this.factor, 0);
      const p = (await this.manager.predict(this.metricOf(n), n.focus, this.factor)).cost;
      n.predictedCost = p;
      if (committed + p <= this.limit) { await this.begin(n); continue; }
      // over the limit by itself: tested alone, with a pause after it
      if (!running.length) { await this.begin(n); const a = this.active[this.active.length - 1]; if (a?.node === n) a.alone = true; return; }
      if (n.state !== 'waiting') { n.state = 'waiting'; this.emit('node', n); }
      return;
    }
  }
}
