// The thread's CPU stack samples, from V8's own sampling profiler through an
// in-process inspector session (no port, nothing on the wire). V8 samples by
// signal, so a sample lands wherever the thread is, also in code with no
// interrupt check (a builtin's loop, a small inlined function): samples taken
// by inspector interrupt land only at function entries and loop back edges
// and miss such functions entirely (issue #12: sanitize-html's tagAllowed,
// V8's hottest function on a loaded server, was never in them).
//
// One profiler per thread runs for the whole watch, cut into windows by
// console-started profiles: the next window starts before the last ends, so
// the profiler never stops. A stop and a new start re-log every code object
// of the heap (27-126 ms on the loaded server's libraries, Node 22/24/26);
// cutting a window costs ~0.4 ms there, but 5-36 ms (take(), 13-48 stacks) on
// esprima parsing in a loop (Node 24, measured 2026-11-27), 2-52 ms on the
// TypeScript compiler checking a project (100-3,300 call-tree nodes a window,
// ~75 % of it V8 serializing them): the tool's time the observed cost counts.
// Cutting less often does not help: a cut costs by the nodes, and a 5-s window
// cost 100-230 ms at once (tried 2026-11-28: the thread's share the same, in bursts).
import * as fs from 'fs';
import * as inspector from 'inspector';
import { lastPart } from './no-regexp';
import { runnableTime } from './runnable-time';
import { procText } from './unpooled';
import { WindowCostFit } from './window-cost-fit';

/** V8's sampling interval: 100 samples a second per thread */
export const SAMPLE_INTERVAL_US = 10_000;
/**
 * The samples' cost is kept under a share of the thread's time: by default this
 * one (half the default cost limit; the consultant gives half its limit). Reading a window costs the thread a part that
 * grows with the samples and the depth of their stacks (V8 builds and
 * serializes the profile, the thread parses and keys it: ~5 ms for 300 nodes on
 * the TypeScript compiler, Node 24) and a smaller fixed part (V8 starts the
 * next profile). The compiler's 0.2-s windows cost 5.6 % of its thread, over
 * the whole 5 % limit before any test (a server's 0.3 %). Where a window costs
 * over the budget, V8 samples less often from then on (once: a new interval
 * restarts the profiler, which re-logs every code object: it is never made
 * shorter again). (Reading windows less often does not help: a window costs by
 * its nodes, and the event loop's idle time is corrected window by window.)
 */
export const DEFAULT_SAMPLING_BUDGET = 0.025;
/** the longest interval the budget may set: 25 samples a second */
export const MAX_INTERVAL_US = 40_000;
/** the intervals the budget chooses from: multiples of this */
const INTERVAL_STEP_US = 10_000;
/** a shorter interval pays for its restart over this long at most (see shorter) */
const SHORTEN_OVER_MS = 10_000;

/** the name V8 gives its profiler's thread (Linux shows 15 characters of a thread's name) */
const PROFILER_THREAD = 'v8:ProfEvntProc';

/** This process's threads named as V8's profiler thread (Linux; none elsewhere). */
function profilerThreads(): string[] {
  try {
    return fs.readdirSync('/proc/self/task').filter((t) => {
      try { return procText(`/proc/self/task/${t}/comm`).trim() === PROFILER_THREAD; } catch { return false; }
    });
  } catch {
    return [];
  }
}

/** One of this process's threads, and its CPU time (ms) when last read. */
export interface ThreadClock { tid: string; cpuMs: number }

/** The CPU time a thread ran since its clock was last read, which moves on (ms); NaN where the thread has ended. */
export function cpuSince(c: ThreadClock): number {
  const now = threadCpuMs(c.tid);
  if (!Number.isFinite(now)) return NaN;
  const spent = Math.max(0, now - c.cpuMs);
  c.cpuMs = now;
  return spent;
}

