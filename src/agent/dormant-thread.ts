// Whether this thread's program is the dormant agent's to prepare, decided
// before any other module of the agent loads, and the first thing done there:
// V8's code cache switched on (code-cache.ts), so the agent's own modules, and
// every module after them, compile from it on a warm start.
import { AGENT_ENV } from './config';
import { enableCodeCache } from './code-cache';
import { isMainThread } from './thread-kind';

const DORMANT = Symbol.for('paranode.dormant');
const g = globalThis as any;

// Node's loader-hooks thread (module.register) runs preloads too, and the relay
// worker of bootstrap's start is given an empty PARANODE_AGENT: neither is the program's
// (worker_threads loaded only in a worker: see thread-kind.ts)
const loaderThread = !isMainThread() && (require('worker_threads') as typeof import('worker_threads')).parentPort === null;
const relayThread = !isMainThread() && process.env[AGENT_ENV] === '';
// a thread whose agent already runs (the program was launched by `paranode run`): that session owns it
const started = g[Symbol.for('paranode.runtime')] !== undefined;

/** True in the one evaluation of the agent's entry that prepares this thread's program. */
export const dormantHere = !loaderThread && !relayThread && !started && !g[DORMANT];

if (dormantHere) {
  Object.defineProperty(g, DORMANT, { value: true, enumerable: false, configurable: true });
  enableCodeCache();
}
