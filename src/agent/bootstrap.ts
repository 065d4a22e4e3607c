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
    process.on('exit', () => writeFinal(rt, g[STARTED].config.finalPath));
  }
  if (isMainThread) {
    const connected = new Int32Array(new SharedArrayBuffer(4));
    const relay = new Worker(path.join(__dirname, 'relay.js'), {
      workerData: { socketPath: config.socketPath, token: config.token, mainThreadId: threadId, connected },
      // the preload (NODE_OPTIONS) runs in every worker: keep it out of this one
      env: { ...process.env, [AGENT_ENV]: '' },
      stdout: false,
      stderr: false,
    });
    relay.unref();
    relay.on('error', () => { /* a broken relay must not crash the program */ });
    if (waitForRelay) Atomics.wait(connected, 0, 0, 10000);
  }
  forgetOwnModules();
  return { pid: process.pid, threadId };
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
