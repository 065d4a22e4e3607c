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
