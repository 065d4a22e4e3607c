// Instances of /SyncObject resources, seen as the program runs: files
// (/SyncObject/File/<absolute path>) and message channels
// (/SyncObject/Message/<channel>). A snippet picks one with name[$file(x)] or
// name[$channel(x)]; its counter, timer or queue cell ("<name>@<resource>") is made
// the first time the instance is seen, so one placement keeps a vector over
// every instance, those that appear later included.
import * as diagnostics from 'diagnostics_channel';
import * as fs from 'fs';
import * as path from 'path';
import { fileURLToPath } from 'url';
import type { Intrusion } from './intrusion';
import { monotonicMs } from './monotonic-clock';

/** what the instances need of the runtime: its cells and clocks */
export interface Cells {
  readonly T: Float64Array;
  readonly intrusion: Intrusion;
  counter(name: string): number;
  timer(name: string): number;
  readonly counterIndex: Map<string, number>;
  readonly timerIndex: Map<string, number>;
  now(): number;
  cpu(): number;
  useCpuClock(): void;
  cwd: string;
}

// taken before anything can wrap it: reading an fd's path must not run a probe
const readlink = fs.readlinkSync;
const OWN = path.join(__dirname, '..');

let wtModule: typeof import('worker_threads') | undefined;
/** node:worker_threads, loaded once (a queue asks at every message) */
const workerThreads = () => wtModule ??= require('worker_threads') as typeof import('worker_threads');

/** Is the code calling into the snippet (past paranode's own frames and the handler) Node's? Asked once per port. */
function sentByNode(): boolean {
  const prepare = Error.prepareStackTrace, limit = Error.stackTraceLimit;
  try {
    Error.stackTraceLimit = 30;
    Error.prepareStackTrace = (_e, calls) => calls;
    const calls = new Error().stack as unknown as NodeJS.CallSite[];
    for (const c of calls) {
      const f = c.getFileName() ?? '';
      if (!f || f.startsWith(OWN)) continue;
      return f.startsWith('node:');
    }
    return false;
  } catch {
    return false;
  } finally {
    Error.prepareStackTrace = prepare;
    Error.stackTraceLimit = limit;
  }
}

export class Instances {
  /** resources seen since the last sample */
  private fresh: string[] = [];
  private readonly seen = new Set<string>();
  /** per indexed timer: the cells started and not yet stopped, innermost last */
  private readonly running = new Map<string, number[]>();
  private ports = new WeakMap<object, string>();
  private nextPort = 1;
  /** per queue cell: when it first changed (the process's monotonic clock, ms) */
  readonly queueBorn = new Map<number, number>();
  /** per queue cell: the messages this thread sent on it (its count is sends less dispatches) */
  readonly queueSent = new Map<number, number>();
  /** per queue cell: its queue's name (the metric's variable) */
  private readonly queueName = new Map<number, string>();
  /** queues whose sends count nothing while their placement goes into the threads */
  private readonly held = new Set<string>();
  /** the port each Worker of this thread receives its messages on (its public port), as the worker's channel */
  private readonly workerPorts = new WeakMap<object, string>();

  constructor(private readonly rt: Cells) {
    // Workers started from now on: the port their messages arrive on is known before the first arrives
    try {
      diagnostics.subscribe('worker_threads', (m) => {
        // (a subscriber's exception would reach the program, as an uncaught one)
        try { this.learnWorker((m as { worker?: unknown }).worker); } catch { /* learnt as the thread sends to it */ }
      });
    } catch { /* no such channel: learnt as the thread sends to them */ }
  }

  /** The cell of `name` for the instance `x` stands for (4 × timer index for timers); -1 when x names none. */
  cell(name: string, timer: boolean, kind: 'file' | 'channel' | 'queue', x: unknown): number {
    const r = kind === 'file' ? this.fileOf(x) : kind === 'queue' ? this.queueOf(x) : this.channelOf(x);
    if (!r) return -1;
    const key = `${name}@${r}`;
    if (!this.seen.has(r)) { this.seen.add(r); this.fresh.push(r); }
    if (kind === 'queue') {
      const i = 4 * (this.rt.timerIndex.get(key) ?? this.rt.timer(key));
      this.queueName.set(i, name);
      return i;
    }
    if (timer) return 4 * (this.rt.timerIndex.get(key) ?? this.rt.timer(key));
    return this.rt.counterIndex.get(key) ?? this.rt.counter(key);
  }

  start(name: string, i: number, cpu: boolean): void {
    let st = this.running.get(name);
    if (!st) this.running.set(name, (st = []));
    st.push(i);
    if (i < 0) return;
    const T = this.rt.T;
    if (T[i + 2]++ === 0) {
      if (cpu) this.rt.useCpuClock();
      T[i + 1] = cpu ? this.rt.cpu() : this.rt.now();
      T[i + 3] = cpu ? 1 : 0;
      this.rt.intrusion.at(i);
    }
  }

  stop(name: string): void {
    const i = this.running.get(name)?.pop();
    if (i === undefined || i < 0) return;
    const T = this.rt.T;
    if (T[i + 2] > 0 && --T[i + 2] === 0) {
      const d = (T[i + 3] ? this.rt.cpu() : this.rt.now()) - T[i + 1];
      T[i] += d;
      this.rt.intrusion.add(i, d);
    }
  }

