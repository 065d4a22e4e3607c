// Semantic transparency: third-party programs with every function instrumented
// at entry, exit and call sites produce byte-identical output.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { Session } from '../src/api';
import { CLI, FIXTURES, ROOT, runNode, Target } from './support/helpers';

const EVERYTHING = ['/Code/**.entry: e++', '/Code/**.exit: x++', '/Code/**.calls: k++', '/Code/**.calls postInsn: r++'];

for (const program of ['esprima-run.js', 'marked-run.js']) {
  test(`${program}: launched with every function instrumented, output is byte-identical`, () => {
    const plain = runNode([path.join(FIXTURES, program)], ROOT);
    assert.equal(plain.status, 0, plain.stderr);
    const json = path.join(FIXTURES, `.${program}.json`);
    const args = [CLI, 'run', '-q', '--json', json, ...EVERYTHING.flatMap((p) => ['-p', p]), '--', process.execPath, path.join(FIXTURES, program)];
    const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 28 });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.stdout.length > 10000);
    assert.ok(r.stdout === plain.stdout, 'output differs from the uninstrumented run');
    const out = JSON.parse(fs.readFileSync(json, 'utf8'));
    const v = (n: string) => out.metrics.find((m: any) => m.name === n)?.total ?? 0;
    // every call site that ran counted before and after; entries ran
    assert.ok(v('e') > 1000, `entries: ${v('e')}`);
    assert.ok(v('k') >= v('r') && v('r') > 1000, `calls ${v('k')} / returned ${v('r')}`);
    fs.rmSync(json);
  });
}

test('a program that looks at itself (module cache, stack while loading, its function text) sees the same launched', () => {
  const program = path.join(FIXTURES, 'sees-itself.js');
  const plain = runNode([program], ROOT);
  assert.equal(plain.status, 0, plain.stderr);
  const r = spawnSync(process.execPath, [CLI, 'run', '-q', '-p', '/Code/**.entry: e++', '--', process.execPath, program], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, plain.stdout);
  assert.equal(r.stderr, plain.stderr);
});

test('launched: an ES module main and a CommonJS one print the same stacks as plainly, and a program listening for process "worker" events is not told of paranode\'s relay', () => {
  for (const program of ['sees/stack.mjs', 'sees/worker-events.js']) {
    const input = 'count\nexit\n';
    const plain = spawnSync(process.execPath, [program], { cwd: FIXTURES, encoding: 'utf8', input });
    assert.equal(plain.status, 0, plain.stderr);
    const r = spawnSync(process.execPath, [CLI, 'run', '-q', '-p', '/Code/**.entry: e++', '--', process.execPath, program], { cwd: FIXTURES, encoding: 'utf8', input });
    assert.equal(r.status, 0, r.stderr);
    // before: one more frame (processTicksAndRejections) under the ES module main, and "worker events 1"
    assert.equal(r.stdout, plain.stdout);
    assert.equal(r.stderr, plain.stderr);
  }
});

test('attached: a program listening for process "worker" events is not told of paranode\'s relay', async () => {
  const t = new Target(path.join(FIXTURES, 'sees', 'worker-events.js'));
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await Session.attach(t.pid);
  after(() => s.detach());
  await s.probe('/Code/sees/worker-events.js/**.entry: e++');
  await t.request('count', /worker events (\d+)/).then((m) => assert.equal(m[1], '0'));
  await s.detach();
  await t.request('count', /worker events (\d+)/).then((m) => assert.equal(m[1], '0'));
});

test('launched: a program that dies of an uncaught exception (in a function, a generator, an async function) prints Node\'s banner as plainly: line, caret, stack, exit code', () => {
  for (const where of ['function', 'generator', 'async']) {
    const plain = spawnSync(process.execPath, ['sees/uncaught.js', where], { cwd: FIXTURES, encoding: 'utf8' });
    assert.equal(plain.status, 1);
    assert.match(plain.stderr, /uncaught\.js:\d+\n {2}throw new \w+\('from an? [\w ]+'\);\n +\^\n/);
    const r = spawnSync(process.execPath, [CLI, 'run', '-q', '-p', '/Code/**.entry: e++', '--', process.execPath, 'sees/uncaught.js', where], { cwd: FIXTURES, encoding: 'utf8' });
    // before: a generator's exception was rethrown from a catch of ours, and the banner showed that line
    assert.equal(r.stderr, plain.stderr, where);
    assert.equal(r.status, plain.status, where);
  }
});
