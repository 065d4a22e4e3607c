// The fallback mechanisms, for code that cannot be prepared: conditional
// breakpoints (a script whose function stays active, a script refused for its
// LiveEdit pause) and wrapping (the exports of Node.js's built-in modules).
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { Session } from '../src/api';
import type { Cdp } from '../src/inspector/cdp';
import { CLI, FIXTURES, LIVEEDIT, noLiveEdit, programOutput, runNodeUntil, Target } from './support/helpers';

const fallback = path.join(FIXTURES, 'fallback.js');

test('attached while a function stays active: breakpoints and wrapping count exactly; the program is unchanged', async () => {
  const t = new Target(fallback);
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await t.attach({ activeWaitMs: 300 });
  const r = async (p: string) => s.probe(`/Code/${p}`);
  const entry = await r('fallback.js/f.entry: n++');
  await r('fallback.js/f.entry: if ($arg[0] > 10) big++');
  const exit = await r('fallback.js/f.exit: x++');
  const calls = await r('fallback.js/f.calls: k++');
  await r('fallback.js/f.call(get): g++');
  const wrapped = await r('node:fs/existsSync.entry: e++');
  await r('node:fs/existsSync.exit: if ($return) yes++');
  // (the exit by exception: no breakpoint can see it; it runs at the end of its job, see metrics.test)
  assert.deepEqual([entry.byBreakpoint, entry.bySlot, calls.byBreakpoint, exit.byBreakpoint, exit.notPlaced], [1, 0, 2, 1, 0]);
  assert.equal(wrapped.byWrapping, 1);
  const why = LIVEEDIT ? /^LiveEdit of fallback\.js not applied: a function of it stayed active .*reached by breakpoints instead/ : noLiveEdit('fallback.js');
  assert.ok(s.notes.some((n) => why.test(n)), s.notes.join('\n'));
  const res = (await s.resources('/Code/node:fs/existsSync'))[0];
  assert.equal(res.prepared, 'wrap');

  // sum of 2i for i < 50 is 2450; every existsSync(__filename) is true
  assert.equal((await t.request('run 50', /done (\d+) (\d+)/))[0], 'done 2450 50');
  await s.sample();
  const v = (n: string) => s.value(n);
  assert.deepEqual([v('n'), v('big'), v('x'), v('k'), v('g'), v('e'), v('yes')], [50, 39, 50, 100, 50, 50, 50]);
  assert.ok(s.notes.some((n) => /^exits by exception of functions reached by LiveEdit without a try wrapper, or by breakpoints, run their handlers at the end of the job/.test(n)), s.notes.join('\n'));

  await s.removeProbe(entry.id);
  await t.request('run 10', /done 90 10/);
  await s.sample();
  assert.deepEqual([v('n'), v('big'), v('e')], [50, 39, 60], 'n is off; none of 0..9 is over 10');

  await s.detach();
  assert.equal((await t.request('same', /same (\w+)/))[1], 'true', 'fs.existsSync is the original function again');
  assert.equal((await t.request('run 50', /done (\d+) (\d+)/))[0], 'done 2450 50');
});

test('launched: a built-in function is wrapped from the first line', async () => {
  const s = await Session.launch([process.execPath, fallback], ['/Code/node:fs/existsSync.entry: e++'], { stdio: 'pipe', cwd: FIXTURES });
  const out = programOutput(s.child!);
  after(() => s.child?.kill());
  await out.until(/ready/);
  out.send('run 30');
  await out.until(/done 870 30/);
  await s.sample();
  assert.equal(s.value('e'), 30);
  await s.detach();
});

