// A metric instance: one metric for one focus, placed in one or more sessions.
// It reads its counter or timer (or the runtime's thread values) per thread
// and aggregates them to processes and the program with the metric's operator.
import { COST_SERIES, SWITCH_CLASS, TOOL_CLASS, VIRTUAL_SERIES } from '../agent/runtime';
import { pathSeries, THREAD_SERIES } from '../session/series';
import { Session } from '../session/session';
import { Calibration, classCost } from '../cost/calibration';
import type { MetricDecl } from '../mdl/ast';
import { isTimerPlan, usesQueue, type Placement, type Plan } from '../mdl/evaluate';
import { splitFocus } from './focus';

/**
 * observed_cost's classes of one-off work: the runtime's own for the tool (placing and
 * removing probes, LiveEdits, listings, samples) and slot switches (V8 optimizing a
 * function again). They are the tool's time in the thread, but no test goes on costing
 * them: a test is not taken out for them (see PerformanceConsultant.observeCost).
 */
const ONE_OFF_CLASSES: ReadonlySet<string> = new Set([TOOL_CLASS, SWITCH_CLASS.seen, SWITCH_CLASS.unseen]);

/** Identical requests (same metric, same focus) share one instance. */
export const requestKey = (metric: string, focus: string): string => `${metric}@${splitFocus(focus).join(',')}`;

export interface MetricInstanceValue {
  /** the metric's name, e.g. procedure_calls */
  name: string;
  /** the focus as asked ('' for the whole program) */
  focus: string;
  units: string;
  /** the integral since the instance was enabled: calls, seconds, ...; a fraction for SampledFunction metrics */
  total: number;
  /** per bucket, in the metric's units (a rate for event counters) */
  histogram: { bucketSeconds: number; buckets: number[] };
  /** for a value known within bounds (observed_cost): [low, high]; total is the high one */
  range?: [number, number];
  /**
   * of a timer (wall, cpu_inclusive, ...): its virtual time, less the handlers' own
   * work inside its intervals as the calibration prices it, [low, high] (intrusion
   * compensation); absent where no calibration is saved
   */
  virtual?: [number, number];
  /** set where the value cannot be real (a thread using more than 1 CPU s/s): what, where and when */
  implausible?: string;
  /** set where the request was taken out before the end (its price over --max-overhead): why; the value is what it measured until then */
  stopped?: string;
}

/** A thread's CPU time grows at most as fast as the wall clock; over this it is not real. */
export const MAX_CPU_RATE = 1.05;

/** a placement made: its probe, and its points (-1: standing since launch, placed as code loads) */
export interface Placed { placement: Placement; probe: number; placed: number; how: string }

export interface PerSession {
  session: Session;
  plan: Plan;
  probes: Placed[];
  flags: string[];
  /** thread labels the metric is limited to (undefined: all) */
  threads?: string[];
  /** series values when the instance was enabled (thread values count from then) */
  base: Map<string, number>;
  /** read the sum of every series named with this prefix (all instances of a /SyncObject kind) */
  sumOf?: string;
  /** of a CPU-time metric: each thread's CPU time as the kernel counted it when the request was made (see overOneCpu) */
  ranBase?: Map<string, number>;
  /** of a call path's metric: the session samples the path's statistics for it (Session.watchPath) */
  watching?: boolean;
}

/** A request that stands for many instances: its cells are "<stem><resource>", one instance each. */
export interface VectorOf {
  stem: string;
  /** which resources the request picks */
  match: (resource: string) => boolean;
  /** the focus of the instance for one resource */
  focusOf: (resource: string) => string;
}

export interface Flag { variable: string; probes: Placed[]; users: number }

export class MetricInstance {
  users = 1;
  /** @internal */ readonly perSession: PerSession[] = [];
  /** @internal for one function (module) of a vectorized glob request: the request */
  group?: MetricInstance;
  /** @internal of a vectorized request: its instances by resource */
  members?: Map<string, MetricInstance>;
  /** @internal of a vectorized request: how its cells are named and which it picks */
  vector?: VectorOf;
  /** @internal the request that placed this instance's snippets (shared by the requests over one /SyncObject kind) */
  holder?: MetricInstance;
  /** @internal the calibration an observed_cost instance prices handler runs with */
  calibration?: Calibration;

