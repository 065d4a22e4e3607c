// The sampled series of one target process: each thread's samples become time
// histograms per thread and per process (a process series sums its threads'
// increments; a queue's, their integrals at one time), and its stack samples
// become counts per function and module.
import * as os from 'os';
import { TimeHistogram } from '../data/histogram';
import type { Sample } from './thread';

export interface MetricValue {
  name: string;
  /** /Process/<host>:<pid> for the whole process, /Thread/<pid>/<main|id> per thread */
  focus: string;
  units: 'count' | 'seconds';
  total: number;
  histogram: { bucketSeconds: number; buckets: number[] };
}

/** Stack samples of one thread (see Session.stackSamples). */
export interface StackSamples {
  samples: number;
  /** of them, those that found the event loop idle */
  idle: number;
  /** of them, those in paranode's code that prepares modules as they load, called from the program: the tool's time, no function's */
  tool: number;
  /** V8's sampling profiler took them (else inspector interrupts, which miss functions without interrupt checks) */
  profiled: boolean;
  hits: ReadonlyMap<string, number>;
  /** samples in which a function was the innermost of the program's (itself, or Node's code it called, running) */
  leaves: ReadonlyMap<string, number>;
  /** samples in which a function's own code ran (V8's profiler only): what pinning it in the interpreter slows */
  own: ReadonlyMap<string, number>;
  /**
   * V8's profiler only: "<function>\0<name>" -> samples in which the frame just
   * inside the function's was Node's code (a built-in it calls) of that name:
   * the time of a call site out of the program (see CpuSampler's Window).
   */
  calls: ReadonlyMap<string, number>;
  /**
   * V8's profiler only: samples in which Node's own code was the innermost frame of all
   * ("node:<module>/<function>", "(native)/<function>"), each with the program functions
   * innermost below it and how many of those samples each had ('' where none): the self
   * time V8's profiles give Node's functions, which `leaves` gives their program callers
   */
  node: ReadonlyMap<string, ReadonlyMap<string, number>>;
  above: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * function -> its nearest callers (up to CALLERS_KEPT, outermost first, one a line;
   * '…' first where the stack went on; recursion folded) -> samples in which
   * the function was on the stack with those callers below it (its innermost frame)
   */
  callers: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /**
   * V8's profiler only: `hits`, `leaves` and `own` again for the named functions, by
   * "<module>/<name>@<line>" (the line the function starts at; anonymous ones have
   * theirs in their key already). A module's functions of one name (marked's two
   * `lex`; `A.parse` and `B.parse`, both `parse` in a frame) are one key above; here,
   * one each. See sampledAt.
   */
  byLine: { hits: ReadonlyMap<string, number>; leaves: ReadonlyMap<string, number>; own: ReadonlyMap<string, number> };
}

/** How many callers of a function the stack samples keep per path (StackSamples.callers). */
export const CALLERS_KEPT = 4;
/** How many distinct paths to one function are kept; the samples of later new ones go to OTHER_PATHS. */
export const PATHS_KEPT = 100;
export const OTHER_PATHS = '\0';

export { sampleKey } from '../analysis/describe';

/** The worker of a queue of a worker's channel ("...@/SyncObject/Message/worker/<id>"). */
const workerOf = (name: string): number | undefined => {
  const m = /\/SyncObject\/Message\/worker\/(\d+)$/.exec(name);
  return m ? Number(m[1]) : undefined;
};

/** internal series of watched call paths' statistics: `_pnp:<k>:<f1>><f2>...:<stat>` (see Session.watchPath) */
export const PATH_SERIES = '_pnp:';
export const pathSeries = (k: number, functions: readonly string[], stat: string): string => `${PATH_SERIES}${k === Infinity ? 'inf' : k}:${functions.join('>')}:${stat}`;

/** internal series of the threads' own values (see Runtime.watchThread) */
export const THREAD_SERIES = '_pnt:';
const THREAD_VALUE_NAMES = ['cpu', 'wall', 'gc', 'elu_active', 'elu_idle', 'blocked', 'ready', 'ran'];

