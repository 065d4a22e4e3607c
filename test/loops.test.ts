// Loops as resources (/Code/<module>/<function>/loop@<line>): entries and
// iterations counted exactly, however a loop ends; time per loop; the same in
// a dormant agent's program attached later; refused with the reason where the
// program was not prepared at load; clear errors for a loop that is not there.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { Session } from '../src/api';
import { FocusError } from '../src/mdl/evaluate';
import { MdlLibrary } from '../src/mdl/library';
import { MetricManager } from '../src/metrics/manager';
import { AGENT, CLI, FIXTURES, launchedFixture, Target } from './support/helpers';

const FILE = 'loop-counts.js';
const target = path.join(FIXTURES, FILE);
const at = (fn: string, loop = '') => `/Code/${FILE}/${fn}${loop ? `/${loop}` : ''}`;

/** what `run 10` gives each loop: [entries, iterations] (the two loops of pair() share line 24) */
const RUN10: Record<string, [number, number]> = {
  'work/loop@10': [10, 40], // labelled; its inner loop goes on to it by `continue outer`
  'work/loop@11': [40, 120],
  'work/loop@14': [10, 50], // while, a statement body
  'work/loop@15': [10, 20], // for-of
  'work/loop@16': [10, 20], // for-in left by break on its second trip
  'early/loop@20': [10, 40], // left by return
  'thrower/loop@22': [10, 50], // left by throw
  'pair/loop@24:30': [10, 30],
  'pair/loop@24:63': [10, 60],
  'gen/loop@26': [10, 10], // a generator closed by return() inside it
};