  constructor(readonly id: number, readonly metric: MetricDecl, readonly focus: string, private readonly flagsOf: (s: Session) => Map<string, Flag>) {}

  /** when the request was made (the tool's clock): nothing it counts can be older */
  private readonly createdAt = performance.now();

  get key(): string { return requestKey(this.metric.name, this.focus); }

  /** The snippets this instance placed, one line each (its constraint flags' too). */
  listing(): string[] {
    const line = (p: Placed) => `${p.placement.order} ${p.placement.where} ${p.placement.resource}${p.placement.point.replace(/^call:(.*)$/, '.call("$1")').replace(/^inner:(.*)$/, '/$1().inner').replace(/^(?=[a-z]+$)/, '.')} (* ${p.placement.snippet} *)  [${p.how}]`;
    const out: string[] = [];
    for (const ps of this.perSession) {
      const prefix = this.perSession.length > 1 ? `process ${ps.session.pid}: ` : '';
      for (const k of ps.flags) for (const p of this.flagsOf(ps.session).get(k)?.probes ?? []) if (p.placed) out.push(prefix + line(p));
      for (const p of ps.probes) if (p.placed) out.push(prefix + line(p));
    }
    return out;
  }

  private seriesName(ps: PerSession, which?: string): string {
    if (ps.plan.kind === 'path') return pathSeries(ps.plan.callPath!.k, ps.plan.callPath!.functions, ps.plan.threadValue!);
    return ps.plan.kind === 'thread' ? `${THREAD_SERIES}${which ?? ps.plan.threadValue}` : ps.plan.variable;
  }

  /** [value since enable, histogram] of one series in one thread (or the process: thread undefined). */
  private read(ps: PerSession, thread: string | undefined, which?: string): { v: number; h: { bucketSeconds: number; buckets: number[] } } {
    if (which === 'cost_low' || which === 'cost_high') return this.readCost(ps, thread, which === 'cost_low' ? 0 : 1);
    const virtual = which === 'virtual_low' ? VIRTUAL_SERIES.low : which === 'virtual_high' ? VIRTUAL_SERIES.high : '';
    if (ps.sumOf) {
      const all = ps.session.sampledNames(virtual + ps.sumOf).map((n) => ps.session.sampled(n, thread)).filter((x) => x !== undefined);
      const hs = align(all.map((x) => ({ bucketSeconds: x.bucketSeconds, buckets: x.buckets })));
      const buckets: number[] = [];
      for (const h of hs) h.buckets.forEach((b, k) => { buckets[k] = (buckets[k] ?? 0) + b; });
      return { v: all.reduce((a, x) => a + x.last, 0), h: { bucketSeconds: hs[0]?.bucketSeconds ?? 0.1, buckets } };
    }
    const name = virtual + this.seriesName(ps, virtual ? undefined : which);
    const s = ps.session.sampled(name, thread);
    const base = ps.base.get(`${thread ?? ''}\0${name}`) ?? 0;
    return { v: (s?.last ?? 0) - base, h: s ? { bucketSeconds: s.bucketSeconds, buckets: s.buckets } : { bucketSeconds: 0.1, buckets: [] } };
  }

