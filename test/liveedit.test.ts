// The LiveEdit path on third-party code: attached after its modules were loaded.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { Session } from '../src/api';
import { LiveEditPlan, planLiveEdit, planLiveEditOffThread, PlanTimeout } from '../src/instrument/liveedit';
import { FIXTURES, LIVEEDIT, noLiveEdit, Target } from './support/helpers';

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
  // no breakpoints for the points LiveEdit cannot slot: this test is about the slots
  // planning esprima's LiveEdit takes ~25 s here, longer on a loaded machine: allow most of the test's time
  const s = await Session.attach(t.pid, { maxBreakpoints: 0, planLimitMs: 150000 });
  const placed = [];
  for (const p of ['.entry: e++', '.exit: x++', '.calls: k++', '.calls postInsn: r++']) placed.push((await s.probe(`/Code/**/esprima/dist/esprima.js/*${p}`)).bySlot);
  const got = await parseOnce(t);
  await s.sample();
  const v = (n: string) => s.metrics().find((m) => m.name === n)?.total ?? 0;
  await s.detach();
  assert.ok(got === expected, 'output differs from the uninstrumented run');
  if (!LIVEEDIT) {
    // this V8 has no LiveEdit: with breakpoints not allowed nothing is placed, the program is untouched, and the note says why
    assert.deepEqual(placed, [0, 0, 0, 0]);
    assert.ok(s.notes.some((n) => noLiveEdit('esprima.js').test(n)), s.notes.join('\n'));
    return;
  }
  // esprima.js has 430 functions; the entries of those LiveEdit would leave on their old code get no slot
  assert.ok(placed[0] > 300 && placed.slice(1).every((n) => n > 900), `points placed: ${placed}`);
  assert.ok(s.notes.some((n) => /no slot \(LiveEdit would leave this function on its old code\) in \d+ function\(s\): \S/.test(n)), s.notes.join('\n'));
  // verified after applying: no closure of a function that got slots is left on its old code
  assert.ok(!s.notes.some((n) => /LiveEdit left closures/.test(n)), s.notes.join('\n'));
  assert.ok(v('e') > 100000 && v('k') > 100000 && v('r') > 100000, `e ${v('e')} k ${v('k')} r ${v('r')}`);
});

test('plans run in one worker in turn: each gets its own plan, one given up ends that worker and the next plan gets a new one', async () => {
  const root = path.join(__dirname, '..', '..');
  const small = fs.readFileSync(path.join(root, 'bench', 'targets', 'small.js'), 'utf8');
  const big = fs.readFileSync(path.join(root, 'node_modules', 'esprima', 'dist', 'esprima.js'), 'utf8');
  const naming = { filename: 'x.js', cwd: '/' };
  const same = (a: LiveEditPlan, b: LiveEditPlan) => a.code === b.code && a.rounds === b.rounds && a.unslotted.length === b.unslotted.length;
  // asked together: answered in turn, each its own
  const [a, b] = await Promise.all([planLiveEditOffThread(small, 3, 50e6, naming, 120000), planLiveEditOffThread(small.replace('work', 'wyrk'), 4, 50e6, naming, 120000)]);
  assert.ok(same(a, planLiveEdit(small, 3, 50e6, naming)));
  assert.ok(same(b, planLiveEdit(small.replace('work', 'wyrk'), 4, 50e6, naming)));
  assert.notEqual(a.code, b.code);
  // given up (its worker ended), and a plan queued behind it still made (by another)
  const given = planLiveEditOffThread(big, 6, 50e6, naming, 5);
  const late = planLiveEditOffThread(small, 5, 50e6, naming, 120000);
  await assert.rejects(given, PlanTimeout);
  assert.ok(same(await late, planLiveEdit(small, 5, 50e6, naming)));
});
