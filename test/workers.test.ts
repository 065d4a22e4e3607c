// Worker threads: each thread is its own resource with its own instrumentation and data.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { Session } from '../src/api';
import { FIXTURES, Target, launchedWorkersCount, workersCountReport, lineRequests, programOutput } from './support/helpers';

const workers = path.join(FIXTURES, 'workers.js');
const churn = path.join(FIXTURES, 'worker-churn.js');

test('attached: a worker running at attach time and one started later count separately and exactly', async () => {
  const t = new Target(workers);
  after(() => t.kill());
  const resident = (await t.waitFor(/ready (\d+)/))[1];
  const s = await Session.attach(t.pid);
  const r = await s.probe('/Code/workers.js/f.entry: n++');
  assert.equal(r.placed, 2, 'placed in the main thread and in the resident worker');
  await t.request('main 100', /main done 100/);
  await t.request('resident 200', /resident done 200/);
  const ready = new Promise<number>((r) => s.once('thread', r));
  const opened = (await t.request('open', /opened (\d+)/))[1];
  assert.equal(String(await ready), opened);
  await t.request(`work ${opened} 300`, /done 300/);
  await t.request('main 1', /main done 1/);
  await s.sample();
  assert.equal(s.value('n', 'main'), 101);
  assert.equal(s.value('n', resident), 200);
  assert.equal(s.value('n', opened), 300, 'a worker started after attach is instrumented');
  assert.equal(s.value('n'), 601);
  assert.ok(s.metrics().some((m) => m.focus === `/Thread/${t.pid}/${resident}`));
  await s.detach();
  await t.request('resident 5', /resident done 5/);
});

test('launched: probes apply in every worker from its first line', async () => {
  const s = await launchedWorkersCount();
  assert.equal(s.value('n'), 350, workersCountReport(s));
  assert.equal(s.value('n', 'main'), 30);
});

/**
 * Place and remove a probe `rounds` times while worker threads start and end around it (two more start
 * while each probe stands); the main thread's count stays exact. The number of workers started in all.
 */
async function churnRounds(s: Session, request: (line: string, re: RegExp) => Promise<RegExpMatchArray>, rounds: number): Promise<number> {
  let started = Number((await request('started 0', /started (\d+)/))[1]);
  for (let k = 0; k < rounds; k++) {
    const p = await s.probe(`/Code/worker-churn.js/f.entry: c${k}++`);
    started = Number((await request(`started ${started + 2}`, /started (\d+)/))[1]);
    await request('main 50', /main done 50/);
    await s.sample();
    assert.equal(s.value(`c${k}`, 'main'), 50, `round ${k}`);
    await s.removeProbe(p.id);
  }
  return started;
}

test('attached: worker threads ending while probes are placed and removed do not end the session', async () => {
  const t = new Target(churn);
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await Session.attach(t.pid);
  assert.ok(await churnRounds(s, (l, re) => t.request(l, re), 15) >= 30);
  await s.detach();
  await t.request('stop', /stopped/);
  await t.request('main 5', /main done 5/);
  assert.doesNotMatch(t.err, /Error|Assertion/, t.err);
});

test('launched: worker threads that start and end all the time are each instrumented or let go, never stuck; the session lasts', async () => {
  const s = await Session.launch([process.execPath, churn], [], { stdio: 'pipe', cwd: FIXTURES });
  after(() => s.child!.kill());
  let err = '';
  s.child!.stderr!.setEncoding('utf8').on('data', (d: string) => { err += d; });
  const request = lineRequests(s.child!);
  await request('', /ready/);
  assert.ok(await churnRounds(s, request, 15) >= 30);
  await request('stop', /stopped/);
  s.child!.stdin!.end();
  await s.waitForExit();
  assert.equal(s.exitCode, 0);
  assert.doesNotMatch(err, /Error|Assertion/, err);
});

test('launched: a worker started on the program\'s first line gets its agent and counts exactly, and Node\'s module built-in works in it (five launches)', async () => {
  // such a worker may start before the session asked workers to wait for it: the tool's start of
  // the agent then arrives by interrupt, maybe inside Node's own set-up of the worker
  for (let k = 0; k < 5; k++) {
    const s = await Session.launch([process.execPath, path.join(FIXTURES, 'early-worker.js'), '700'], ['/Code/early-worker-lib.js/f.entry: n++'], { stdio: 'pipe', cwd: FIXTURES });
    const { until } = programOutput(s.child!);
    await until(/sum 2100 builtins true\nworker exit 0/);
    await s.waitForExit();
    assert.equal(s.value('n'), 700, `launch ${k + 1}: ${JSON.stringify(s.notes)}`);
    assert.ok(!s.notes.some((n) => /not instrumented/.test(n)), JSON.stringify(s.notes));
  }
});