/** The CPU time so far of one of this process's threads (ms; Linux schedstat); NaN where it cannot be read (it has ended). */
function threadCpuMs(tid: string): number {
  try {
    return Number(procText(`/proc/self/task/${tid}/schedstat`).split(' ')[0]) / 1e6;
  } catch {
    return NaN;
  }
}

/** one cpu-profile node, as V8's Profiler domain gives it */
interface ProfileNode { id: number; callFrame: { functionName: string; url: string; scriptId: string; lineNumber: number; columnNumber: number }; hitCount?: number; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples?: number[] }

/** Node's --cpu-prof is on for this process (its flags, or NODE_OPTIONS). */
export function cpuProfWanted(): boolean {
  // Node itself splits NODE_OPTIONS at spaces (no regexp here: see no-regexp.ts)
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(' ')];
  return flags.some((f) => f === '--cpu-prof' || f.startsWith('--cpu-prof='));
}

/**
 * A stack of kept frames (innermost first) with its count; where V8's profiler
 * took it: whether the innermost kept frame was the innermost frame of all, its
 * own code running (not a built-in, Node's code or a native it called); the calls
 * out of the program on it: "<kept frame>\0<name>" where the frame just inside a
 * kept frame is not kept (Node's `createHash` called by a program function), each
 * once; where the innermost frame of all is Node's (its JavaScript or a native),
 * that frame's key (see nodeFrameKey, '' where not), so Node's own functions have
 * self time of their own as in V8's profiles; and the line each kept frame's
 * function starts at, which tells apart the functions a module has by one name
 * (typescript.js has 8,447 such: `A.parse` and `B.parse` are both `parse` in a frame).
 */
export type StackRecord = [string[], number, boolean?, string[]?, string?, number[]?];

/** One window of samples (see CpuSampler.take). */
export interface Window {
  stacks: StackRecord[]; samples: number; idle: number;
  /** samples in paranode's module preparation below the program's innermost frame */
  tool: number;
  /** the sampling interval of this window (µs), where it is not SAMPLE_INTERVAL_US (see DEFAULT_SAMPLING_BUDGET) */
  intervalUs?: number;
  /** the CPU time V8's profiler thread took over the window (µs), where it is known */
  profilerUs?: number;
  /**
   * the stacks V8 listed in the window's profile: its timer's (`samples`, idle and the tool's
   * included) and one for every deoptimization, which come as often at any interval
   */
  listed?: number;
}

/**
 * The key of a frame ("<module>/<function>"), or null to leave it out (Node's
 * own code, the tool's, code without a script: GC, idle, natives). `line`: the
 * 1-based line the function starts at, `column` its 0-based column.
 */
export type FrameKey = (url: string, functionName: string, line: number, column: number) => string | null;

/** The process's CPU time (ms): all its threads'. */
function processCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * The key of a frame of Node's own code: "node:<module>/<function>" for its
 * JavaScript, "(native)/<function>" for code without a script (a C++ binding
 * such as `writeUtf8String`); null for the tool's code and V8's pseudo-frames
 * ("(garbage collector)", "(program)", "(idle)").
 */
export function nodeFrameKey(url: string, functionName: string): string | null {
  if (functionName.startsWith('(')) return null;
  if (!url) return functionName ? `(native)/${functionName}` : null;
  return url.startsWith('node:') ? `${url}/${lastPart(functionName) || '<anonymous>'}` : null;
}

/**
 * What reading windows and taking samples would take of the time a thread could run at
 * interval `to` (µs), from the cost `line` of windows read at `from` ([ms per window, ms per
 * listed stack]), the rates seen then (per second: windows, timer samples, stacks listed, ms
 * the thread could run) and a timer sample's price (ms); null where the thread could not run.
 */
export function predictedSamplingShare(line: [number, number], rate: { windows: number; samples: number; listed: number; runnable: number }, sampleMs: number, from: number, to: number): number | null {
  if (rate.runnable <= 0) return null;
  const timer = rate.samples * from / to;
  return (line[0] * rate.windows + line[1] * (timer + rate.listed - rate.samples) + sampleMs * timer) / rate.runnable;
}

