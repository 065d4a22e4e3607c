// Async functions (CPU time excludes suspension) and functions active during a LiveEdit.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { Session } from '../src/api';
import { FIXTURES, LIVEEDIT, lineRequests, noLiveEdit, Target } from './support/helpers';

const value = (s: Session, name: string) => s.value(name);

test('a process timer around an async function does not count time suspended at await', async () => {
  const t = new Target(path.join(FIXTURES, 'async-work.js'));
  after(() => t.kill());
  await t.waitFor(/ready/);
  let s = await Session.attach(t.pid);
  let request = (line: string, re: RegExp) => t.request(line, re);
  if (!LIVEEDIT) {
    // attached to an unprepared script without LiveEdit, await and resume have no way in: said, not placed
    const r = await s.probe('/Code/async-work.js/job.await: n++');
    assert.equal(r.notPlaced, 1);
    assert.ok(s.notes.some((n) => noLiveEdit('async-work.js').test(n)), s.notes.join('\n'));
    await s.detach();
    // a launched (prepared) program has them on every Node
    s = await Session.launch([process.execPath, path.join(FIXTURES, 'async-work.js')], [], { stdio: 'pipe', cwd: FIXTURES });
    after(() => s.child?.kill());
    request = lineRequests(s.child!);
    await request('', /ready/);
  }
  for (const p of [
    '/Code/async-work.js/job.entry: startProcessTimer(cpu)',
    '/Code/async-work.js/job.await: stopTimer(cpu)',
    '/Code/async-work.js/job.resume: startProcessTimer(cpu)',
    '/Code/async-work.js/job.exit: stopTimer(cpu)',
    '/Code/async-work.js/job.entry: startWallTimer(wall)',
    '/Code/async-work.js/job.exit: stopTimer(wall)',
    '/Code/async-work.js/job.resume: if ($return == undefined) resumed++',
  ]) await s.probe(p);
  await request('100 400', /job ok/);
  await s.sample();
  const cpu = value(s, 'cpu')!;
  const wall = value(s, 'wall')!;
  // the thread CPU clock: 2 x 100 ms burnt, each over by up to a scheduler tick (4 ms here, 10 ms at HZ=100);
  // the 400 ms await is not in it
  assert.ok(cpu >= 0.2 && cpu < 0.23, `cpu ${cpu} s for 2 x 100 ms of CPU burnt around a 400 ms await`);
  assert.ok(wall > 0.6, `wall ${wall} s`);
  assert.equal(value(s, 'resumed'), 1);
  await s.detach();
});

test('a script whose function is active is edited once it returns, and counts exactly', async () => {
  const t = new Target(path.join(FIXTURES, 'busy.js'));
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await Session.attach(t.pid);
  const spun = t.waitFor(/spun/);
  t.send('spin 1200');
  await t.waitFor(/spinning/);
  const t0 = Date.now();
  const r = await s.probe('/Code/busy.js/inner.entry: c++'); // spin() is on the stack: LiveEdit blocked, retried
  if (LIVEEDIT) assert.ok(Date.now() - t0 > 500, 'the edit waited for spin() to return');
  // without LiveEdit in this V8 a breakpoint reaches inner() at once
  else assert.deepEqual([r.byBreakpoint, r.bySlot], [1, 0]);
  await spun;
  // a breakpoint counts from the moment it is set: inner()'s calls from spin() too
  await s.sample();
  const before = value(s, 'c') ?? 0;
  if (LIVEEDIT) assert.equal(before, 0);
  await t.request('count 1234', /counted/);
  await s.sample();
  assert.equal(value(s, 'c')! - before, 1234);
  await s.detach();
});