/** The samples shares are of: by V8's profiler, those that found the thread busy (as V8's own profiles give shares); else all. */
export function busySamples(st: StackSamples): number {
  return st.profiled && st.samples > st.idle ? st.samples - st.idle : st.samples;
}

type Counts = Map<string, number>;
interface Stacks { samples: number; idle: number; tool: number; profiled: boolean; hits: Counts; leaves: Counts; own: Counts; calls: Counts; node: Map<string, Counts>; above: Map<string, Set<string>>; callers: Map<string, Counts>; byLine: { hits: Counts; leaves: Counts; own: Counts } }
const emptyStacks = (): Stacks => ({ samples: 0, idle: 0, tool: 0, profiled: false, hits: new Map(), leaves: new Map(), own: new Map(), calls: new Map(), node: new Map(), above: new Map(), callers: new Map(), byLine: { hits: new Map(), leaves: new Map(), own: new Map() } });

/** A named function's key with its start line (StackSamples.byLine); null for an anonymous one (its key has its line). */
function keyAt(key: string, line: number | undefined): string | null {
  return line === undefined || key.startsWith('<anonymous>@', key.lastIndexOf('/') + 1) ? null : `${key}@${line}`;
}

/**
 * Samples of a function in one of StackSamples' counts: by its start line where
 * `line` is given (its module has another function its samples' key names: see
 * StackSamples.byLine) and V8's profiler took them, else by its key (interrupt
 * samples have no lines).
 */
export function sampledAt(st: StackSamples, which: 'hits' | 'leaves' | 'own', key: string, line?: number): number {
  const at = st.profiled ? keyAt(key, line) : null;
  return (at === null ? st[which].get(key) : st.byLine[which].get(at)) ?? 0;
}

/**
 * A thread's sampled functions by their own code with Node's code they call
 * (StackSamples.leaves), or by their own code alone (`own`, V8's self time), those of
 * one key seen at two start lines or more (two functions of one name in a module)
 * each by "<key>@<line>", with their samples.
 */
export function leavesByFunction(st: StackSamples, which: 'leaves' | 'own' = 'leaves'): [string, number][] {
  // split where the leaves are (a line own code ran at is one a leaf was at): both lists name a function alike
  const lines = new Map<string, string[]>();
  for (const at of st.byLine.leaves.keys()) {
    const key = at.slice(0, at.lastIndexOf('@'));
    let l = lines.get(key);
    if (!l) lines.set(key, (l = []));
    l.push(at);
  }
  return [...st[which]].flatMap(([key, n]): [string, number][] => {
    const l = lines.get(key);
    return l && l.length > 1 ? l.flatMap((at): [string, number][] => { const m = st.byLine[which].get(at) ?? 0; return m ? [[at, m]] : []; }) : [[key, n]];
  });
}

/** The callers of the frame at `i` (innermost first) as StackSamples.callers keys them: consecutive repeats folded. */
function callersKey(stack: string[], i: number): string {
  const out: string[] = [];
  let j = i + 1;
  for (; j < stack.length && out.length < CALLERS_KEPT; j++) if (stack[j] !== (out[out.length - 1] ?? stack[i])) out.push(stack[j]);
  while (j < stack.length && stack[j] === out[out.length - 1]) j++;
  return [...(j < stack.length ? ['…'] : []), ...out.reverse()].join('\n');
}

/** A thread's reading of a queue: its integral (ms) and count at `at`, its sends, when its count last changed (the process's monotonic clock, ms) */
interface QueueReading { w: number; n: number; at: number; sent: number; changed: number }

interface Series { name: string; focus: string; units: 'count' | 'seconds'; h: TimeHistogram; last: number; offset: number }

