// `--require` entry used by `paranode run`: starts the agent before the
// program's first line, from the configuration the tool put in the environment.
import { AGENT_ENV, AgentConfig } from './config';
import { start } from './bootstrap';

const raw = process.env[AGENT_ENV];
// Node's loader-hooks thread runs the preload too: nothing of ours belongs there
// (it is the only worker without a parentPort)
const wt = require('worker_threads') as typeof import('worker_threads');
const loaderThread = !wt.isMainThread && wt.parentPort === null;
if (raw && !loaderThread) {
  try {
    const config = JSON.parse(raw) as AgentConfig;
    start(config, true);
  } catch (e) {
    process.stderr.write(`paranode: agent not started: ${(e as Error).message}\n`);
  }
}
