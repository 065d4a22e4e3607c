// Semantic transparency: third-party programs with every function instrumented
// at entry, exit and call sites produce byte-identical output.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { CLI, FIXTURES, ROOT, runNode } from './support/helpers';

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
