// The Metric Manager: a request for a metric on a focus becomes snippets at
// points (through the MDL evaluator), placed in every session's process. Identical
// requests share one instance; constraint flags are shared by every instance
// that needs the same constraint on the same resource; both are reference-
// counted and removed with their last user. Values are read per thread and
// aggregated to processes and the program with the metric's operator.
import { EventEmitter } from 'events';
import { THREAD_SERIES, type Session } from '../api/session';
import type { MetricDecl } from '../mdl/ast';
import { planRequest, Plan, Placement } from '../mdl/evaluate';
import { MdlLibrary } from '../mdl/library';
import { expandFocus, resolveFocus, splitFocus } from './focus';

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
}

interface Placed { placement: Placement; probe: number; placed: number; how: string }

interface PerSession {
  session: Session;
  plan: Plan;
  probes: Placed[];
  flags: string[];
  /** thread labels the metric is limited to (undefined: all) */
  threads?: string[];
  /** series values when the instance was enabled (thread values count from then) */
  base: Map<string, number>;
}

interface Flag { variable: string; probes: Placed[]; users: number }

export class MetricInstance {
  users = 1;
  /** @internal */ readonly perSession: PerSession[] = [];

  constructor(readonly id: number, readonly metric: MetricDecl, readonly focus: string, private readonly flagsOf: (s: Session) => Map<string, Flag>) {}

  get key(): string { return key(this.metric.name, this.focus); }

  /** The snippets this instance placed, one line each (its constraint flags' too). */
  listing(): string[] {
    const line = (p: Placed) => `${p.placement.order} ${p.placement.where} ${p.placement.resource}.${p.placement.point.replace(/^call:(.*)$/, 'call("$1")')} (* ${p.placement.snippet} *)  [${p.how}]`;
    const out: string[] = [];
    for (const ps of this.perSession) {
      const prefix = this.perSession.length > 1 ? `process ${ps.session.pid}: ` : '';
      for (const k of ps.flags) for (const p of this.flagsOf(ps.session).get(k)?.probes ?? []) if (p.placed) out.push(prefix + line(p));
      for (const p of ps.probes) if (p.placed) out.push(prefix + line(p));
    }
    return out;
  }

  private seriesName(ps: PerSession, which?: string): string {
    return ps.plan.kind === 'thread' ? `${THREAD_SERIES}${which ?? ps.plan.threadValue}` : ps.plan.variable;
  }

  /** [value since enable, histogram] of one series in one thread (or the process: thread undefined). */
  private read(ps: PerSession, thread: string | undefined, which?: string): { v: number; h: { bucketSeconds: number; buckets: number[] } } {
    const name = this.seriesName(ps, which);
    const s = ps.session.sampled(name, thread);
    const base = ps.base.get(`${thread ?? ''}\0${name}`) ?? 0;
    return { v: (s?.last ?? 0) - base, h: s ? { bucketSeconds: s.bucketSeconds, buckets: s.buckets } : { bucketSeconds: 0.1, buckets: [] } };
  }