export class SampledSeries {
  /** by focus + name; the process series sum the threads' increments */
  private readonly series = new Map<string, Series>();
  private readonly lastT = new Map<number, number>();
  /** target time (s) of the first sample: histogram time zero */
  private baseT: number | null = null;
  /** worker threads that have ended: whether their last counts were read, and when (the process's monotonic clock, ms) */
  private readonly ended = new Map<number, { final: boolean; at: number }>();
  /** per queue (Instances.queue), per thread: its last reading; and per receiving thread, the messages it dispatched that no thread was seen to send */
  private readonly queues = new Map<string, { threads: Map<number, QueueReading>; born: number; before: Map<number, number> }>();
  /** per thread: when its last sample was taken (the process's monotonic clock, ms) */
  private readonly lastMono = new Map<number, number>();
  /** per thread label: stack samples taken, and in how many each function ("<module>/<function>") was */
  private readonly stacks = new Map<string, Stacks>();

  /** @param opts.buckets histogram buckets (64) */
  constructor(private readonly pid: number, private readonly opts: { buckets?: number }) {
    // (os.hostname() is a system call: asked for once, not at every read of a series)
    this.processFocus = `/Process/${os.hostname()}:${pid}`;
  }

  readonly processFocus: string;

  /** One sample of a thread (0: the main thread, else the worker's id). */
  record(thread: number, s: Sample): void {
    const t = s.t / 1000;
    const from = this.lastT.get(thread) ?? t;
    this.lastT.set(thread, t);
    const threadFocus = `/Thread/${this.pid}/${thread === 0 ? 'main' : thread}`;
    const processFocus = this.processFocus;
    if (s.stacks) {
      const label = thread === 0 ? 'main' : String(thread);
      let st = this.stacks.get(label);
      if (!st) this.stacks.set(label, (st = emptyStacks()));
      if (s.idle !== undefined) { st.idle += s.idle; st.profiled = true; }
      if (s.tool) { st.tool += s.tool; st.samples += s.tool; }
      for (const [stack, n, own, calls, node, lines] of s.stacks) this.recordStack(st, stack, n, own, calls, node, lines);
    }
    const feed = (name: string, units: 'count' | 'seconds', value: number) => {
      const own = this.seriesFor(threadFocus, name, units);
      // (the process's series from the first sample, not the first change: a probe that counted
      // nothing is reported as 0, not left out; CI's Node 26 took one out before its first call)
      const proc = this.seriesFor(processFocus, name, units);
      const delta = value - own.last;
      own.last = value;
      if (delta === 0) return;
      const base = this.baseT ?? (this.baseT = from);
      const a = Math.max(0, from - base), b = Math.max(0, t - base);
      own.h.add(a, b, delta);
      proc.last += delta;
      proc.h.add(a, b, delta);
    };
    for (const [name, value] of s.counters) feed(name, 'count', value);
    for (const [name, value] of s.timers) feed(name, 'seconds', value);
    if (s.mono !== undefined) this.lastMono.set(thread, s.mono);
    for (const [name, w, n, at, born, sent, changed] of s.queues ?? []) {
      let q = this.queues.get(name);
      if (!q) this.queues.set(name, (q = { threads: new Map(), born, before: new Map() }));
      q.threads.set(thread, { w, n, at, sent, changed });
      q.born = Math.min(q.born, born);
    }
    for (const [name, q] of this.queues) this.unsentDispatches(name, q);
    for (const [name] of s.queues ?? []) {
      const q = this.queues.get(name)!;
      const at = q.threads.get(thread)!.at;
      // every thread's integral carried to one time by its own count: one sender's count is all
      // it ever sent, so the times must be one (they are: one clock) and not rounded apart. A
      // message both sent and dispatched counts its wait whatever that time; one sent to a worker
      // that has ended waited until the end
      const end = this.ended.get(workerOf(name) ?? -1)?.at;
      const when = end === undefined ? at : Math.min(at, end);
      let v = 0;
      for (const x of q.threads.values()) v += x.w + x.n * (when - x.at);
      // messages already in flight when the queue began (sent before msg_wait was enabled), whose
      // sends no thread counted: they count from the queue's beginning, as if sent then
      for (const k of q.before.values()) v += k * (when - q.born);
      const proc = this.seriesFor(processFocus, name, 'seconds');
      const delta = v / 1000 - proc.last;
      proc.last = v / 1000;
      if (delta === 0) continue;
      const base = this.baseT ?? (this.baseT = from);
      proc.h.add(Math.max(0, from - base), Math.max(0, t - base), delta);
    }
    // thread values count from the first sample that has them, not from the thread's start,
    // unless they were watched since before its first line (a launch that asked for them)
    // (the kernel's CPU time, 'ran', always counts from the thread's start: the bound a timer of the thread cannot pass; -1 where unknown)
    s.thread?.forEach((v, i) => {
      const ran = THREAD_VALUE_NAMES[i] === 'ran';
      if (ran && v < 0) return;
      const name = `${THREAD_SERIES}${THREAD_VALUE_NAMES[i]}`;
      const key = `${threadFocus}\0${name}`;
      const first = !this.series.has(key);
      const own = this.seriesFor(threadFocus, name, 'seconds');
      if (first && !s.fromStart && !ran) { own.offset = v / 1000; this.seriesFor(processFocus, name, 'seconds'); return; }
      feed(name, 'seconds', v / 1000 - own.offset);
    });
  }

