// V8 inlines by bytecode size, and prepared code is larger: the agent scales
// V8's inlining budgets where the program is prepared from its first line, so
// that it inlines what the plain program inlines (src/agent/inlining-budget.ts).
// The oracle is V8's own trace of TurboFan's inlining decisions, with
// optimization on the main thread so that it happens before the program ends.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { AGENT, CLI, FIXTURES } from './support/helpers';

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-inlining-test-'));
after(() => fs.rmSync(TMP, { recursive: true, force: true }));
const TRACE = ['--trace-turbo-inlining', '--no-concurrent-recompilation'];

/** Run `args` (node's arguments for the fixture, or a paranode command line); whether V8 inlined step into run. */
function inlined(args: string[], env: NodeJS.ProcessEnv = {}): boolean {
  const r = spawnSync(process.execPath, args, { cwd: FIXTURES, encoding: 'utf8', env: { ...process.env, PARANODE_CACHE_DIR: path.join(TMP, 'cache'), ...env }, maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, r.stderr);
  // the program's own answer, unchanged by how it was compiled (V8's trace, buffered, may cut into its line)
  assert.match(r.stdout, /628354/);
  assert.match(r.stdout, /<SharedFunctionInfo step>/, `the trace is on: TurboFan's inlining considered step\n${r.stdout.slice(-2000)}\n${r.stderr}`);
  return /Inlining .*<SharedFunctionInfo step>.* into .*<SharedFunctionInfo run>/.test(r.stdout);
}

const fixture = 'inline-budget.js';

test('the plain program: V8 inlines step into run', () => {
  assert.equal(inlined([...TRACE, fixture]), true);
});

test('prepared by the dormant agent, V8 still inlines step into run (its budgets scaled); with them as they were, it does not', () => {
  assert.equal(inlined(['--import', AGENT, ...TRACE, fixture]), true);
  assert.equal(inlined(['--import', AGENT, ...TRACE, fixture], { PARANODE_INLINING_SCALE: '1' }), false);
});

test('launched by paranode run, V8 inlines step into run; a program that sets its own inlining budget keeps it, and the session says so', () => {
  assert.equal(inlined([CLI, 'run', '-q', '--', process.execPath, ...TRACE, fixture]), true);
  const json = path.join(TMP, 'own.json');
  assert.equal(inlined([CLI, 'run', '-q', '--json', json, '--', process.execPath, ...TRACE, '--max-inlined-bytecode-size=460', fixture]), false);
  const notes = (JSON.parse(fs.readFileSync(json, 'utf8')) as { notes?: string[] }).notes ?? [];
  assert.ok(notes.some((n) => /inlining budgets left as they are \(the program sets --max-inlined-bytecode-size=460\)/.test(n)), JSON.stringify(notes));
});
