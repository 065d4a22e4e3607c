// Starts the agent in a target thread: the runtime, the load hook, the relay
// worker (main thread only) and the last-sample writer. Called by the preload
// at launch and through Runtime.evaluate on attach; calling it twice is harmless.
import * as fs from 'fs';
import * as path from 'path';
import { Worker, isMainThread, threadId } from 'worker_threads';
import { AGENT_ENV, AgentConfig } from './config';
import { installLoadHooks } from './hooks';
import { forgetOwnModules } from './own-code';
import { install, Runtime } from './runtime';

const STARTED = Symbol.for('paranode.agent');

/** The main thread's relay, and a cell it sets once it has let go of the main thread's inspector. */
let relay: { worker: Worker; released: Int32Array } | null = null;

/**
 * @param waitForRelay block until the relay has reached the tool (launch: so
 * that even a program that ends at once is seen by the tool)
 */
export function start(config: AgentConfig, waitForRelay = false): { pid: number; threadId: number } {
  const rt = install();
  rt.activate();
  if (config.cwd) rt.cwd = config.cwd;
  if (config.prepareOnLoad) installLoadHooks(rt);
  for (const p of config.probes ?? []) rt.addProbe(p);
  const g = globalThis as any;
  const previous = g[STARTED] as { config: AgentConfig } | undefined;
  g[STARTED] = { config };
  if (!previous) {
    process.on('exit', () => {
      writeFinal(rt, g[STARTED].config.finalPath);
      release();
    });
  }
  if (isMainThread) {
    const connected = new Int32Array(new SharedArrayBuffer(4));
    const released = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(path.join(__dirname, 'relay.js'), {
      workerData: { socketPath: config.socketPath, token: config.token, mainThreadId: threadId, connected, released },
      // the preload (NODE_OPTIONS) runs in every worker: keep it out of this one
      env: { ...process.env, [AGENT_ENV]: '' },
      stdout: false,
      stderr: false,
    });
    worker.unref();
    worker.on('error', () => { /* a broken relay must not crash the program */ });
    relay = { worker, released };
    if (waitForRelay) Atomics.wait(connected, 0, 0, 10000);
  }
  forgetOwnModules();
  return { pid: process.pid, threadId };
}

/**
 * The process is exiting (also after an uncaught exception): the relay lets go of
 * the main thread's inspector session first, or Node would print "Waiting for the
 * debugger to disconnect..." on the program's stderr. Waits a little, never long.
 */
function release(): void {
  if (!relay) return;
  try {
    relay.worker.postMessage('exit');
    Atomics.wait(relay.released, 0, 0, 500);
  } catch {
    /* exiting anyway */
  }
}

function writeFinal(rt: Runtime, finalPath: string): void {
  if (!rt.active) return;
  try {
    const file = path.join(finalPath, `${process.pid}-${threadId}.json`);
    fs.writeFileSync(file, JSON.stringify(rt.sample()));
  } catch {
    /* nothing sensible to do while exiting */
  }
}
