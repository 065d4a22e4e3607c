// ES modules: prepared at load by a loader hook (launch), by LiveEdit when already loaded (attach).
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { Session } from '../src/api';
import { FIXTURES, Target, programOutput } from './support/helpers';

const app = path.join(FIXTURES, 'esm', 'app.mjs');
const probes = ['/Code/esm/lib.mjs/f.entry: n++', '/Code/esm/app.mjs/twice.entry: t++', '/Code/esm/lib.mjs/g.await: w++'];

test('launched: ES modules (with a cycle) are prepared at load and count exactly', async () => {
  const s = await Session.launch([process.execPath, app], probes, { stdio: 'pipe', cwd: FIXTURES });
  after(() => s.child!.kill());
  const { until } = programOutput(s.child!);
  await until(/ready/);
  s.child!.stdin!.write('400\n');
  await until(/sum 160000/);
  await s.sample();
  assert.equal(s.value('n'), 400);
  assert.equal(s.value('t'), 400);
  const prepared = (await s.resources('/Code/esm/*/*')).map((r) => `${r.path} ${r.prepared}`);
  assert.ok(prepared.includes('/Code/esm/lib.mjs/f load'), prepared.join('\n'));
  await s.detach();
});

test('attached: already-loaded ES modules are prepared by LiveEdit and count exactly', async () => {
  const t = new Target(app);
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await Session.attach(t.pid);
  for (const p of probes.slice(0, 2)) await s.probe(p);
  await t.request('250', /sum 62500/);
  await s.sample();
  assert.equal(s.value('n'), 250);
  assert.equal(s.value('t'), 250);
  await s.detach();
  assert.match((await t.request('3', /sum (\d+)/))[1], /^9$/);
});