  /**
   * Seconds of instrumentation: handler runs per cost class since enabled, times the class's cost (side 0 low, 1 high);
   * `ongoing`: the handlers' and the pinning's only, without the one-off work of ONE_OFF_CLASSES.
   */
  private readCost(ps: PerSession, thread: string | undefined, side: 0 | 1, ongoing = false): { v: number; h: { bucketSeconds: number; buckets: number[] } } {
    const cal = this.calibration!;
    const runs = ps.session.sampledNames(COST_SERIES).filter((n) => !ongoing || !ONE_OFF_CLASSES.has(n.slice(COST_SERIES.length)))
      .map((n) => ({ n, s: ps.session.sampled(n, thread) })).filter((x) => x.s);
    const hs = align(runs.map((x) => ({ bucketSeconds: x.s!.bucketSeconds, buckets: x.s!.buckets })));
    let v = 0;
    const buckets: number[] = [];
    runs.forEach((x, k) => {
      const each = classCost(cal, x.n.slice(COST_SERIES.length))[side] / 1e9;
      v += (x.s!.last - (ps.base.get(`${thread ?? ''}\0${x.n}`) ?? 0)) * each;
      hs[k].buckets.forEach((b, j) => { buckets[j] = (buckets[j] ?? 0) + b * each; });
    });
    return { v, h: { bucketSeconds: hs[0]?.bucketSeconds ?? 0.1, buckets } };
  }

  /**
   * The value since enabled in each thread it covers, keyed "<pid>/<thread>"
   * (observed_cost: the high bound; with `ongoing`, without its one-off work).
   * The Performance Consultant tests thresholds per thread.
   */
  threadTotals(opts: { ongoing?: boolean } = {}): Map<string, number> {
    const cost = this.metric.base.type === 'thread' && this.metric.base.source === 'cost';
    return this.perThread((ps, t) => (cost ? this.readCost(ps, t, 1, opts.ongoing) : this.read(ps, t)).v);
  }

  /**
   * observed_cost: what each thread's cost classes held when the instance was enabled, keyed
   * "<pid>/<thread>", high bound: the tool's work in the session before it (its attach)
   */
  threadTotalsBefore(): Map<string, number> {
    const cal = this.calibration;
    if (!cal) return new Map();
    return this.perThread((ps, t) => ps.session.sampledNames(COST_SERIES)
      .reduce((v, n) => v + (ps.base.get(`${t}\0${n}`) ?? 0) * classCost(cal, n.slice(COST_SERIES.length))[1] / 1e9, 0));
  }

  /** A value per thread the instance covers, summed over its sessions, keyed "<pid>/<thread>". */
  private perThread(read: (ps: PerSession, thread: string) => number): Map<string, number> {
    const out = new Map<string, number>();
    for (const ps of this.perSession) {
      for (const t of ps.threads ?? ps.session.threadIds) {
        const k = `${ps.session.pid}/${t}`;
        out.set(k, (out.get(k) ?? 0) + read(ps, t));
      }
    }
    return out;
  }

  /** The instance's value and histogram, aggregated over its threads and processes. */
  value(): MetricInstanceValue {
    const m = this.metric;
    if (m.base.type === 'thread' && m.base.source === 'cost') {
      const low = this.aggregate('cost_low'), high = this.aggregate('cost_high');
      return { ...high, range: [low.total, high.total] };
    }
    let v = this.aggregate();
    if (this.perSession.some((ps) => isTimerPlan(ps.plan) && ps.session.sampledNames(VIRTUAL_SERIES.low).length)) {
      v = { ...v, virtual: [this.aggregate('virtual_low').total, this.aggregate('virtual_high').total] };
    }
    const implausible = m.units === 'CPU s/s' ? this.overOneCpu() : usesQueue(m) ? this.unknownQueue() : undefined;
    return implausible ? { ...v, implausible } : v;
  }

