// The tool's JavaScript never runs inside the program's regular expression.
// A request reaches a busy thread by interrupt, on top of whatever runs; a
// regexp the tool ran there corrupted the regexp it interrupted (one backtrack
// stack per isolate in V8): the program below, always inside a deep regexp,
// segfaulted at attach on Node 22, 24 and 26, and a loaded server died 1 in 30
// attaches on Node 22 (malloc abort). The tool's expressions now wait for the
// thread's event loop (src/inspector/safe-point.ts).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { Session } from '../src/api';
import type { Cdp } from '../src/inspector/cdp';
import { atSafePoint } from '../src/inspector/safe-point';
import { AGENT, CLI, FIXTURES, Target } from './support/helpers';

const FIXTURE = path.join(FIXTURES, 'regexp-busy.js');
const WATCH = path.join(FIXTURES, 'regexp-watch.js');

/** `paranode diagnose -q --duration 4 attach <pid>`, which must end well with its report: its output. */
async function diagnoseAttached(pid: number): Promise<string> {
  const tool = spawn(process.execPath, [CLI, 'diagnose', '-q', '--duration', '4', 'attach', String(pid)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  tool.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  tool.stderr!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  assert.equal(await new Promise<number | null>((r) => tool.once('exit', r)), 0, out);
  assert.match(out, /diagnosis of process/);
  return out;
}

for (const how of ['unprepared', 'dormant'] as const) {
  test(`a program always inside its regexps (${how}): exact counts, a diagnose and a detach, and it lives`, async () => {
    const t = new Target(FIXTURE, [], how === 'dormant' ? ['--import', AGENT] : []);
    after(() => t.kill());
    await t.waitFor(/ready/);
    const s = await Session.attach(t.pid);
    await s.probe('/Code/regexp-busy.js/f.entry: n++');
    assert.equal((await t.request('300', /done (\d+)/))[1], String(299 * 300));
    await s.sample();
    assert.equal(s.value('n'), 300);
    await s.detach();
    // the consultant's search: placements, stack-sample windows, tests switched on and off
    assert.doesNotMatch(await diagnoseAttached(t.pid), /target ended|crashed/);
    const [, sum, matched] = await t.request('10', /done (\d+) (\d+)/);
    assert.equal(sum, String(9 * 10));
    assert.equal(matched, '0');
    // Node's own lines for the inspector port of an unprepared attach, and nothing else
    assert.doesNotMatch(t.err, /Error|Fatal|Check failed|malloc/, t.err);
  });
}

test('what the tool runs at once on top of the program (placing, removing, sampling, a diagnose) runs no regexp: none is seen over its frames', async () => {
  const t = new Target(WATCH);
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await Session.attach(t.pid);
  for (let k = 0; k < 3; k++) {
    const p = await s.probe(`/Code/regexp-watch.js/f.entry: n${k}++`);
    assert.equal((await t.request('50', /done (\d+)/))[1], String(49 * 50));
    await s.sample();
    assert.equal(s.value(`n${k}`), 50);
    await s.removeProbe(p.id);
  }
  // a timer, a predicate and a call path: the handlers' other primitives and cost classes
  await s.probe('/Code/regexp-watch.js/f.entry: if ($arg[0] > 10) startWallTimer(t)');
  await s.probe('/Code/regexp-watch.js/f.exit: stopTimer(t)');
  assert.equal((await t.request('30', /done (\d+)/))[1], String(29 * 30));
  await s.sample();
  await s.detach();
  // the consultant's probes: CPU timers, its tests switched on and off
  await diagnoseAttached(t.pid);
  const records = JSON.parse((await t.request('report', /report (.*)\n/))[1]) as [string, string[]][];
  assert.deepEqual(records, [], JSON.stringify(records, null, 1));
});

// Samples run by interrupt, anywhere in the program's JavaScript: a timer armed there can land inside
// Node's own timer lists (a sample's 0-ms timer once left a loaded server's processTimers looping on a
// list its map no longer held: 100 % CPU, no request answered, Node 22, 2026-12-02)
test('what the tool runs at once on top of the program (samples of a watched thread, a diagnose) arms no timer there', async () => {
  const t = new Target(path.join(FIXTURES, 'timers-watch.js'));
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await Session.attach(t.pid);
  // the thread's own values and V8's stack samples, read at every sample
  await s.watchThreads({ stacks: true });
  for (let i = 0; i < 40; i++) await s.sample();
  await s.detach();
  await diagnoseAttached(t.pid);
  const records = JSON.parse((await t.request('report', /report (.*)\n/))[1]) as string[][];
  assert.deepEqual(records, [], JSON.stringify(records, null, 1));
});

// The attach's first request starts the agent, which closes the port and that request's session
// with it: where the request was queued for the event loop, its reader may never come (CI's soak,
// Node 22: the queue left on the program's global object after one of 150 sessions)
test('an expression queued for the event loop and never read is gone at detach: the global object as the session found it', async () => {
  const t = new Target(FIXTURE);
  after(() => t.kill());
  await t.waitFor(/ready/);
  const symbols = async () => JSON.parse((await t.request('symbols', /symbols (.*)\n/))[1]) as string[];
  const before = await symbols();
  const s = await Session.attach(t.pid);
  const cdp = (s as unknown as { cdp: Cdp }).cdp;
  // queued where the program's regexp runs below the request (nearly always), and left unread
  let id: string | null = null;
  for (let i = 0; i < 50 && id === null; i++) {
    const r = await cdp.send('Runtime.evaluate', { expression: atSafePoint(`unread-${i}`, '1 + 1', false), returnByValue: true });
    if ((r.result.value as { deferred?: 1 }).deferred) id = `unread-${i}`;
  }
  assert.ok(id, 'a request queued');
  // once it ran at the event loop (its promise, awaited as it is, not as its reader takes it)
  const ran = await cdp.send('Runtime.evaluate', { expression: `globalThis[Symbol.for('paranode.deferred')].get(${JSON.stringify(id)}).promise`, awaitPromise: true, returnByValue: true });
  assert.equal(ran.result.value, 2);
  assert.ok((await symbols()).includes('Symbol(paranode.deferred)'));
  await s.detach();
  // (what a session leaves for the next: its dormant runtime and agent; see soak.test)
  assert.deepEqual((await symbols()).filter((x) => !before.includes(x)).sort(), ['Symbol(paranode.agent)', 'Symbol(paranode.runtime)']);
  assert.equal((await t.request('10', /done (\d+)/))[1], String(9 * 10));
});