  /**
   * A message enters (d = 1: sent) or leaves (d = -1: its dispatch begins) the
   * queue in cell i. The cell holds [integral, last change, count here, 2]: the
   * integral of this thread's count over time, on the process's monotonic clock
   * (every thread reads the same one). Summed over the threads at one time,
   * with each thread's count carried to it (SampledSeries), the integral of the
   * messages in flight is the time they waited (Little's law): no message is
   * marked and no list is kept.
   */
  queue(i: number, d: number): void {
    if (i < 0 || (d > 0 && this.held.size > 0 && this.held.has(this.queueName.get(i)!))) return;
    const T = this.rt.T;
    const t = monotonicMs();
    if (T[i + 3] !== 2) this.queueBorn.set(i, t);
    T[i] += T[i + 2] * (t - T[i + 1]);
    T[i + 1] = t;
    T[i + 2] += d;
    T[i + 3] = 2;
    if (d > 0) this.queueSent.set(i, (this.queueSent.get(i) ?? 0) + 1);
  }

  holdQueues(name: string, hold: boolean): void {
    if (hold) this.held.add(name); else this.held.delete(name);
  }

  /**
   * The channel of a queue: a worker's (the Worker's side sending, its public
   * port receiving; parentPort in the worker), where both ends name it alike and
   * every message sent is one dispatched. Other channels have none: a
   * BroadcastChannel's message is dispatched once per listening channel, and
   * a MessageChannel's two ports are not known to be one channel.
   */
  queueOf(x: unknown): string | null {
    if (!x || typeof x !== 'object') return null;
    const wt = workerThreads();
    if (x === wt.parentPort) return `/SyncObject/Message/worker/${wt.threadId}`;
    if (this.ports.get(x) === '') return null;
    if (x instanceof wt.Worker) return this.learnWorker(x);
    return this.workerPorts.get(x) || null;
  }

  /** A Worker that is not the program's (the agent's relay): its messages are on no channel. */
  notProgramsWorker(w: unknown): void {
    const k = w && typeof w === 'object' ? Object.getOwnPropertySymbols(w).find((s) => s.description === 'kPublicPort') : undefined;
    const port = k && (w as Record<symbol, unknown>)[k];
    if (port && typeof port === 'object') this.workerPorts.set(port, '');
    if (w && typeof w === 'object') this.ports.set(w, '');
  }

  /** A Worker's channel, its public port noted (the port of a Worker is an internal of Node's: found by its symbol's name). */
  private learnWorker(w: unknown): string | null {
    const wt = workerThreads();
    if (!(w instanceof wt.Worker)) return null;
    const name = `/SyncObject/Message/worker/${w.threadId}`;
    const k = Object.getOwnPropertySymbols(w).find((s) => s.description === 'kPublicPort');
    const port = k && (w as unknown as Record<symbol, unknown>)[k];
    if (port && typeof port === 'object' && !this.workerPorts.has(port)) this.workerPorts.set(port, name);
    if (this.workerPorts.get(port as object) === '') return null;
    return name;
  }

  /** Resources seen for the first time since the last call. */
  takeFresh(): string[] {
    const f = this.fresh;
    this.fresh = [];
    return f;
  }

  /** Every resource seen so far. */
  all(): string[] {
    return [...this.seen];
  }

  /** A path (string, Buffer, file: URL) or a file descriptor, as /SyncObject/File/<absolute path>. */
  fileOf(x: unknown): string | null {
    let p: string | null = null;
    if (typeof x === 'string') p = x;
    else if (Buffer.isBuffer(x)) p = x.toString();
    else if (x instanceof URL) { if (x.protocol === 'file:') p = fileURLToPath(x); }
    else if (typeof x === 'number' && Number.isInteger(x) && x >= 0) {
      // what the descriptor is open on now (Linux); descriptors are reused, so not cached
      try { p = readlink(`/proc/self/fd/${x}`); } catch { p = `fd:${x}`; }
      if (!p.startsWith('/')) return `/SyncObject/File/${p}`;
    }
    if (p === null || p === '') return null;
    return `/SyncObject/File${path.resolve(this.rt.cwd, p)}`;
  }

  /**
   * The channel a message goes over, from its sender (`this` of postMessage or
   * send): worker/<threadId> for a Worker and, in the worker, its parentPort
   * (the same name on both sides), broadcast/<name>, ipc for process.send,
   * port/<n> for other MessagePorts in the order this thread first used them.
   */
  channelOf(x: unknown): string | null {
    if (!x || typeof x !== 'object') return null;
    if (x === process) return '/SyncObject/Message/ipc';
    const known = this.ports.get(x);
    if (known !== undefined) return known || null;
    let name: string | null = null;
    const wt = workerThreads();
    if (typeof BroadcastChannel !== 'undefined' && x instanceof BroadcastChannel) name = `broadcast/${x.name}`;
    else if (x instanceof wt.Worker) name = `worker/${x.threadId}`;
    else if (x instanceof wt.MessagePort) {
      if (x === wt.parentPort) name = `worker/${wt.threadId}`;
      // a port only Node's own code sends on (a Worker's script loading and
      // stdio): those messages are not the program's
      else if (sentByNode()) { this.ports.set(x, ''); return null; }
      else name = `port/${this.nextPort++}`;
    }
    if (!name) return null;
    const r = `/SyncObject/Message/${name}`;
    this.ports.set(x, r);
    return r;
  }

  reset(): void {
    this.running.clear();
    this.queueBorn.clear();
    this.queueSent.clear();
    this.queueName.clear();
    this.held.clear();
    this.ports = new WeakMap();
    this.nextPort = 1;
    this.seen.clear();
    this.fresh = [];
  }
}