  /**
   * How many messages each thread of a queue dispatched that no thread was seen
   * to send: the most its dispatches ever led the other side's sends by, the two
   * counted at one time. The other side's counts are those of its last sample, so
   * only where that sample was taken after this thread's count last changed (its
   * dispatches were then what it read since): a sender read earlier may have sent
   * since, messages its reading does not show, and those would count as in flight
   * since the queue's beginning for good. (A worker's channel has two sides: the
   * worker and its parent.)
   */
  private unsentDispatches(name: string, q: { threads: Map<number, QueueReading>; before: Map<number, number> }): void {
    const id = workerOf(name);
    for (const [x, r] of q.threads) {
      const others = x === id ? [...this.lastMono.keys()].filter((y) => y !== x) : id === undefined ? [] : [id];
      if (!others.length) continue;
      let sent = 0, read = true;
      for (const y of others) {
        sent += q.threads.get(y)?.sent ?? 0;
        // an ended thread sends no more: its last counts stand (else its channel's value is said to be unknown)
        if (!this.ended.has(y) && (this.lastMono.get(y) ?? -Infinity) < r.changed) read = false;
      }
      if (read) q.before.set(x, Math.max(q.before.get(x) ?? 0, r.sent - r.n - sent));
    }
  }

  /**
   * A worker thread has ended: its channel's queues stop where they are (messages
   * sent to it are never dispatched; what it sent and the main thread has not yet
   * dispatched is left out). `final`: its last counts were read (it ran its exit
   * handlers); else (worker.terminate()) what it did since its last sample is lost.
   */
  threadEnded(thread: number, final: boolean, at: number): void {
    // (its last values may be read after its end was seen: its end stays the earlier time)
    const e = this.ended.get(thread);
    this.ended.set(thread, { final: final || (e?.final ?? false), at: Math.min(at, e?.at ?? at) });
  }

  /** Of a queue of an ended worker's channel: undefined while the worker runs, else null, or why its value is not known. */
  queueEnd(name: string): string | null | undefined {
    const id = workerOf(name);
    const e = id === undefined ? undefined : this.ended.get(id);
    if (!e) return undefined;
    return e.final || !this.queues.has(name) ? null
      : `worker ${id} ended without running its exit handlers (worker.terminate(), or the process's end): the messages it sent and dispatched since its last sample are not known, so its channel's waiting time is not either`;
  }

