// Closing the inspector port that the tool's signal opened, for good.
//
// Node handles SIGUSR1 on a thread of its own (SignalInspector; unnamed on Node
// 22) that asks the main thread to open the port twice: through an async handle
// the event loop runs in its poll phase, and through an interrupt
// (Agent::RequestIoThreadStart, Node 22-26). The first to run opens the port,
// the second finds it open and does nothing -- unless the port was closed in
// between: then it opens it again, and nobody closes it. Measured on Node 26
// with a program busy in 200 ms setImmediate callbacks: a close from a
// setTimeout (timers phase, before the poll phase) left the port open in 8 of
// 10 attaches. And the signal thread can be preempted between its two requests
// (the main thread it wakes takes its core), for as long as a loaded machine
// makes it wait: CI found the port open after 1 of 100 attaches to an idle
// program. So the close waits until that thread is asleep again (its requests
// all made), then for a whole turn of the event loop (whose poll phase runs
// them), and only then closes.

/**
 * Close the inspector port once no request of a signal to open it can still
 * be on its way (see above). Returns at once. Self-contained: it also runs as
 * the expression CLOSE_PORT, where the agent is not loaded.
 */
export function closeInspectorPort(): void {
  const inspector = process.getBuiltinModule('inspector');
  const fs = process.getBuiltinModule('fs');
  /**
   * Is the signal's thread awake (mid-request)? On Node 24+ it is named SignalInspector. On
   * Node 22 it has no name of its own (nor have V8's workers or the port's InspectorIo thread,
   * busy while the tool talks to it): it is the last thread Node starts with the process,
   * after V8's workers (the highest id of the unnamed threads started within a second of the
   * main thread; a clock tick is 10 ms)
   */
  const signalThreadAwake = (): boolean => {
    let tids: string[];
    try { tids = fs.readdirSync('/proc/self/task'); } catch { return false; /* no /proc */ }
    const threads: { tid: number; name: string; state: string; start: number }[] = [];
    // read into memory of its own, not Buffer's pool (see unpooled.ts: this can run by interrupt)
    const buf = Buffer.allocUnsafeSlow(1024);
    const read = (file: string): string => {
      const fd = fs.openSync(file, 'r');
      try { return buf.toString('latin1', 0, fs.readSync(fd, buf, 0, buf.length, 0)); } finally { fs.closeSync(fd); }
    };
    for (const tid of tids) {
      try {
        const stat = read(`/proc/self/task/${tid}/stat`);
        const end = stat.lastIndexOf(')');
        const fields = stat.slice(end + 2).split(' ');
        threads.push({ tid: Number(tid), name: stat.slice(stat.indexOf('(') + 1, end), state: fields[0], start: Number(fields[19]) });
      } catch { /* the thread ended meanwhile */ }
    }
    const main = threads.find((t) => t.tid === process.pid);
    const atStart = threads.filter((t) => t.tid !== process.pid && t.name === 'node' && main && t.start - main.start <= 100);
    const signal = threads.find((t) => t.name === 'SignalInspector') ?? atStart.sort((a, b) => b.tid - a.tid)[0];
    return signal !== undefined && signal.state !== 'S';
  };
  // bounded: should another thread be taken for the signal's, it closes anyway
  const until = Date.now() + 1000;
  let turns = 0;
  const step = () => {
    if (turns === 0 && Date.now() < until && signalThreadAwake()) { setTimeout(step, 1); return; }
    // the first turn ends where this one began; a whole one follows
    if (++turns < 2) { setImmediate(step); return; }
    if (inspector.url()) inspector.close();
  };
  // not unref'd: an idle loop would wait in its poll phase for some other event first
  setImmediate(step);
}

/** closeInspectorPort as an expression to evaluate in a target's main thread */
export const CLOSE_PORT = `(${closeInspectorPort.toString()})()`;