  /** The instance's value and histogram, aggregated over its threads and processes. */
  value(): MetricInstanceValue {
    const m = this.metric;
    const fraction = m.base.type === 'thread' && m.base.source === 'elu';
    // one entry per thread (per process where the operator is a plain sum)
    const parts: { v: number; h: { bucketSeconds: number; buckets: number[] } }[] = [];
    for (const ps of this.perSession) {
      const threads = ps.threads ?? (m.aggregate === 'sum' && !fraction ? [undefined] : ps.session.threadIds);
      for (const t of threads) {
        if (!fraction) { parts.push(this.read(ps, t)); continue; }
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

const key = (metric: string, focus: string) => `${metric}@${splitFocus(focus).join(',')}`;

export class MetricManager extends EventEmitter {
  private readonly instances = new Map<string, MetricInstance>();
  private readonly flags = new Map<Session, Map<string, Flag>>();
  private nextId = 1;
  private nextVar = 1;

  constructor(readonly sessions: Session[], readonly library: MdlLibrary = MdlLibrary.standard()) {
    super();
  }

  /** Every live instance. */
  get all(): MetricInstance[] { return [...this.instances.values()]; }

  /**
   * Enable `metric` for each focus a (possibly globbed) focus stands for:
   * `procedure_calls` + `/Code/lib/*.js/*` gives one instance per function.
   */
  async enableAll(metric: string, focus = ''): Promise<MetricInstance[]> {
    this.library.metric(metric);
    const out: MetricInstance[] = [];
    for (const f of await expandFocus(focus, this.sessions)) out.push(await this.enable(metric, f));
    return out;
  }

  /** Enable one metric for one focus (no globs); an identical request shares the instance. */
  async enable(metric: string, focus = ''): Promise<MetricInstance> {
    const m = this.library.metric(metric);
    const k = key(metric, focus);
    const known = this.instances.get(k);
    if (known) { known.users++; return known; }
    const parts = await resolveFocus(focus, this.sessions);
    const inst = new MetricInstance(this.nextId++, m, splitFocus(focus).join(','), (s) => this.flagsFor(s));
    const variable = `_pnm${this.nextVar++}`;
    const plans = this.sessions.map((s) => planRequest(this.library, m, parts, variable, (fk) => this.flagsFor(s).get(fk)?.variable ?? `_pnk${this.nextVar++}`));
    try {
      for (let i = 0; i < this.sessions.length; i++) {
        const s = this.sessions[i], plan = plans[i];
        if (plan.processes && !plan.processes.includes(s.pid)) continue;
        const threads = plan.threads ? plan.threads.filter((t) => t.pid === s.pid).map((t) => t.thread) : undefined;
        if (threads && !threads.length) continue;
        const ps: PerSession = { session: s, plan, probes: [], flags: [], threads, base: new Map() };
        inst.perSession.push(ps);
        for (const f of plan.flags) {
          const flags = this.flagsFor(s);
          const have = flags.get(f.key);
          if (have) have.users++;
          else {
            const flag: Flag = { variable: f.variable, probes: [], users: 1 };
            flags.set(f.key, flag);
            for (const p of f.placements) flag.probes.push(await this.place(s, p, threads, `constraint ${f.constraint} on ${f.resource}`));
          }
          ps.flags.push(f.key);
        }
        for (const p of plan.placements) ps.probes.push(await this.place(s, p, threads, `metric ${m.name}`));
        if (plan.kind === 'thread') {
          await s.watchThreads();
          await s.sample();
          const names = plan.threadValue === 'elu' ? ['elu_active', 'elu_idle'] : [plan.threadValue!];
          for (const n of names) {
            const name = `${THREAD_SERIES}${n}`;
            for (const t of [undefined, ...s.threadIds]) ps.base.set(`${t ?? ''}\0${name}`, s.sampled(name, t)?.last ?? 0);
          }
        }
      }
    } catch (e) {
      await this.remove(inst).catch(() => undefined);
      throw e;
    }
    this.instances.set(k, inst);
    this.emit('enabled', inst);
    return inst;
  }

  private async place(s: Session, p: Placement, threads: string[] | undefined, what: string): Promise<Placed> {
    const text = `${p.resource}.${p.point} ${p.where} ${p.order}: ${p.snippet}`;
    const r = await s.place({ text, resource: p.resource, point: p.point, where: p.where, order: p.order, snippet: p.snippet }, { threads, optional: p.optional, quiet: true });
    const how = [['slot', r.bySlot], ['wrapping', r.byWrapping], ['breakpoint', r.byBreakpoint], ['not placed', r.notPlaced]]
      .filter(([, n]) => n).map(([k, n]) => `${n} by ${k}`.replace('by not placed', 'not placed')).join(', ');
    return { placement: p, probe: r.id, placed: r.placed, how: `${what}: ${how || 'no point yet'}` };
  }

  private flagsFor(s: Session): Map<string, Flag> {
    let f = this.flags.get(s);
    if (!f) this.flags.set(s, (f = new Map()));
    return f;
  }

  /** End a request: its snippets go when its last user does (flags when their last instance does). */
  async disable(inst: MetricInstance): Promise<void> {
    if (--inst.users > 0) return;
    this.instances.delete(inst.key);
    await this.remove(inst);
    this.emit('disabled', inst);
  }

  private async remove(inst: MetricInstance): Promise<void> {
    for (const ps of inst.perSession) {
      for (const p of ps.probes) await ps.session.removeProbe(p.probe);
      const flags = this.flagsFor(ps.session);
      for (const k of ps.flags) {
        const f = flags.get(k);
        if (!f || --f.users > 0) continue;
        flags.delete(k);
        for (const p of f.probes) await ps.session.removeProbe(p.probe);
      }
    }
  }

  /** Values of every instance, largest total first. */
  values(): MetricInstanceValue[] {
    return this.all.map((i) => i.value()).sort((a, b) => b.total - a.total);
  }
}