  /**
   * Where one thread's CPU time since the request was made is more than the
   * kernel counted the thread on a CPU since then (Linux schedstat), or where
   * that is not known, more than the time since then (> MAX_CPU_RATE); plus
   * 50 ms for clock reads. No measurement of one thread can be: its timers
   * counted something else (another thread's time, an interval twice). Said,
   * never passed silently.
   */
  private overOneCpu(): string | undefined {
    const elapsed = (performance.now() - this.createdAt) / 1000;
    const why = '(its timers counted another thread\'s time or an interval twice)';
    for (const ps of this.perSession) {
      for (const t of ps.threads ?? ps.session.threadIds) {
        const { v } = this.read(ps, t);
        const ran = ps.ranBase && ps.session.sampled(`${THREAD_SERIES}ran`, t);
        if (ran) {
          const used = ran.last - (ps.ranBase!.get(t) ?? 0);
          if (v <= used + 0.05) continue;
          return `not a real value: thread ${ps.session.pid}/${t} read ${v.toFixed(2)} CPU s in ${elapsed.toFixed(2)} s, in which the kernel counted it ${used.toFixed(2)} s on a CPU: ` +
            `more than the thread used ${why}`;
        }
        if (v <= MAX_CPU_RATE * elapsed + 0.05) continue;
        return `not a real value: thread ${ps.session.pid}/${t} read ${v.toFixed(2)} CPU s in ${elapsed.toFixed(2)} s (${(v / elapsed).toFixed(2)} CPU s/s), ` +
          `more than the 1 CPU s/s one thread can use ${why}`;
      }
    }
    return undefined;
  }

  /** Of a metric of queues (msg_wait): a channel whose waiting time cannot be known, and why. */
  private unknownQueue(): string | undefined {
    for (const ps of this.perSession) {
      for (const n of ps.sumOf ? ps.session.sampledNames(ps.sumOf) : [this.seriesName(ps)]) {
        const why = ps.session.queueUnknown(n);
        if (why) return why;
      }
    }
    return undefined;
  }

  private aggregate(which?: string): MetricInstanceValue {
    const m = this.metric;
    const fraction = m.base.type === 'thread' && m.base.source === 'elu';
    // one entry per thread (per process where the operator is a plain sum)
    const parts: { v: number; h: { bucketSeconds: number; buckets: number[] } }[] = [];
    for (const ps of this.perSession) {
      const threads = ps.threads ?? (m.aggregate === 'sum' && !fraction ? [undefined] : ps.session.threadIds);
      for (const t of threads) {
        if (!fraction) { parts.push(this.read(ps, t, which)); continue; }
        const a = this.read(ps, t, 'elu_active'), i = this.read(ps, t, 'elu_idle');
        const [ha, hi] = align([a.h, i.h]);
        parts.push({ v: a.v + i.v > 0 ? a.v / (a.v + i.v) : 0, h: { bucketSeconds: ha.bucketSeconds, buckets: ha.buckets.map((x, k) => (x + (hi.buckets[k] ?? 0) > 0 ? x / (x + (hi.buckets[k] ?? 0)) : 0)) } });
      }
    }
    const hs = align(parts.map((p) => p.h));
    const op = (xs: number[]) => {
      if (!xs.length) return 0;
      switch (m.aggregate) {
        case 'sum': return xs.reduce((a, b) => a + b, 0);
        case 'avg': return xs.reduce((a, b) => a + b, 0) / xs.length;
        case 'min': return Math.min(...xs);
        case 'max': return Math.max(...xs);
      }
    };
    const width = hs[0]?.bucketSeconds ?? 0.1;
    const n = Math.max(0, ...hs.map((h) => h.buckets.length));
    const buckets: number[] = [];
    for (let k = 0; k < n; k++) {
      const v = op(hs.map((h) => h.buckets[k] ?? 0));
      buckets.push(fraction || m.style === 'SampledFunction' ? v : v / width);
    }
    return { name: m.name, focus: this.focus, units: m.units, total: op(parts.map((p) => p.v)), histogram: { bucketSeconds: width, buckets } };
  }
}

/** Histograms of one run fold at their own pace: bring them to the widest bucket. */
function align(hs: { bucketSeconds: number; buckets: number[] }[]): { bucketSeconds: number; buckets: number[] }[] {
  const width = Math.max(0.1, ...hs.map((h) => h.bucketSeconds));
  return hs.map((h) => {
    let b = h.buckets, w = h.bucketSeconds;
    while (w < width - 1e-12) {
      const f: number[] = [];
      for (let i = 0; i < b.length; i += 2) f.push(b[i] + (b[i + 1] ?? 0));
      b = f;
      w *= 2;
    }
    return { bucketSeconds: width, buckets: b };
  });
}
