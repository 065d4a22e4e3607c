// ES modules: prepared at load by a loader hook (launch), by LiveEdit when already loaded (attach).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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

test('source-phase imports (`import source x from`, `import source from from`, `import.source()`) are prepared where V8 compiles them and count exactly; elsewhere V8 reports its own error', async () => {
  // Node 24 and 26 compile them (acorn alone does not: the module was left unprepared); Node 22 does not
  const plain = spawnSync(process.execPath, ['esm/source-phase.mjs'], { cwd: FIXTURES, encoding: 'utf8', input: 'exit\n' });
  const s = await Session.launch([process.execPath, 'esm/source-phase.mjs'], ['/Code/esm/source-phase.mjs/load.entry: n++'], { stdio: 'pipe', cwd: FIXTURES });
  after(() => s.child!.kill());
  let stdout = '', stderr = '';
  s.child!.stdout!.on('data', (d) => { stdout += d; });
  s.child!.stderr!.on('data', (d) => { stderr += d; });
  const compiles = Number(process.versions.node.split('.')[0]) >= 24;
  if (compiles) {
    // while it waits for its line: prepared at load, and counted
    await programOutput(s.child!).until(/not-wasm\.mjs: /);
    await s.sample();
    assert.equal(s.value('n'), 2);
    const load = (await s.resources('/Code/esm/source-phase.mjs/*')).find((r) => r.path.endsWith('/load'));
    assert.equal(load?.prepared, 'load');
    s.child!.stdin!.write('exit\n');
  }
  await s.waitForExit();
  assert.equal(stdout, plain.stdout);
  assert.equal(stderr, plain.stderr);
  assert.equal(s.exitCode, plain.status);
  if (compiles) {
    assert.equal(plain.stdout, '[object WebAssembly.Module] true\n./empty.wasm: [object WebAssembly.Module]\n./not-wasm.mjs: SyntaxError\n');
  } else {
    assert.match(plain.stderr, /SyntaxError/);
    // the module never compiled: the probe found no function to count in
    assert.ok(!s.value('n'), `n = ${s.value('n')}`);
  }
});
