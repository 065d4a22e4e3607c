// The LiveEdit path on third-party code: attached after its modules were loaded.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { Session } from '../src/api';
import { CLI, FIXTURES, Target } from './support/helpers';

/** Run one parse and return the AST line it printed (output is ~11 MB: no regex over it). */
async function parseOnce(t: Target): Promise<string> {
  const from = t.out.length;
  await t.request('go', /\nend\n/);
  const text = t.out.slice(from);
  return text.slice(0, text.indexOf('\nend\n'));
}

test('esprima attached after load, every function instrumented: output byte-identical', async () => {
  const plain = new Target(path.join(FIXTURES, 'esprima-attach.js'));
  after(() => plain.kill());
  await plain.waitFor(/ready/);
  const expected = await parseOnce(plain);
  plain.kill();

  const t = new Target(path.join(FIXTURES, 'esprima-attach.js'));
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await Session.attach(t.pid);
  const placed = [];
  for (const p of ['.entry: e++', '.exit: x++', '.calls: k++', '.calls postInsn: r++']) placed.push((await s.probe(`/Code/**/esprima/dist/esprima.js/*${p}`)).placed);
  const got = await parseOnce(t);
  await s.sample();
  const v = (n: string) => s.metrics().find((m) => m.name === n)?.total ?? 0;
  await s.detach();
  assert.ok(got === expected, 'output differs from the uninstrumented run');
  assert.ok(placed.every((n) => n > 400), `points placed: ${placed}`);
  assert.ok(v('e') > 100000 && v('k') > 100000 && v('r') > 100000, `e ${v('e')} k ${v('k')} r ${v('r')}`);
});

test('a LiveEdit of a huge script is refused with its predicted pause', async () => {
  const t = new Target(path.join(FIXTURES, 'typescript-loaded.js'));
  after(() => t.kill());
  await t.waitFor(/ready/);
  const r = spawnSync(process.execPath, [CLI, 'attach', String(t.pid), '-q', '-p', '/Code/**/typescript.js/createSourceFile@*.entry: c++'], { encoding: 'utf8', cwd: FIXTURES });
  assert.equal(r.status, 2);
  assert.match(r.stderr.trim(), /^paranode: refused to LiveEdit .*typescript\.js: it would pause the target for about \d+ ms \(script \d+\.\d MB, heap \d+ MB\), over the limit of 2000 ms \(--max-pause\)$/);
  assert.match((await t.request('v', /version (\S+)/))[1], /^\d/);
});