test('a script refused for its LiveEdit pause is reached by a breakpoint instead', async () => {
  const t = new Target(path.join(FIXTURES, 'typescript-loaded.js'));
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await t.attach();
  const r = await s.probe('/Code/**/typescript.js/createSourceFile@33019.entry: c++');
  assert.ok(r.byBreakpoint >= 1 && r.bySlot === 0, JSON.stringify(r));
  const why = LIVEEDIT ? /^refused to LiveEdit .*typescript\.js: it would pause the target for about \d+ ms \(script \d+\.\d MB, heap \d+ MB\), over the limit of 2000 ms \(--max-pause\); its points are reached by breakpoints instead/ : noLiveEdit('typescript.js');
  assert.ok(s.notes.some((n) => why.test(n)), s.notes.join('\n'));
  await t.request('parse 7', /parsed 7/);
  await s.sample();
  assert.equal(s.value('c'), 7);
  await s.detach();
  assert.match((await t.request('v', /version (\S+)/))[1], /^\d/);

  // the command line says the same, at once
  const cli = await runNodeUntil([CLI, 'attach', String(t.pid), '-p', '/Code/**/typescript.js/createSourceFile@33019.entry: c++'], /paranode: probe 1 placed at/);
  assert.equal(cli.status, 0, cli.stderr);
  assert.match(cli.stderr, /paranode: probe 1 placed at \d+ point\(s\) \(\d+ by breakpoint\): /);
  assert.match(cli.stderr, LIVEEDIT ? /note: refused to LiveEdit .*typescript\.js: it would pause the target for about \d+ ms/ : /note: this Node's V8 has no LiveEdit .*typescript\.js is reached by breakpoints/);
});

test('a LiveEdit whose planning takes longer than planLimitMs gives way to breakpoints', async () => {
  const t = new Target(path.join(FIXTURES, 'esprima-attach.js'));
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await t.attach({ planLimitMs: 50 });
  const r = await s.probe('/Code/**/esprima/dist/esprima.js/parseScript.entry: c++');
  assert.deepEqual([r.byBreakpoint, r.bySlot], [1, 0]);
  const why = LIVEEDIT ? /^LiveEdit of .*esprima\.js not made: planning the LiveEdit took longer than 0\.05 s \(planLimitMs\); its points are reached by breakpoints/ : noLiveEdit('esprima.js');
  assert.ok(s.notes.some((n) => why.test(n)), s.notes.join('\n'));
  for (let i = 0; i < 2; i++) await t.request('go', /\nend\n/);
  await s.sample();
  assert.equal(s.value('c'), 2);
  await s.detach();
});

test('breakpoint hits: each hit\'s copy of the condition is not announced to the tool (nor kept by the inspector); counts exact', async () => {
  const t = new Target(path.join(FIXTURES, 'soak.js'));
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await t.attach({ maxPauseMs: 0 });
  try {
    // V8 compiles a condition anew at every hit and announces the copy as a script (docs/BENCHMARKS.md section 19)
    let announced = 0;
    (s as unknown as { main: { cdp: Cdp } }).main.cdp.on('Debugger.scriptParsed', () => { announced++; });
    const r = await s.probe('/Code/soak.js/f.entry: n++');
    assert.equal(r.byBreakpoint, 1, JSON.stringify(r));
    assert.equal((await t.request('1000', /done (\d+)/))[1], String(1000 * 999));
    await s.sample();
    assert.equal(s.value('n'), 1000);
    assert.ok(announced < 10, `${announced} scripts announced during 1000 hits`);
  } finally {
    await s.detach();
  }
});

test('breakpoint hits in a worker: its copies of the condition are not announced to the tool either; counts exact', async () => {
  const t = new Target(path.join(FIXTURES, 'workers.js'));
  after(() => t.kill());
  const resident = Number((await t.waitFor(/ready (\d+)/))[1]);
  const s = await t.attach({ maxPauseMs: 0 });
  try {
    const worker = (s as unknown as { threads: Map<number, { cdp: Cdp }> }).threads.get(resident);
    assert.ok(worker, `thread ${resident} is in the session`);
    let announced = 0;
    worker.cdp.on('Debugger.scriptParsed', () => { announced++; });
    const r = await s.probe('/Code/workers.js/f.entry: n++');
    assert.equal(r.byBreakpoint, 2, JSON.stringify(r));
    await t.request('resident 1000', /resident done 1000/);
    await s.sample();
    assert.equal(s.value('n', String(resident)), 1000);
    assert.ok(announced < 10, `${announced} scripts announced during 1000 hits in the worker`);
  } finally {
    await s.detach();
  }
});

test('attached: a module V8 collected before the probe (no function of it left) is passed over; a glob over the whole program counts exactly', async () => {
  const t = new Target(path.join(FIXTURES, 'collected.js'));
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await t.attach();
  try {
    // collected after the attach announced it: the inspector keeps no text of it (see Thread.enable)
    await t.request('gc', /collected/);
    const r = await s.probe('/Code/collected.js/*.entry: n++');
    assert.equal(r.notPlaced, 0, JSON.stringify(r));
    const all = await s.probe('/Code/**.entry: m++');
    assert.ok(all.placed >= 2, JSON.stringify(all));
    assert.equal((await t.request('10', /done (\d+)/))[1], String(45 + 420));
    await s.sample();
    // f 10 times, and the stdin handler once
    assert.equal(s.value('n'), 11);
    assert.equal(s.value('m'), 11);
  } finally {
    await s.detach();
  }
});