/** The plain program's answer to `run <n>`. */
function plainRun(n: number): string {
  const r = spawnSync(process.execPath, [target, String(n)], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

test('loops launched: entries and iterations of every loop exact, however it ends; a function\'s and the program\'s sums; wall and CPU time of an async loop', async () => {
  const { s, request } = await launchedFixture(target);
  const mm = new MetricManager([s]);
  // the loops the analysis names: two on one line are told apart by their columns
  const names = (await s.resources(at('pair')))[0].points.filter((p) => p.kind === 'loop').map((p) => `loop@${p.line}:${p.column}`);
  assert.deepEqual(names, ['loop@24:30', 'loop@24:63']);
  const inst = new Map<string, [Awaited<ReturnType<MetricManager['enable']>>, Awaited<ReturnType<MetricManager['enable']>>]>();
  for (const focus of Object.keys(RUN10)) {
    const [fn, loop] = focus.split('/');
    inst.set(focus, [await mm.enable('loop_entries', at(fn, loop)), await mm.enable('loop_trips', at(fn, loop))]);
  }
  const fnTrips = await mm.enable('loop_trips', at('work'));
  const fnEntries = await mm.enable('loop_entries', at('work'));
  const modTrips = await mm.enable('loop_trips', `/Code/${FILE}`);
  const all = await mm.enable('loop_trips');
  // every loop that starts ends once: a counter after each loop against one before it
  await s.probe(`/Code/${FILE}/*.loops: lin++`);
  await s.probe(`/Code/${FILE}/*.loops postInsn: lout++`);
  const wall = await mm.enable('wall', at('waits', 'loop@27'));
  const cpu = await mm.enable('cpu_inclusive', at('waits', 'loop@27'));

  assert.equal((await request('run 10', /ran (\d+)/))[0], plainRun(10), 'the program\'s answer is the plain one');
  await request('waits', /waited/);
  await s.sample();
  for (const [focus, [entries, trips]] of Object.entries(RUN10)) {
    const [e, t] = inst.get(focus)!;
    assert.deepEqual([e.value().total, t.value().total], [entries, trips], focus);
  }
  assert.equal(fnTrips.value().total, 40 + 120 + 50 + 20 + 20);
  assert.equal(fnEntries.value().total, 10 + 40 + 10 + 10 + 10);
  assert.equal(inst.get('work/loop@11')![1].value().units, 'trips/s');
  // the module: its functions' loops, run()'s own (10 trips) and the async loop's 4
  const sum = Object.values(RUN10).reduce((a, [, t]) => a + t, 0);
  assert.equal(modTrips.value().total, sum + 10 + 4);
  assert.ok(all.value().total >= sum + 14, `whole program ${all.value().total}`);
  assert.equal(s.value('lin'), s.value('lout'));
  assert.equal(s.value('lin'), Object.values(RUN10).reduce((a, [e]) => a + e, 0) + 1 + 1);
  // four 50 ms timers awaited in the loop: its wall time holds them, its CPU time does not
  assert.ok(wall.value().total >= 0.19 && wall.value().total < 2, `wall ${wall.value().total} s`);
  assert.ok(cpu.value().total < wall.value().total / 4, `cpu ${cpu.value().total} s against wall ${wall.value().total} s`);
});

test('loops in a dormant agent\'s program, attached later: iterations counted by slot, exactly', async () => {
  const t = new Target(target, [], ['--import', AGENT]);
  after(() => t.kill());
  await t.waitFor(/ready/);
  await t.request('run 3', /ran/);
  const s = await Session.attach(t.pid);
  after(() => s.detach());
  const mm = new MetricManager([s]);
  const trips = await mm.enable('loop_trips', at('work', 'loop@11'));
  const entries = await mm.enable('loop_entries', at('thrower', 'loop@22'));
  assert.equal((await t.request('run 10', /ran (\d+)/))[0], plainRun(10));
  await s.sample();
  assert.equal(trips.value().total, 120);
  assert.equal(entries.value().total, 10);
  assert.deepEqual(s.notes.filter((n) => /not placed/.test(n)), []);
});

test('loops of a program started without paranode: the request is refused with the reason, nothing counts, the program runs on', async () => {
  const t = new Target(target);
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await Session.attach(t.pid);
  after(() => s.detach());
  const mm = new MetricManager([s]);
  const trips = await mm.enable('loop_trips', at('work', 'loop@11'));
  assert.equal((await t.request('run 10', /ran (\d+)/))[0], plainRun(10));
  await s.sample();
  assert.equal(trips.value().total, 0);
  assert.ok(s.notes.some((n) => /not placed \(a loop has slots only in a program prepared at load/.test(n)), s.notes.join('\n'));
});

test('loops: a loop that is not there, a metric that has no loop constraint, a point a loop has not: clear errors before anything is placed', async () => {
  const { s } = await launchedFixture(target);
  const mm = new MetricManager([s]);
  await assert.rejects(mm.enable('loop_trips', at('work', 'loop@12')), (e: Error) => e instanceof FocusError &&
    /^unknown loop \/Code\/loop-counts\.js\/work\/loop@12: \/Code\/loop-counts\.js\/work has the loops loop@10, loop@11, loop@14, loop@15, loop@16$/.test(e.message));
  await assert.rejects(mm.enable('loop_trips', at('pair', 'loop@24')), /has the loops loop@24:30, loop@24:63/);
  await assert.rejects(mm.enable('loop_trips', at('nothere', 'loop@3')), /unknown resource: no function \/Code\/loop-counts\.js\/nothere \(of loop/);
  await assert.rejects(mm.enable('cpu', at('work', 'loop@11')), /metric cpu cannot be constrained to a loop \(\/Code\/\*\/loop@\*\)/);
  // MDL of your own: a loop has .entry, .exit, .trips, .await and .resume
  const lib = MdlLibrary.standard();
  lib.load(`constraint loop_calls /Code/*/loop@* is replace { append preInsn $constraint[0].calls (* loop_calls++; *) }
metric calls_in_loop { name "x"; units "calls/s"; aggregateOperator sum; style EventCounter; constraint loop_calls;
  base is counter { foreach f in $procedures append preInsn f.calls (* calls_in_loop++; *) } }`, 'mine.mdl');
  await assert.rejects(new MetricManager([s], lib).enable('calls_in_loop', at('work', 'loop@11')),
    /the loop \/Code\/loop-counts\.js\/work\/loop@11 has only the points \.entry, \.exit, \.trips, \.await and \.resume, not \.calls/);
  assert.equal(mm.all.length, 0);
});

test('CLI: paranode run -e loop_trips@<loop> gives the exact iterations in the table and --json; a loop that is not there is said at the end', () => {
  const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-loops-')), 'out.json');
  const r = spawnSync(process.execPath, [CLI, 'run', '-e', `loop_trips@${at('work', 'loop@11')}`, '-e', `loop_entries@${at('gen', 'loop@26')}`, '--json', json, '--', process.execPath, FILE, '10'], { cwd: FIXTURES, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^ran 300$/m);
  assert.match(r.stderr, /loop_trips +\/Code\/loop-counts\.js\/work\/loop@11 +120 /);
  const values = (JSON.parse(fs.readFileSync(json, 'utf8')) as { metrics: { name: string; focus: string; total: number }[] }).metrics;
  assert.equal(values.find((v) => v.name === 'loop_trips')!.total, 120);
  assert.equal(values.find((v) => v.name === 'loop_entries')!.total, 10);
  // a loop that is not there, asked for at launch (before any code is loaded): said at the end, not a silent 0
  const bad = spawnSync(process.execPath, [CLI, 'run', '-e', `loop_trips@${at('work', 'loop@99')}`, '-e', `loop_trips@${at('work', 'loop@11')}`, '--json', json, '--', process.execPath, FILE, '1'], { cwd: FIXTURES, encoding: 'utf8' });
  assert.equal(bad.status, 0, bad.stderr);
  const notes = (JSON.parse(fs.readFileSync(json, 'utf8')) as { notes: string[] }).notes.filter((n) => /found no code/.test(n));
  assert.deepEqual(notes.map((n) => n.replace(/ \(modules are named.*$/, '')), [`metric request loop_trips@${at('work', 'loop@99')} found no code of the program to measure: no such function, call site or loop was loaded`]);
  assert.match(bad.stderr, /note: metric request loop_trips@\/Code\/loop-counts\.js\/work\/loop@99 found no code/);
});
