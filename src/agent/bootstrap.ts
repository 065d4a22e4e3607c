// Starts the agent in a target thread: the runtime, the load hook, the relay
// worker (main thread only) and the last-sample writer. Called by the preload
// at launch and through Runtime.evaluate on attach; calling it twice is harmless.
import * as diagnostics from 'diagnostics_channel';
import * as fs from 'fs';
import * as path from 'path';
import { Worker, isMainThread, threadId } from 'worker_threads';
import { AGENT_ENV, AgentConfig, ToolIdentity } from './config';
import { installLoadHooks } from './hooks';
import { withHeldTicks } from './held-ticks';
import { forgetOwnModules } from './own-code';
import { closeInspectorPort } from './port-close';
import { install, Runtime, sessionModules } from './runtime';
import { announceExit, ExitHandshake, joinSession } from './worker-exit';

const STARTED = Symbol.for('paranode.agent');
// taken before any probe can wrap it: the agent's own messages to its relay are not the program's (msgs)
const postToWorker = Worker.prototype.postMessage;

/**
 * The main thread's relay, a cell it sets once it has let go of the main
 * thread's inspector, one it sets when its session with the tool is over, and
 * the tool it serves.
 */
interface Relay { worker: Worker; released: Int32Array; over: Int32Array; tool?: ToolIdentity }

/**
 * What the agent keeps between sessions, on a global: this module is loaded
 * afresh for each (forgetOwnModules takes it out of the module cache).
 */
interface Started { config: AgentConfig; relay: Relay | null; exit?: ExitHandshake; liveWorkers?: () => number[] }
const started = (): Started | undefined => (globalThis as any)[STARTED];

/** The tool whose session holds this process (main thread), if one does. */
export function holder(): ToolIdentity | null {
  const relay = started()?.relay;
  if (!isMainThread || !relay || Atomics.load(relay.over, 0) !== 0) return null;
  return relay.tool ?? { pid: 0, command: 'unknown' };
}

/**
 * @param waitForRelay block until the relay has reached the tool (launch: so
 * that even a program that ends at once is seen by the tool)
 */
export function start(config: AgentConfig, waitForRelay = false): { pid: number; threadId: number; busy?: ToolIdentity } {
  // one tool at a time: a second is told who holds the process, and nothing changes
  const busy = holder();
  if (busy) { forgetOwnModules(); return { pid: process.pid, threadId, busy }; }
  // the runtime counts the tool's work from here (the session's cost before its search is over this time)
  const startedAt = Date.now();
  const rt = install();
  // what a session uses, loaded now: forgotten from require.cache with the rest of ours below
  sessionModules();
  rt.activate();
  if (config.cwd) rt.cwd = config.cwd;
  if (config.prepareOnLoad) installLoadHooks(rt);
  if (config.prices) rt.priceHandlers(config.prices);
  for (const p of config.probes ?? []) rt.addProbe(p);
  if (config.watch) rt.watchThread(false, true);
  const previous = started();
  const state: Started = previous ?? { config, relay: null };
  state.config = config;
  if (!previous) {
    Object.defineProperty(globalThis, STARTED, { value: state, enumerable: false, configurable: true });
    process.on('exit', (code) => {
      writeFinal(rt, state.config.finalPath);
      release(state.relay, code);
    });
    // after the last values are written: the relay may keep this worker only briefly
    if (!isMainThread) announceExit(() => state.exit);
  }
  if (!isMainThread) state.exit = joinSession(config.token);
  if (isMainThread) {
    const connected = new Int32Array(new SharedArrayBuffer(4));
    const released = new Int32Array(new SharedArrayBuffer(4));
    const over = new Int32Array(new SharedArrayBuffer(4));
    const tid = new Int32Array(new SharedArrayBuffer(4));
    // without Node's process 'worker' event for it: the program's listeners would be told of our relay
    const worker = withHeldTicks(() => new Worker(path.join(__dirname, 'relay.js'), {
      workerData: { socketPath: config.socketPath, token: config.token, mainThreadId: threadId, connected, released, over, tid, openedPort: config.openedPort === true, startedAt },
      // the preload (NODE_OPTIONS) runs in every worker: keep it out of this one, and the
      // program's flags too (--cpu-prof, --heap-prof: a worker writes a profile file of its own)
      env: { ...process.env, [AGENT_ENV]: '', NODE_OPTIONS: '' },
      execArgv: [],
      // its stdio kept apart, unread: piped to the program's process.stdout (false), creating
      // that would make a pipe on fd 1 non-blocking, and the program's blocking writes short
      stdout: true,
      stderr: true,
    }), (relay, event, args) => event === 'worker' && args[0] === relay);
    // its messages are not the program's: on no channel (msgs, msg_wait)
    rt.instances.notProgramsWorker(worker);
    rt.relayThread(tid);
    // the relay asks before it ends (see relay.ts end()); unref'd after the listener, which refs it
    worker.on('message', (m) => { if (m === 'ping') postToWorker.call(worker, 'pong'); });
    worker.unref();
    worker.on('error', () => { /* a broken relay must not crash the program */ });
    const stopWatching = watchWorkers(worker, state);
    // a relay ends with its session (its loop drains): nothing to release at exit then
    worker.once('exit', () => { stopWatching(); if (state.relay?.worker === worker) state.relay = null; });
    state.relay = { worker, released, over, tool: config.tool };
    if (waitForRelay) Atomics.wait(connected, 0, 0, 10000);
  }
  // the port the tool's signal opened for this start (which ends the tool's own session on it)
  if (config.openedPort) closeInspectorPort();
  forgetOwnModules();
  return { pid: process.pid, threadId };
}

/**
 * The program's worker threads started during the session (main thread), as
 * `state.liveWorkers()`: the thread ids of those still running. A worker started
 * while the tool asked new workers to wait is announced to the relay only once
 * its thread runs, and it waits for good if the session ends before: the relay
 * asks for this list at the end and waits for each to be announced (relay.ts).
 * No listener on the program's Worker objects: an ended worker's threadId is -1.
 */
function watchWorkers(relay: Worker, state: Started): () => void {
  const seen = new Set<WeakRef<Worker>>();
  const onWorker = (m: unknown) => {
    const w = (m as { worker?: Worker }).worker;
    if (w && w !== relay) seen.add(new WeakRef(w));
  };
  diagnostics.subscribe('worker_threads', onWorker);
  state.liveWorkers = () => {
    const ids: number[] = [];
    for (const ref of seen) {
      const id = ref.deref()?.threadId ?? -1;
      if (id === -1) seen.delete(ref); else ids.push(id);
    }
    return ids;
  };
  return () => { diagnostics.unsubscribe('worker_threads', onWorker); delete state.liveWorkers; };
}

/**
 * The process is exiting (also after an uncaught exception): the relay lets go of
 * the main thread's inspector session first, or Node would print "Waiting for the
 * debugger to disconnect..." on the program's stderr. Waits a little, never long.
 */
function release(relay: Relay | null, code: number): void {
  if (!relay) return;
  try {
    postToWorker.call(relay.worker, { exit: code });
    Atomics.wait(relay.released, 0, 0, 500);
  } catch {
    /* exiting anyway */
  }
}

function writeFinal(rt: Runtime, finalPath: string): void {
  if (!rt.active) return;
  try {
    const file = path.join(finalPath, `${process.pid}-${threadId}.json`);
    fs.writeFileSync(file, JSON.stringify(rt.sample(true)));
  } catch {
    /* nothing sensible to do while exiting */
  }
}
