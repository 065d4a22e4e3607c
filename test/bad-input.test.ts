// Bad input gets a clear one-line error, and the target is unharmed.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { CLI, FIXTURES, ROOT, Target } from './support/helpers';

const counted = path.join(FIXTURES, 'counted.js');
const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: FIXTURES });

function oneLine(r: { status: number | null; stderr: string }, re: RegExp): void {
  assert.equal(r.status, 2);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], re);
}

test('--version prints the package\'s version; an unknown option says which and shows the help', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
  for (const flag of ['--version', '-V']) {
    const r = cli([flag]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${pkg.version}\n`);
  }
  const r = cli(['--nosuch']);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^error: unknown option '--nosuch'\n/);
  assert.match(r.stderr, /Usage: paranode \[options\] \[command\]/);
});

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
  oneLine(cli(['attach', String(sleeper.pid)]), /^paranode: process \d+ \(sleep\) is not a Node.js process: its executable defines no Node.js symbols$/);
  assert.equal(sleeper.exitCode, null, 'the non-Node process was not signalled');
});

test('a process is taken for Node by its executable, not its name, and never signalled if SIGUSR1 would kill it', async () => {
  // a copy of `sleep` named node_exporter (issue #16: it died of SIGUSR1)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-notnode-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const fake = path.join(dir, 'node_exporter');
  fs.copyFileSync('/bin/sleep', fake);
  fs.chmodSync(fake, 0o755);
  const impostor = spawn(fake, ['30']);
  after(() => impostor.kill());
  await new Promise((r) => impostor.once('spawn', r));
  oneLine(cli(['attach', String(impostor.pid)]), /^paranode: process \d+ \(node_exporter\) is not a Node.js process: its executable defines no Node.js symbols$/);
  assert.equal(impostor.exitCode, null);
  assert.equal(impostor.signalCode, null);
  // a real Node that does not handle SIGUSR1
  const t = new Target(counted, [], ['--disable-sigusr1']);
  after(() => t.kill());
  await t.waitFor(/ready/);
  oneLine(cli(['attach', String(t.pid)]), /^paranode: process \d+ \(\S+\) does not handle SIGUSR1 \(started with --disable-sigusr1\?\): signalling it would kill it/);
  assert.match((await t.request('10', /done (\d+)/))[0], /done/);
});

test('a malformed probe is refused before the target is touched: no signal, no agent, no thread', async () => {
  const t = new Target(counted);
  after(() => t.kill());
  await t.waitFor(/ready/);
  const threads = () => fs.readdirSync(`/proc/${t.pid}/task`).length;
  const before = threads();
  oneLine(cli(['attach', String(t.pid), '-p', '/Code/counted.js/f.entry: c +* 1']), /^paranode: syntax error: .*\(snippet line 1, column \d+\)$/);
  assert.equal(threads(), before);
  assert.match((await t.request('10', /done (\d+)/))[0], /done/);
});
