// `--require` entry used by `paranode run`: starts the agent before the
// program's first line, from the configuration the tool put in the environment.
// Then the environment is the program's own again: NODE_OPTIONS as it was meant
// to be and no paranode variable (it holds the session's token), so a child
// process starts untouched. The program's worker threads get the configuration
// through worker environment data instead (the preload runs in each of them).
import * as fs from 'fs';
import * as wt from 'worker_threads';
import { AGENT_ENV, AgentConfig } from './config';
import { start } from './bootstrap';
import { enableCodeCache } from './code-cache';
import { scaleInliningBudgets } from './inlining-budget';
import { install } from './runtime';

const ENV_DATA = 'paranode.agent';
// Node's loader-hooks thread runs the preload too: nothing of ours belongs there
// (it is the only worker without a parentPort)
const loaderThread = !wt.isMainThread && wt.parentPort === null;
const raw = process.env[AGENT_ENV] ?? (wt.isMainThread ? undefined : wt.getEnvironmentData(ENV_DATA) as string | undefined);
if (raw && !loaderThread) {
  try {
    // "@<file>": the tool wrote it to its private directory (a long probe list overflows the environment)
    const text = raw.startsWith('@') ? fs.readFileSync(raw.slice(1), 'utf8') : raw;
    const config = JSON.parse(text) as AgentConfig;
    // V8's code of the prepared modules kept as the dormant agent keeps it (code-cache.ts)
    if (config.prepareOnLoad) enableCodeCache();
    if (wt.isMainThread) {
      if (config.nodeOptions === null) delete process.env.NODE_OPTIONS;
      else if (config.nodeOptions !== undefined) process.env.NODE_OPTIONS = config.nodeOptions;
      delete process.env[AGENT_ENV];
    }
    // the relay worker (started by start()) must not get it: set for the program's workers after
    start(config, true);
    // every module is prepared from here on: V8 judges the larger prepared code by the plain code's measure
    if (wt.isMainThread && config.prepareOnLoad) scaleInliningBudgets((t) => install().note(t));
    if (wt.isMainThread) wt.setEnvironmentData(ENV_DATA, text);
  } catch (e) {
    process.stderr.write(`paranode: agent not started: ${(e as Error).message}\n`);
  }
}
