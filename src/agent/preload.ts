// `--require` entry used by `paranode run`: starts the agent before the
// program's first line, from the configuration the tool put in the environment.
import { AGENT_ENV, AgentConfig } from './config';
import { start } from './bootstrap';

const raw = process.env[AGENT_ENV];
if (raw) {
  try {
    const config = JSON.parse(raw) as AgentConfig;
    start(config, true);
  } catch (e) {
    process.stderr.write(`paranode: agent not started: ${(e as Error).message}\n`);
  }
}