export class CpuSampler {
  private session: inspector.Session | null = null;
  private window = 0;
  private finished: Profile | null = null;
  private post: ((method: string, params?: object) => void) | null = null;
  /** the sampling interval now (µs) */
  private interval: number;
  /** the first interval may yet be made shorter (once at most, before any other change: see shorter) */
  private mayShorten: boolean;
  /** the restart's share counted in a shortening's expected share (see shorter) */
  private restartShare = 0;
  /** what reading windows cost since `since` (ms), and its share of the time over the last second or more of them */
  private spent = 0;
  private since = 0;
  /** readyMs() at `since` */
  private readySince = 0;
  private lastShare = 0;
  private overBefore = 0;
  /** the windows read since `since`, their samples and listed stacks; and per second of the last judged span: windows, samples, listed stacks, time the thread could run (ms) */
  private windows = 0;
  private samplesSince = 0;
  private listedSince = 0;
  private rate: { windows: number; samples: number; listed: number; runnable: number } | null = null;
  /** reading cost against the stacks listed per window (the timer's and the deoptimizations'), since the last (re)start of the profiler */
  private readonly fit = new WindowCostFit();
  /** the window just read was the first of a (re)started profiler: its cost is not the run's */
  private fresh = true;
  private readonly prefix = `paranode:${process.pid}:${Math.random().toString(36).slice(2)}:`;
  /** V8's profiler thread for this thread's profiles (Linux), and its CPU time (ms) at the last window */
  private profiler: ThreadClock | null = null;
  /** ms of this thread's own time a sample takes (a signal, a walk of its stack): the calibration's, 0 unpriced */
  private sampleMs = 0;
  /**
   * What a restart of V8's profiler costs the thread (ms): twice its start, measured then
   * (V8 logs every code object of the heap again: 150-260 ms of a loaded server's main thread,
   * in which it answered a quarter of its requests); and what staying at this interval has cost
   * over what the next would have (ms), while over the budget. See nextInterval.
   */
  private restartMs = 0;
  private stayedMs = 0;
  /** when the session's sampling ends (performance.now(), ms), where the tool knows it (a duration): else -1 */
  private endsAt = -1;

  /**
   * @param isTool whether a script is paranode's code that prepares modules as they load
   *   (the load hooks, the rewrite, the parser): a sample whose innermost program frame
   *   called into it was the tool's time, not the program's
   * @param readyMs the time (ms) the thread has waited for a CPU while ready to run: the budget
   *   is a share of the time it could run (runnable-time.ts; a loaded server sharing its core
   *   paid 4.4 % of what it ran for a budget of 2.5 %)
   * @param firstUs the first interval (µs): under a cost limit MAX_INTERVAL_US (see shorter)
   */
  constructor(private readonly frameKey: FrameKey, private readonly isTool: (url: string) => boolean = () => false,
    private readonly note: (text: string) => void = () => undefined, private readonly budget = DEFAULT_SAMPLING_BUDGET,
    private readonly cpuMs: () => number = processCpuMs, private readonly readyMs: () => number = () => 0, firstUs = SAMPLE_INTERVAL_US) {
    this.interval = firstUs;
    this.mayShorten = firstUs > SAMPLE_INTERVAL_US;
  }