  /** `n` samples of one stack, innermost function first. */
  private recordStack(st: Stacks, stack: string[], n: number, own = false, calls: string[] = [], node?: string, lines?: number[]): void {
    st.samples += n;
    const add = (m: Counts, k: string | null) => { if (k !== null) m.set(k, (m.get(k) ?? 0) + n); };
    if (lines) {
      stack.forEach((f, i) => add(st.byLine.hits, keyAt(f, lines[i])));
      const inner = stack.length ? keyAt(stack[0], lines[0]) : null;
      add(st.byLine.leaves, inner);
      if (own) add(st.byLine.own, inner);
    }
    for (const c of calls) st.calls.set(c, (st.calls.get(c) ?? 0) + n);
    if (node) {
      let by = st.node.get(node);
      if (!by) st.node.set(node, (by = new Map()));
      by.set(stack[0] ?? '', (by.get(stack[0] ?? '') ?? 0) + n);
    }
    if (stack.length) st.leaves.set(stack[0], (st.leaves.get(stack[0]) ?? 0) + n);
    if (own) st.own.set(stack[0], (st.own.get(stack[0]) ?? 0) + n);
    // each function was called, directly or not, by every one below it
    stack.forEach((inner, i) => {
      for (const outer of stack.slice(i + 1)) {
        let set = st.above.get(outer);
        if (!set) st.above.set(outer, (set = new Set()));
        set.add(inner);
      }
    });
    // the callers that led to each function (its innermost frame: a recursion's deepest call)
    const seen = new Set<string>();
    stack.forEach((f, i) => {
      if (seen.has(f)) return;
      seen.add(f);
      let by = st.callers.get(f);
      if (!by) st.callers.set(f, (by = new Map()));
      // a long session's memory bounded: past PATHS_KEPT paths a function's new ones count as one, unnamed
      let k = callersKey(stack, i);
      if (!by.has(k) && by.size >= PATHS_KEPT) k = OTHER_PATHS;
      by.set(k, (by.get(k) ?? 0) + n);
    });
    // functions, and their modules once per sample ("<module>/")
    const keys = new Set(stack);
    for (const f of stack) keys.add(f.slice(0, f.lastIndexOf('/') + 1));
    for (const k of keys) st.hits.set(k, (st.hits.get(k) ?? 0) + n);
  }

  /** See Session.stackSamples. */
  stackSamples(thread: string): StackSamples {
    return this.stacks.get(thread) ?? emptyStacks();
  }

  /** See Session.sampled. */
  sampled(name: string, thread?: string): { last: number; bucketSeconds: number; buckets: number[] } | undefined {
    const focus = thread === undefined ? this.processFocus : `/Thread/${this.pid}/${thread}`;
    const sr = this.series.get(`${focus}\0${name}`);
    return sr && { last: sr.last, bucketSeconds: sr.h.bucketSeconds, buckets: sr.h.values() };
  }

  /**
   * The names of the series, by prefix, kept until a series is added: each metric
   * instance asks once or more per update, and a request over every function of a
   * program has thousands of them over thousands of series (a scan each took 24 s
   * of a 30-s session over 5,521 functions).
   */
  private readonly byPrefix = new Map<string, string[]>();

  /** See Session.sampledNames. */
  sampledNames(prefix: string): string[] {
    let names = this.byPrefix.get(prefix);
    if (!names) {
      const out = new Set<string>();
      for (const sr of this.series.values()) if (sr.name.startsWith(prefix)) out.add(sr.name);
      this.byPrefix.set(prefix, names = [...out]);
    }
    return [...names];
  }


  private seriesFor(focus: string, name: string, units: 'count' | 'seconds'): Series {
    const key = `${focus}\0${name}`;
    let sr = this.series.get(key);
    if (!sr) {
      sr = { name, focus, units, h: new TimeHistogram(this.opts.buckets ?? 64, 0.1), last: 0, offset: 0 };
      this.series.set(key, sr);
      this.byPrefix.clear();
    }
    return sr;
  }

  /** See Session.metrics. */
  metrics(): MetricValue[] {
    const all = [...this.series.values()].filter((s) => !s.name.startsWith('_pn'));
    const workers = all.some((s) => s.focus.startsWith('/Thread/') && !s.focus.endsWith('/main'));
    return all
      .filter((s) => s.focus.startsWith('/Process/') || workers)
      .sort((a, b) => Number(a.focus.startsWith('/Thread/')) - Number(b.focus.startsWith('/Thread/')))
      .map((s) => ({ name: s.name, focus: s.focus, units: s.units, total: s.last, histogram: { bucketSeconds: s.h.bucketSeconds, buckets: s.h.values() } }));
  }

  /** See Session.value. */
  value(name: string, thread?: string): number | undefined {
    const focus = thread === undefined ? this.processFocus : `/Thread/${this.pid}/${thread}`;
    return this.series.get(`${focus}\0${name}`)?.last;
  }
}
