// Bad input gets a clear one-line error, and the target is unharmed.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { CLI, FIXTURES, Target } from './support/helpers';

const counted = path.join(FIXTURES, 'counted.js');
const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: FIXTURES });

function oneLine(r: { status: number | null; stderr: string }, re: RegExp): void {
  assert.equal(r.status, 2);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], re);
}

test('malformed snippet names line and column', () => {
  oneLine(cli(['run', '-q', '-p', '/Code/counted.js/f.entry: c +* 2', '--', process.execPath, counted]), /^paranode: syntax error: .*\(snippet line 1, column \d+\)$/);
  oneLine(cli(['run', '-q', '-p', '/Code/counted.js/f.entry: while (1) c++', '--', process.execPath, counted]), /while statement is not allowed/);
  oneLine(cli(['run', '-q', '-p', '/Code/counted.js/f.exit: if ($arg[0]) c++', '--', process.execPath, counted]), /\$arg\[i\] is only available at entry and call points/);
});

test('unknown resource, dead pid and non-Node pid; the target keeps running', async () => {
  const t = new Target(counted);
  after(() => t.kill());
  await t.waitFor(/ready/);
  oneLine(cli(['attach', String(t.pid), '-q', '-p', '/Code/counted.js/nosuch.entry: c++']), /^paranode: unknown resource: no function matches \/Code\/counted.js\/nosuch/);
  assert.match((await t.request('10', /done (\d+)/))[0], /done/);
  oneLine(cli(['attach', '99999999']), /^paranode: no process with pid 99999999$/);
  const sleeper = spawn('sleep', ['30']);
  after(() => sleeper.kill());
  oneLine(cli(['attach', String(sleeper.pid)]), /^paranode: process \d+ \(sleep\) is not a Node.js process$/);
  assert.equal(sleeper.exitCode, null, 'the non-Node process was not signalled');
});