  /**
   * Start sampling; false where this thread has no inspector to sample with, or
   * where Node's own --cpu-prof profiles it: a console-started profile starts one
   * in every inspector session that has the Profiler on, and --cpu-prof's session
   * takes the events for answers and prints "Cannot retrieve id from CPU profile
   * response" to the program's stderr.
   */
  start(): boolean {
    if (this.session) return true;
    if (cpuProfWanted()) return false;
    try {
      const s = new inspector.Session();
      s.connect();
      s.on('Profiler.consoleProfileFinished', (m: { params: { title?: string; profile: Profile } }) => {
        if (m.params.title?.startsWith(this.prefix)) this.finished = m.params.profile;
      });
      const post = (method: string, params?: object) => {
        // an in-process session answers at once, inside post
        let failed: Error | null = null;
        s.post(method, params, (err) => { failed = err; });
        if (failed) throw failed;
      };
      post('Profiler.enable');
      post('Profiler.setSamplingInterval', { interval: this.interval });
      this.session = s;
      this.post = post;
      const t0 = performance.now(), c0 = this.cpuMs();
      this.profileWithThread(this.title(this.window));
      // a restart stops the profiler too (its thread joined, its code map dropped): on the loaded
      // server a start took 112 ms, and V8's profiler thread was gone 228 ms in the restart after it
      this.restartMs = 2 * Math.max(0, Math.min(performance.now() - t0, this.cpuMs() - c0));
      this.since = performance.now();
      this.readySince = this.readyMs();
      return true;
    } catch {
      this.stop();
      return false;
    }
  }

  /**
   * The stacks sampled since the last call, each innermost frame first, with
   * how many samples had it. A sample in none of the program's code (idle,
   * GC, Node's own code) is an empty stack: it counts as a sample. `idle`:
   * how many found the event loop waiting (Node marks the isolate idle there).
   */
  take(): Window {
    if (!this.session) return { stacks: [], samples: 0, idle: 0, tool: 0 };
    const t0 = performance.now();
    const c0 = this.cpuMs();
    const ending = this.window++;
    const interval = this.interval;
    const next = this.nextInterval();
    // read before the cut: a new interval ends the profiler's thread
    const profilerMs = this.profilerSpent();
    this.finished = null;
    if (next === interval) {
      // the next window first: the profiler must not stop between them
      inspector.console.profile(this.title(this.window));
      inspector.console.profileEnd(this.title(ending));
    } else {
      // V8 takes a new interval only with no profile running: a gap of microseconds
      inspector.console.profileEnd(this.title(ending));
      // the last profile's end ends V8's profiler thread
      this.profiler = null;
      try {
        this.post!('Profiler.setSamplingInterval', { interval: next });
        this.interval = next;
        const expected = this.predictedShare(interval, next);
        // (made shorter to the default: nothing to say)
        if (next < interval) {
          if (next > SAMPLE_INTERVAL_US) this.note(`stack samples: V8 samples the thread every ${next / 1000} ms from now on (was ${interval / 1000} ms, the first interval under a cost limit; ${(100 * ((expected ?? 0) + this.restartShare)).toFixed(1)} % ` +
            `of the time it could run expected with the profiler's restart, ${this.restartMs.toFixed(0)} ms here), their cost kept under ${+(100 * this.budget).toFixed(2)} % of the thread`);
        } else this.note(`stack samples: they took ${(100 * this.lastShare).toFixed(1)} % of the time the thread could run (${this.sampleMs > 0 ? 'reading them, V8\'s profiler thread, and taking them' : 'reading them, and V8\'s profiler thread'}); ` +
          `V8 samples it every ${next / 1000} ms from now on (was ${interval / 1000} ms${expected === null ? '' : `; ${(100 * expected).toFixed(1)} % expected`}), their cost kept under ${+(100 * this.budget).toFixed(2)} % of the thread`);
      } catch { /* kept as it was */ }
      this.profileWithThread(this.title(this.window));
    }
    const p = this.finished as Profile | null;
    this.finished = null;
    const w = p ? this.windowOf(p) : { stacks: [], samples: 0, idle: 0, tool: 0 };
    if (interval !== SAMPLE_INTERVAL_US) w.intervalUs = interval;
    if (profilerMs > 0) w.profilerUs = Math.round(profilerMs * 1000);
    const t1 = performance.now();
    // the CPU the reading took: wall time counts the waits of a thread starved of its core, and the
    // process's clock (where the thread's own is not loaded) its other threads' work; neither is more
    const cost = Math.max(0, Math.min(t1 - t0, this.cpuMs() - c0));
    // judged over a second of windows or more, not one (a window can hold a collection, a burst of new
    // stacks), and over two such seconds in a row: a program's start (modules loading, deep stacks of
    // requires) is not its run
    // and what taking the window's samples took of the thread, as calibrated
    const taking = w.samples * this.sampleMs;
    this.spent += cost + profilerMs + taking;
    const listed = w.listed ?? w.samples;
    if (next !== interval) {
      this.spent = this.windows = this.samplesSince = this.listedSince = 0; this.since = t1; this.readySince = this.readyMs(); this.lastShare = this.overBefore = this.stayedMs = 0;
      this.fit.clear(); this.rate = null; this.fresh = true;
    } else {
      // (the first window of a profile holds its start: every node new.) Reading a window costs by
      // the stacks V8 listed, deoptimizations' too; taking samples by the timer's (priced apart)
      if (!this.fresh) this.fit.add(listed, cost + profilerMs);
      this.fresh = false;
      this.windows++;
      this.samplesSince += w.samples;
      this.listedSince += listed;
      if (t1 - this.since >= 1000) {
        const ready = this.readyMs();
        const runnable = runnableTime(t1 - this.since, ready - this.readySince);
        const share = this.spent / runnable;
        const s = (t1 - this.since) / 1000;
        this.rate = { windows: this.windows / s, samples: this.samplesSince / s, listed: Math.max(this.listedSince, this.samplesSince) / s, runnable: runnable / s };
        this.readySince = ready;
        // what staying cost over the interval that would fit (the restart is judged against it)
        if (share > this.budget) this.stayedMs += Math.max(0, share - (this.predictedShare(this.interval, this.fitting()) ?? this.budget)) * runnable;
        this.lastShare = Math.min(share, this.overBefore);
        this.overBefore = share;
        this.spent = this.windows = this.samplesSince = this.listedSince = 0;
        this.since = t1;
      }
    }
    return w;
  }

