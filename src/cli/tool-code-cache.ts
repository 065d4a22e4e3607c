// First import of the command line: V8's code of the tool's own modules (about a hundred
// files, ~160 ms to load) kept in the start-up cache's v8/ directory, as the agent keeps
// the program's (agent/code-cache.ts, with the same ways to turn it off). Only this
// process: Node passes it on to no child, so the program the tool launches is untouched.
import { enableCodeCache } from '../agent/code-cache';

enableCodeCache();
