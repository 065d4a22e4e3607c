// The "why" axis for Node.js: each hypothesis is a metric (from the MDL
// library) tested against a threshold, as a fraction of one thread's time.

export interface Hypothesis {
  name: string;
  title: string;
  /** tested for the whole program, processes and threads */
  metric: string;
  /** tested for modules and functions (/Code); none: not refined along /Code */
  codeMetric?: string;
  /** default threshold: the hypothesis holds where value >= threshold */
  threshold: number;
  /**
   * The code metric counts callees too (a flag or a wait held while the
   * function is active): a caller is explained by a callee that is true too.
   */
  inclusive?: boolean;
  /**
   * Where it holds, the function is on the stack (running, or in a call it
   * made): functions the runtime's stack samples never caught are below the
   * threshold with high confidence and are not instrumented.
   */
  onStack?: boolean;
  /**
   * Each call timed adds about half a timer pair to what it measures (the
   * clock read ending the start, the one starting the stop): counted with the
   * test and taken off its value (Li and Zhang's intrusion compensation).
   */
  compensate?: 'cpuPair' | 'wallPair';
  /**
   * In /Code, values are shares of the CPU time the thread got (the
   * whole-program metric over the same window), not of its wall time: a
   * CPU-bound program that gets part of a CPU (another busy process beside
   * it) still shows each function's true share of its work.
   */
  codeShareOfCpu?: boolean;
  /**
   * The whole-program test takes this metric's time off its window: for
   * cpu_bound, the time the thread was ready to run but waited for a CPU.
   * The value is the thread's CPU need, not the CPU it got: a thread starved
   * by other processes on its cores, or throttled by a container's CPU quota,
   * runs all the time it does not wait (CPU-bound), while a thread that mostly
   * idles on I/O is stretched by the machine's load, not made CPU-bound by it.
   * (Threads are told apart by the CPU they got.)
   */
  waitMetric?: string;
  /**
   * With waitMetric: the time, per thread, that its event loop was idle. Only
   * a wait while the loop was not idle is taken off: a thread woken by I/O on
   * a loaded machine waits for a CPU inside its idle wait (libuv's epoll_wait
   * returns once it runs), and its program's I/O, not its CPU, set that pace.
   */
  idleMetric?: string;
}

export const HYPOTHESES: readonly Hypothesis[] = [
  // Refined by inclusive CPU time (native and built-in callees count for their
  // caller): the bottleneck named is the deepest function on the hot path.
  { name: 'cpu_bound', title: 'CPU-bound: JavaScript running on the CPU', metric: 'cpu', codeMetric: 'cpu_inclusive', threshold: 0.2, inclusive: true, onStack: true, compensate: 'cpuPair', codeShareOfCpu: true, waitMetric: 'cpu_wait', idleMetric: 'event_loop_idle' },
  { name: 'waiting', title: 'Waiting: the event loop idles on awaited promises, callbacks, timers or I/O', metric: 'event_loop_idle', codeMetric: 'await_wait', threshold: 0.5, inclusive: true },
  { name: 'sync_io', title: 'Blocking synchronous I/O (fs and child_process *Sync calls)', metric: 'sync_io', codeMetric: 'sync_io', threshold: 0.1, inclusive: true, onStack: true },
  { name: 'event_loop_blocked', title: 'Event loop blocked by long tasks', metric: 'event_loop_blocked', threshold: 0.5 },
  { name: 'gc', title: 'GC pressure: time in garbage collection', metric: 'gc_time', threshold: 0.1 },
  { name: 'message_passing', title: 'Message passing: time handing messages to other threads and processes', metric: 'msg_time', codeMetric: 'msg_time', threshold: 0.05, inclusive: true, onStack: true },
  { name: 'instrumentation', title: "Instrumentation overhead: paranode's own inserted code", metric: 'observed_cost', threshold: 0.05 },
];

/** `name=value` pairs (from --threshold) over the defaults; unknown names are errors. */
export function thresholds(over: Record<string, number> = {}): Map<string, number> {
  const out = new Map(HYPOTHESES.map((h) => [h.name, h.threshold]));
  for (const [k, v] of Object.entries(over)) {
    if (!out.has(k)) throw new Error(`unknown hypothesis "${k}" (known: ${HYPOTHESES.map((h) => h.name).join(', ')})`);
    if (!(v >= 0)) throw new Error(`threshold of ${k} must be a number, 0 or more (a fraction of a thread's time)`);
    out.set(k, v);
  }
  return out;
}

export function hypothesis(name: string): Hypothesis {
  const h = HYPOTHESES.find((x) => x.name === name);
  if (!h) throw new Error(`unknown hypothesis "${name}" (known: ${HYPOTHESES.map((x) => x.name).join(', ')})`);
  return h;
}