  /**
   * Start a profile, and find V8's profiler thread where this start made one (the first
   * start, and the first after a new interval): the thread that was not there before.
   */
  private profileWithThread(title: string): void {
    const before = this.profiler ? null : new Set(profilerThreads());
    inspector.console.profile(title);
    if (!before) return;
    const made = profilerThreads().filter((t) => !before.has(t));
    // one new thread: ours (another thread's profiler started at the same moment: none known)
    if (made.length === 1) this.profiler = { tid: made[0], cpuMs: threadCpuMs(made[0]) };
  }

  /** The profiler thread's CPU time since the last window (ms); 0 where it is not known. */
  private profilerSpent(): number {
    if (!this.profiler) return 0;
    const spent = cpuSince(this.profiler);
    // it ended (a new interval restarts the profiler): found again at the next start
    if (Number.isNaN(spent)) { this.profiler = null; return 0; }
    return spent;
  }

  /**
   * The interval of the next window: where reading windows cost over the budget,
   * the shortest that fits it (fitting), in one step: each restart of V8's profiler
   * logs the heap's code again, costing the thread what the start did. So a restart
   * waits until staying has cost that much more than the new interval would (a
   * rent-or-buy rule: at most twice the cheaper of the two, however long the session
   * goes on), unless the samples take over twice the budget (with the consultant's
   * half of its limit: over the whole limit), which is not waited out. Where the
   * session's end is known (samplesFor), the restart is made if what it saves by then
   * is more than its cost, else never. The loaded
   * server's samples took 2.5-3.8 % at 10 ms against 1.5-2.2 % expected at 20 ms: a
   * restart of 150-260 ms pays back after 15 s or more, longer than many a search.
   * Never shorter again, but once from a running program's first interval (see shorter).
   */
  private nextInterval(): number {
    const shorter = this.shorter();
    if (shorter !== null) return shorter;
    if (this.interval >= MAX_INTERVAL_US || this.lastShare <= this.budget) return this.interval;
    const next = this.fitting();
    if (this.lastShare > 2 * this.budget) return next;
    // the session's end known: made where what it saves until then is more than it costs (a
    // 12-s diagnose of the loaded server is better off without it, a 30-s one with it)
    if (this.endsAt >= 0) {
      const saved = (this.lastShare - (this.predictedShare(this.interval, next) ?? this.budget)) * (this.endsAt - performance.now());
      return saved > this.restartMs ? next : this.interval;
    }
    return this.stayedMs < this.restartMs ? this.interval : next;
  }

  /**
   * Each restart of V8's profiler logs the heap's code again: 150-260 ms of a loaded server's main
   * thread, which answered a quarter of its requests meanwhile, and its restart from 10 ms to 40 cost
   * it some 0.3 s of requests. So under a cost limit it starts at the longest interval, and once its windows' cost line is
   * known (the first judged second), takes the shortest that fits the budget with the restart's cost
   * spread over the next SHORTEN_OVER_MS (or what is left of the session, where sooner): a small
   * program's restart costs next to nothing. Null: stay.
   */
  private shorter(): number | null {
    if (!this.mayShorten || !this.rate) return null;
    // judged once, at the first judged second: a program whose samples do not fit a shorter interval then is not asked again
    this.mayShorten = false;
    const left = Math.min(SHORTEN_OVER_MS, this.endsAt >= 0 ? this.endsAt - performance.now() : SHORTEN_OVER_MS);
    if (left <= 0 || this.rate.runnable <= 0) return null;
    const restart = this.restartMs / (this.rate.runnable * left / 1000);
    // no cost line yet (windows all alike): as if all of it grew with the samples, the most it can
    const at = (i: number) => (this.predictedShare(this.interval, i) ?? this.overBefore * this.interval / i) + restart;
    for (let i = SAMPLE_INTERVAL_US; i < this.interval; i += INTERVAL_STEP_US) if (at(i) <= this.budget) { this.restartShare = restart; return i; }
    const shorter = this.interval - INTERVAL_STEP_US;
    this.note(`stack samples: V8 samples the thread every ${this.interval / 1000} ms, the first interval under a cost limit: at ${shorter / 1000} ms they would take ` +
      `${(100 * at(shorter)).toFixed(1)} % of the time it could run with the profiler's restart (${this.restartMs.toFixed(0)} ms here), over their budget of ${+(100 * this.budget).toFixed(2)} % of the thread`);
    return null;
  }

  /** The session samples for `ms` more (a duration's end), or for as long as it is not known (< 0): see nextInterval. */
  samplesFor(ms: number): void {
    this.endsAt = ms >= 0 ? performance.now() + ms : -1;
  }

  /** The interval that the windows' cost line says fits the budget (only the samples' part shrinks with a longer interval), else the longest. */
  private fitting(): number {
    // no line yet (windows all alike): longer by the share over the budget
    if (this.predictedShare(this.interval, MAX_INTERVAL_US) === null) return Math.min(MAX_INTERVAL_US, this.interval * Math.max(2, Math.ceil(this.lastShare / this.budget)));
    for (let i = this.interval + INTERVAL_STEP_US; i < MAX_INTERVAL_US; i += INTERVAL_STEP_US) if (this.predictedShare(this.interval, i)! <= this.budget) return i;
    return MAX_INTERVAL_US;
  }

  /**
   * The share of the time the thread could run that reading windows and taking samples would
   * take at interval `to` (µs), from the cost line at `from`; null where not known. Only the
   * timer's samples thin out at a longer interval: the stacks V8 lists at each deoptimization
   * do not (the TypeScript compiler's, some 200 a second, put 3.4 % where 2.1 % was expected,
   * and a second restart of V8's profiler followed: 0.3-0.8 s of its thread each).
   */
  private predictedShare(from: number, to: number): number | null {
    const line = this.fit.line();
    return line && this.rate ? predictedSamplingShare(line, this.rate, this.sampleMs, from, to) : null;
  }

  /** What a sample takes of the thread (ns, calibrated): counted with the windows' cost against the budget. */
  priceSamples(ns: number): void {
    this.sampleMs = Number.isFinite(ns) && ns > 0 ? ns / 1e6 : 0;
  }

  stop(): void {
    const s = this.session;
    this.session = null;
    if (!s) return;
    try {
      inspector.console.profileEnd(this.title(this.window));
      s.post('Profiler.disable');
      s.disconnect();
    } catch { /* the thread is going */ }
  }

  private title(n: number): string {
    return this.prefix + n;
  }

  private windowOf(p: Profile): Window {
    const byId = new Map<number, ProfileNode>();
    const parent = new Map<number, number>();
    for (const n of p.nodes) {
      byId.set(n.id, n);
      for (const c of n.children ?? []) parent.set(c, n.id);
    }
    // V8's timer samples only, each node's hitCount. Its samples list also holds the stack of
    // every deoptimization (taken then, not by the timer: hitCount untouched), 85-90 % of the
    // TypeScript compiler's list at 40 ms, all in the functions that deoptimize
    const counts = new Map<number, number>();
    for (const n of p.nodes) if (n.hitCount) counts.set(n.id, n.hitCount);
    const out = new Map<string, Window['stacks'][number]>();
    // each node's key once: the sampled nodes' stacks share their outer frames (deep in a compiler: 2,000 nodes a window)
    const keys = new Map<number, string | null>();
    const keyOf = (id: number, f: ProfileNode['callFrame']): string | null => {
      let k = keys.get(id);
      if (k === undefined) keys.set(id, (k = f.url ? this.frameKey(f.url, f.functionName, f.lineNumber + 1, f.columnNumber) : null));
      return k;
    };
    let samples = 0, idle = 0, tool = 0;
    for (const [id, count] of counts) {
      samples += count;
      if (byId.get(id)!.callFrame.functionName === '(idle)') idle += count;
      const stack: string[] = [];
      const lines: number[] = [];
      const calls = new Set<string>();
      // the frame just inside the one at hand: its name, if it is not the program's
      let inside: string | null = null;
      let ours = false;
      // the tool's code (a handler, the sampler) ran inside the program's innermost frame; the
      // handlers are made by `new Function`: a script of their own without a url
      let handler = false;
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const f = byId.get(at)!.callFrame;
        const key = keyOf(at, f);
        if (!stack.length && key === null && (f.url ? !f.url.startsWith('node:') : f.scriptId !== '0')) handler = true;
        // inside the program's innermost frame, the tool ran: the sample is not the program's
        if (!stack.length && key === null && f.url && this.isTool(f.url)) { ours = true; break; }
        if (key !== null && inside) calls.add(`${key}\0${inside}`);
        inside = key === null && f.functionName && !f.functionName.startsWith('(') ? f.functionName : null;
        // recursion: a function once per stack, at its innermost frame
        if (key !== null && !stack.includes(key)) { stack.push(key); lines.push(f.lineNumber + 1); }
      }
      if (ours) { tool += count; continue; }
      const inner = byId.get(id)!.callFrame;
      const own = stack.length > 0 && !!inner.url && keyOf(id, inner) === stack[0];
      const node = own || handler ? null : nodeFrameKey(inner.url, inner.functionName);
      const callsOut = [...calls].sort();
      const k = stack.join('\n') + (own ? '\n' : '') + '\t' + callsOut.join('\t') + '\t' + (node ?? '') + '\t' + lines.join(',');
      const e = out.get(k);
      if (e) e[1] += count;
      else out.set(k, [stack, count, own, callsOut, node ?? '', lines]);
    }
    return { stacks: [...out.values()], samples, idle, tool, listed: p.samples?.length ?? samples };
  }
}
