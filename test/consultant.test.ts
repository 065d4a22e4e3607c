// The Performance Consultant on the demo programs: each run names the planted
// bottleneck (hypothesis, function, thread) by itself, within the cost limit's
// search, through the library API and the CLI.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { callGraph, diagnose } from '../src/consultant/diagnose';
import { type Bottleneck, type Diagnosis, HOTTEST, HOTTEST_PATHS, HOTTEST_TIED, hottestCut, phasesOf, renderDiagnosis, waitersAfterBusy } from '../src/consultant/report';
import { inPhase, QUIET_INTERVAL_MS, type SearchNode } from '../src/consultant/search';
import { measuring, nextCommand, sampledPaths, shellWord } from '../src/consultant/next-steps';
import { leavesByFunction, OTHER_PATHS, PATHS_KEPT, sampledAt, SampledSeries } from '../src/session/series';
import type { StackRecord } from '../src/agent/cpu-sampler';
import { Session } from '../src/api';
import { CLI, FIXTURES, ROOT } from './support/helpers';

const DEMO = path.join(ROOT, 'demo');
/**
 * The time each search must finish in (seconds from its start). The longest is
 * the cpu-bound demo under the 5% limit: its three call-site tests cost most of
 * the thread each, so the search pauses after each to pay that back (37-41 s
 * on Node 20 in docs/BENCHMARKS.md section 9; 57 s on Node 22, whose thread-clock
 * timers cost more, on a quiet machine).
 */
const WITHIN = 90;

/** Diagnose a demo (it runs for 120 s; it is stopped when the diagnosis is done), with its stderr. */
async function diagnoseDemo(name: string, opts: Parameters<typeof diagnose>[1] = {}): Promise<{ d: Diagnosis; pid: number; stderr: string; notes: string[]; session: Session }> {
  let stderr = '';
  const { diagnosis, session } = await diagnose({ command: [process.execPath, `${name}.js`, '120'] }, {
    cwd: DEMO, stdio: 'pipe', ...opts,
    onStart: (c, s) => { s.child!.stderr!.setEncoding('utf8').on('data', (d: string) => { stderr += d; }); s.child!.stdout!.resume(); opts.onStart?.(c, s); },
  });
  session.child!.kill();
  return { d: diagnosis, pid: session.pid, stderr, notes: session.notes, session };
}

const first = (d: Diagnosis, hypothesis: string) => d.bottlenecks.find((b) => b.hypothesis === hypothesis);

test('cpu-bound demo: CPU-bound at hashRecord, three calls deep (its callers explained by it)', async () => {
  const launched = Date.now();
  const { d, pid, session } = await diagnoseDemo('cpu-bound');
  // the windows' and phases' clock: the search's start, between the launch and its end
  assert.ok(d.startedAt >= launched && d.startedAt + d.durationSeconds * 1000 <= Date.now(), JSON.stringify({ launched, startedAt: d.startedAt, now: Date.now() }));
  assert.ok(d.cost.trace.length > 0 && d.cost.trace.every((w, i) => w.t > (i ? d.cost.trace[i - 1].t : 0) && w.t <= d.durationSeconds), JSON.stringify(d.cost.trace));
  const b = first(d, 'cpu_bound');
  assert.ok(b, JSON.stringify(d.bottlenecks));
  assert.equal(b.focus, '/Code/cpu-bound.js/hashRecord');
  assert.equal(b.source, 'cpu-bound.js:12');
  assert.equal(b.thread, `${pid}/main`);
  assert.ok(b.value >= b.threshold && b.threshold === 0.2);
  assert.equal(b.shareOf, 'cpu');
  assert.ok(b.interval[0] < b.interval[1]);
  // its own code (with the built-ins it calls) runs in most stack samples: its calls into node:crypto are tested
  assert.ok(b.self !== undefined && b.self >= 0.1, `own code in ${b.self} of stack samples`);
  // the hottest functions by their self time as V8 gives it, whatever the thresholds, from the same samples,
  // each with its share with Node's code it calls where that is more. hashRecord's time is nearly all in
  // node:crypto: its own code is low in the list, or not in it (a sample or two of 2,000); where it is, its
  // share with node:crypto is the one its test was judged by, more than any other's
  const hot = (d.hottest ?? []).filter((h) => h.thread === 'main' && !h.node);
  assert.ok(hot.length >= 1 && hot.length <= HOTTEST_TIED, JSON.stringify(d.hottest));
  const hash = hot.find((h) => h.function === 'cpu-bound.js/hashRecord');
  if (hash) assert.equal(hash.withNode ?? hash.self, b.self);
  assert.ok(hot.every((h) => (h.withNode ?? h.self) <= b.self!), JSON.stringify(hot));
  hot.forEach((h, i) => assert.ok(h.self > 0 && h.self <= 1 && (h.withNode === undefined || h.withNode > h.self) && (i === 0 || hot[i - 1].self >= h.self) && h.samples === hot[0].samples, JSON.stringify(hot)));
  assert.match(renderDiagnosis(d), new RegExp(`hottest functions of thread main by self time \\(${hot[0].samples} stack samples of the busy thread, any share\\): cpu-bound\\.js/\\S+ \\d`));
  if (hash) assert.match(renderDiagnosis(d), /cpu-bound\.js\/hashRecord \d\S*% \(\d\S*% with Node's code it calls\)/);
  // Node's own code by its self time, as V8's profiles list it: hashRecord's time is in node:crypto's
  // JavaScript and its natives (the hash's constructor, update, digest), each called from hashRecord
  const node = (d.hottest ?? []).filter((h) => h.thread === 'main' && h.node);
  assert.ok(node.length >= 3 && node.length <= HOTTEST, JSON.stringify(node));
  const crypto = node.filter((h) => /^(node:crypto\/|node:internal\/crypto\/|\(native\)\/)/.test(h.function) && h.calledFrom === 'cpu-bound.js/hashRecord');
  // (its natives show as frames of their own only while V8 has not optimized the calls into them)
  assert.ok(crypto.length >= 3, JSON.stringify(node));
  // counted in hashRecord's share with Node's code, not in its self time: together no more than the one,
  // and with its self time no less than it (the list is cut at HOTTEST functions)
  // (a Node function's self time counts every caller's samples, its `calledFrom` the commonest: the bound
  // is on those from hashRecord, read from the same stack samples; CI's Node 24 once had one sample of
  // 513 from another)
  const cryptoShare = crypto.reduce((a, h) => a + h.self, 0);
  // (the session's samples now hold those its detach read after the report was made: both counts from them)
  const st = session.stackSamples('main');
  const fromHash = crypto.reduce((a, h) => a + (st.node.get(h.function)?.get('cpu-bound.js/hashRecord') ?? 0), 0);
  const withNode = new Map(leavesByFunction(st)).get('cpu-bound.js/hashRecord') ?? 0;
  assert.ok(fromHash > 0 && fromHash <= withNode, JSON.stringify({ self: b.self, hash, crypto, fromHash, withNode, samples: st.samples }));
  // (a good part of it: where V8 inlined node:crypto's JavaScript into hashRecord, those samples are
  // hashRecord's own; CI's Node 22 at 0d94bc5: 0.29 of 0.63)
  assert.ok(cryptoShare >= b.self! / 4, JSON.stringify({ self: b.self, hash, crypto }));
  assert.match(renderDiagnosis(d), /hottest of Node's own code in thread main \(self time, counted in its caller's share with Node's code\): \S+ \(called from cpu-bound\.js\/hashRecord\) \d/);
  const inside = d.searchHistory.filter((n) => n.focus.startsWith('/Code/cpu-bound.js/hashRecord/'));
  const sites = inside.filter((n) => n.focus.endsWith(')'));
  assert.deepEqual(sites.map((n) => n.focus).sort(), ['createHash()', 'digest()', 'update()'].map((c) => `/Code/cpu-bound.js/hashRecord/${c}`));
  // and its one loop (the program is launched: prepared at load), not tested under the 5 % limit: it would
  // switch every point of hashRecord on (its own code in most samples), and say so
  const loops = inside.filter((n) => !n.focus.endsWith(')'));
  assert.deepEqual(loops.map((n) => [n.focus, n.state, n.source]), [['/Code/cpu-bound.js/hashRecord/loop@14', 'too costly', 'cpu-bound.js:14']], JSON.stringify(loops));
  assert.match(loops[0].note ?? '', /^a loop's test switches on every point of cpu-bound\.js\/hashRecord, which runs in \d+% of the thread's samples: about \d+% of the thread, over the 5\.0% limit$/);
  assert.match(renderDiagnosis(d), /\nnot tested, too costly under the limit \(1\):\n {2}\$ cpu_bound @ \/Code\/cpu-bound\.js\/hashRecord\/loop@14 \(a loop's test/);
  for (const n of sites) {
    assert.ok(n.state === 'true' || n.state === 'false', `${n.focus}: ${n.state}`);
    assert.equal(n.source, 'cpu-bound.js:14');
  }
  // createHash() holds 19-45 % of V8's samples (Node 22-26, by machine and day: near the 20 % threshold
  // when the host's clock reads are slow): decided from them, no timer around the call
  const create = sites.find((n) => n.focus.endsWith('/createHash()'))!;
  assert.match(create.note ?? '', /^decided from \d+ stack samples of the busy thread \(in the call in \d+\)$/, JSON.stringify(create));
  assert.equal(create.state, create.value! >= create.threshold ? 'true' : 'false', JSON.stringify(create));
  assert.ok(create.value! > 0.1, JSON.stringify(create));
  // its callers held too, and are not reported: the hot path ends in hashRecord
  for (const caller of ['processBatch', 'step']) {
    assert.equal(d.searchHistory.find((n) => n.focus === `/Code/cpu-bound.js/${caller}`)?.state, 'true');
    assert.ok(!d.bottlenecks.some((x) => x.focus.endsWith(`/${caller}`)));
  }
  assert.ok(d.searchSeconds !== null && d.searchSeconds < WITHIN, `search took ${d.searchSeconds} s`);
  // the search history graph: every node below the top has a parent that held
  for (const n of d.searchHistory) if (n.parent !== null) assert.equal(d.searchHistory[n.parent - 1].state, 'true');
  assert.equal(d.cost.limit, 0.05);
  // what a developer does next: the path that leads to it, from the stack samples (run -> step ->
  // processBatch -> hashRecord; step runs again from setImmediate, Node's code, which is left out)
  const path0 = b.paths?.[0];
  assert.ok(path0 && path0.share > 0.5 && path0.share <= 1, JSON.stringify(b.paths));
  assert.deepEqual(path0.functions.slice(-3), ['cpu-bound.js/step', 'cpu-bound.js/processBatch', 'cpu-bound.js/hashRecord'], JSON.stringify(b.paths));
  assert.ok(b.paths!.every((p, i) => i === 0 || p.share <= b.paths![i - 1].share), JSON.stringify(b.paths));
  // the call site's paths are its function's, then the call site
  const site = d.bottlenecks.find((x) => x.focus.startsWith('/Code/cpu-bound.js/hashRecord/') && x.focus.endsWith('()'));
  if (site) assert.deepEqual(site.paths?.[0].functions.slice(-2), ['cpu-bound.js/hashRecord', site.focus.split('/').pop()], JSON.stringify(site));
  // and the command that measures it exactly, which runs
  const requests = ['cpu_inclusive@/Code/cpu-bound.js/hashRecord', 'procedure_calls@/Code/cpu-bound.js/hashRecord'];
  // (launched in the demo's directory, whose modules it names: the command runs there)
  assert.equal(b.next, `cd ${shellWord(DEMO)} && paranode run ${requests.map((r) => `-e ${r}`).join(' ')} -- ${shellWord(process.execPath)} cpu-bound.js 120`);
  const text = renderDiagnosis(d);
  assert.ok(text.includes(`    reached by ${path0.functions.join(' > ')} (`), text);
  // the hottest functions too (the first HOTTEST_PATHS of a thread, with a program caller): the same path to hashRecord
  // (hashRecord's own code is little of its time: where it is not among them, none)
  if (hash) assert.deepEqual(hash.paths?.map((p) => p.functions), hot.indexOf(hash) < HOTTEST_PATHS ? [path0.functions] : undefined, JSON.stringify(hash));
  assert.ok(hot.slice(HOTTEST_PATHS).every((h) => !h.paths), JSON.stringify(hot));
  // the first ones have theirs, ending in them, printed under the list
  assert.ok(hot.slice(0, HOTTEST_PATHS).some((h) => h.paths) && hot.every((h) => !h.paths || h.paths[0].functions.at(-1) === h.function), JSON.stringify(hot));
  for (const h of hot) for (const p of h.paths ?? []) assert.ok(text.includes(`\n  reached by ${p.functions.join(' > ')} (`), text);
  assert.ok(text.includes(`    next: ${b.next}\n`), text);
  const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-')), 'next.json');
  const r = spawnSync(process.execPath, [CLI, 'run', '-q', ...requests.flatMap((q) => ['-e', q]), '--json', json, '--', process.execPath, 'cpu-bound.js', '2'], { cwd: DEMO, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const m = (JSON.parse(fs.readFileSync(json, 'utf8')) as { metrics: { name: string; focus: string; total: number }[] }).metrics;
  const calls = m.find((x) => x.name === 'procedure_calls')!.total;
  // a batch is 100 records, each hashed once
  assert.ok(calls > 0 && calls % 100 === 0, JSON.stringify(m));
  assert.ok(m.find((x) => x.name === 'cpu_inclusive' && x.focus === '/Code/cpu-bound.js/hashRecord')!.total > 0, JSON.stringify(m));
});

test('the hottest list: the ten most sampled, then those the samples cannot tell from the tenth (within one standard error of the difference), up to twenty', () => {
  const f = (counts: number[]) => counts.map((n, i): [string, number] => [`m/f${String(i).padStart(2, '0')}`, n]);
  assert.equal(HOTTEST, 10);
  // the tenth has 10: 9 is within √19 of it, 5 is not (5 > √15), nor anything after
  const cut = hottestCut(f([10, 100, 5, 90, 80, 9, 70, 60, 50, 40, 30, 20, 9]).reverse());
  assert.deepEqual(cut.map(([, n]) => n), [100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 9, 9]);
  // equal counts by name; a flat profile stops at twenty
  assert.deepEqual(hottestCut(f(Array(25).fill(7))).map(([k]) => k), f(Array(20).fill(7)).map(([k]) => k));
  assert.equal(HOTTEST_TIED, 20);
  // fewer than ten: all of them
  assert.deepEqual(hottestCut(f([1, 3])), [['m/f01', 3], ['m/f00', 1]]);
});

test('stack samples by start line: a named function\'s counts again by "<key>@<line>" (an anonymous one has its line already); the hottest split by line only where one key was seen at two lines', () => {
  const series = new SampledSeries(1, {});
  const stacks: StackRecord[] = [
    [['m/parse', 'm/main'], 6, true, [], '', [5, 1]],
    [['m/parse', 'm/main'], 3, true, [], '', [6, 1]],
    [['m/<anonymous>@9', 'm/run'], 2, false, [], '', [9, 8]],
    // by inspector interrupt: no lines
    [['m/run'], 1],
  ];
  series.record(0, { t: 1, counters: [], timers: [], scripts: 0, stacks, idle: 0 } as unknown as Parameters<SampledSeries['record']>[1]);
  const st = series.stackSamples('main');
  assert.deepEqual([...st.byLine.leaves].sort(), [['m/parse@5', 6], ['m/parse@6', 3]]);
  assert.deepEqual([...st.byLine.own].sort(), [['m/parse@5', 6], ['m/parse@6', 3]]);
  assert.deepEqual([...st.byLine.hits].sort(), [['m/main@1', 9], ['m/parse@5', 6], ['m/parse@6', 3], ['m/run@8', 2]]);
  assert.deepEqual([sampledAt(st, 'hits', 'm/parse'), sampledAt(st, 'hits', 'm/parse', 6), sampledAt(st, 'hits', 'm/parse', 7), sampledAt(st, 'leaves', 'm/<anonymous>@9', 9)], [9, 3, 0, 2]);
  assert.deepEqual(leavesByFunction(st).sort(), [['m/<anonymous>@9', 2], ['m/parse@5', 6], ['m/parse@6', 3], ['m/run', 1]]);
  assert.deepEqual(leavesByFunction(st, 'own').sort(), [['m/parse@5', 6], ['m/parse@6', 3]]);
  // by own code, split as the leaves are: parse@6 ran only in Node's code it called, parse@5 is still parse@5
  const calling = new SampledSeries(1, {});
  calling.record(0, { t: 1, counters: [], timers: [], scripts: 0, stacks: [[['m/parse'], 4, true, [], '', [5]], [['m/parse'], 2, false, [], 'node:fs/readFileSync', [6]]], idle: 0 } as unknown as Parameters<SampledSeries['record']>[1]);
  const cs = calling.stackSamples('main');
  assert.deepEqual(leavesByFunction(cs).sort(), [['m/parse@5', 4], ['m/parse@6', 2]]);
  assert.deepEqual(leavesByFunction(cs, 'own'), [['m/parse@5', 4]]);
  // by inspector interrupt alone (no lines): by the key
  const interrupts = new SampledSeries(1, {});
  interrupts.record(0, { t: 1, counters: [], timers: [], scripts: 0, stacks: [[['m/parse'], 4]] } as unknown as Parameters<SampledSeries['record']>[1]);
  assert.equal(sampledAt(interrupts.stackSamples('main'), 'hits', 'm/parse', 6), 4);
});

test('sampled paths to a function: its innermost frame\'s nearest four callers, recursion folded, "…" where the stack went on; a second path only with a tenth of its samples; none from Node\'s code alone', () => {
  const series = new SampledSeries(1, {});
  // innermost first, as the runtime sends them
  const stacks: [string[], number][] = [
    [['m/f', 'm/f', 'm/f', 'm/g', 'm/main'], 6],
    [['m/f', 'm/h', 'm/g', 'm/main'], 3],
    [['m/f', 'm/a', 'm/b', 'm/c', 'm/d', 'm/e'], 1],
    [['m/cb'], 5],
  ];
  series.record(0, { t: 1, counters: [], timers: [], scripts: 0, stacks } as unknown as Parameters<SampledSeries['record']>[1]);
  const st = series.stackSamples('main');
  assert.deepEqual(sampledPaths(st, 'm/f'), [{ functions: ['m/main', 'm/g', 'm/f'], share: 0.6 }, { functions: ['m/main', 'm/g', 'm/h', 'm/f'], share: 0.3 }]);
  assert.deepEqual([...st.callers.get('m/f')!.keys()].sort(), ['m/main\nm/g', 'm/main\nm/g\nm/h', '…\nm/d\nm/c\nm/b\nm/a'].sort());
  assert.deepEqual(sampledPaths(st, 'm/g'), [{ functions: ['m/main', 'm/g'], share: 1 }]);
  assert.deepEqual(sampledPaths(st, 'm/cb'), []);
  assert.deepEqual(sampledPaths(st, 'm/nosuch'), []);
  // a function reached by more distinct paths than are kept: the later ones count together, unnamed
  series.record(0, { t: 2, counters: [], timers: [], scripts: 0, stacks: Array.from({ length: PATHS_KEPT + 5 }, (_, i) => [['m/x', `m/c${i}`], i === PATHS_KEPT + 4 ? 50 : 1]) } as unknown as Parameters<SampledSeries['record']>[1]);
  const x = series.stackSamples('main');
  assert.equal(x.callers.get('m/x')!.size, PATHS_KEPT + 1);
  assert.equal(x.callers.get('m/x')!.get(OTHER_PATHS), 54);
  // (and where those outweigh the commonest kept one, which path is commonest is not known: none named)
  assert.deepEqual(sampledPaths(x, 'm/x'), []);
  series.record(0, { t: 3, counters: [], timers: [], scripts: 0, stacks: [[['m/x', 'm/c1'], 60]] } as unknown as Parameters<SampledSeries['record']>[1]);
  assert.deepEqual(sampledPaths(series.stackSamples('main'), 'm/x'), [{ functions: ['m/c1', 'm/x'], share: 61 / 214 }]);
});

test('the command a bottleneck names next: its metric at its focus and how often its code runs; a thread kept only on attach', () => {
  const b = (hypothesis: string, focus: string) => ({ hypothesis, focus }) as Bottleneck;
  const fn = '/Code/lib/a.js/parse', th = '/Thread/42/3';
  assert.deepEqual(measuring(b('cpu_bound', `${fn},${th}`), 'function', true), [`cpu_inclusive@${fn},${th}`, `procedure_calls@${fn},${th}`]);
  assert.deepEqual(measuring(b('cpu_bound', `${fn},${th}`), 'function', false), [`cpu_inclusive@${fn}`, `procedure_calls@${fn}`]);
  assert.deepEqual(measuring(b('cpu_bound', `${fn}/loop@12`), 'loop', false), [`cpu_inclusive@${fn}/loop@12`, `loop_trips@${fn}/loop@12`]);
  assert.deepEqual(measuring(b('sync_io', `${fn}/readFileSync()`), 'callsite', false), [`sync_io@${fn}/readFileSync()`]);
  assert.deepEqual(measuring(b('cpu_bound', '/Code/lib/a.js'), 'module', false), ['cpu_inclusive@/Code/lib/a.js', 'procedure_calls@/Code/lib/a.js/*']);
  assert.deepEqual(measuring(b('waiting', fn), 'function', false), [`await_wait@${fn}`, `procedure_calls@${fn}`]);
  assert.deepEqual(measuring(b('gc', '/Process/host:42'), undefined, true), ['gc_time']);
  assert.deepEqual(measuring(b('waiting', th), undefined, true), [`event_loop_idle@${th}`]);
  assert.deepEqual(measuring(b('waiting', th), undefined, false), ['event_loop_idle']);
  assert.equal(nextCommand([`cpu_inclusive@${fn}/f()`], { pid: 42 }), `paranode attach 42 -e 'cpu_inclusive@${fn}/f()' --duration 30`);
  assert.equal(nextCommand(['gc_time'], { command: ['node', 'my app.js', "it's"] }), `paranode run -e gc_time -- node 'my app.js' 'it'\\''s'`);
  assert.equal(nextCommand(['gc_time'], { command: ['node', 'a.js'], cwd: '/tmp/x y' }), `cd '/tmp/x y' && paranode run -e gc_time -- node a.js`);
  assert.equal(nextCommand(['gc_time'], { command: ['node', 'a.js'], cwd: process.cwd() }), 'paranode run -e gc_time -- node a.js');
});

test('with no cost limit, a function whose own code holds the time is refined into its loops: the innermost hot loop is named with its line, after its function; the outer one is explained by it, the short one is false', async () => {
  const { diagnosis: d, session } = await diagnose({ command: [process.execPath, 'hot-loop.js', '120'] }, { cwd: FIXTURES, stdio: 'pipe', maxOverhead: Infinity });
  session.child!.kill();
  const node = (f: string) => d.searchHistory.find((n) => n.focus === `/Code/hot-loop.js/score${f}`);
  assert.equal(node('')?.state, 'true', renderDiagnosis(d));
  const loops = d.searchHistory.filter((n) => n.focus.startsWith('/Code/hot-loop.js/score/'));
  assert.deepEqual(loops.map((n) => [n.focus, n.source]), [9, 10, 11].map((l) => [`/Code/hot-loop.js/score/loop@${l}`, `hot-loop.js:${l}`]));
  assert.deepEqual(loops.map((n) => n.state), ['false', 'true', 'true'], JSON.stringify(loops));
  // 50 trips of a modulo against 400,000 of a multiply and a modulo: far either side of the threshold
  assert.ok(node('/loop@9')!.value! < 0.05 && node('/loop@11')!.value! > 0.5, JSON.stringify(loops));
  // score, then its inner loop (again, its caller, may be named too by its own code: where V8 inlined
  // score into it, some of score's samples are its own: 11 % of them in a run on Node 22)
  const named = d.bottlenecks.filter((b) => b.hypothesis === 'cpu_bound').map((b) => b.focus).filter((f) => f !== '/Code/hot-loop.js/again');
  assert.deepEqual(named, ['/Code/hot-loop.js/score', '/Code/hot-loop.js/score/loop@11'], renderDiagnosis(d));
  assert.equal(d.bottlenecks.find((b) => b.focus.endsWith('loop@11'))!.source, 'hot-loop.js:11');
  assert.match(renderDiagnosis(d), /at \/Code\/hot-loop\.js\/score\/loop@11 {2}\(thread \d+\/main\)\n {4}\d+% of the thread's CPU time \(threshold 20%\), [\d.]+-[\d.]+ s, hot-loop\.js:11/);
  assert.ok(d.searchSeconds !== null && d.searchSeconds < WITHIN, `search took ${d.searchSeconds} s`);
  // attached to the same program started without paranode: its loops have no slots, and none is tested
  const child = spawn(process.execPath, ['hot-loop.js', '120'], { cwd: FIXTURES, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise((resolve) => child.stdout!.once('data', resolve));
    const attaching = Date.now();
    const { diagnosis: a, session: s } = await diagnose({ pid: child.pid! }, { hypotheses: ['cpu_bound'] });
    await s.detach();
    assert.equal(first(a, 'cpu_bound')?.focus, '/Code/hot-loop.js/score', renderDiagnosis(a));
    assert.ok(!a.searchHistory.some((n) => n.focus.includes('/loop@')), JSON.stringify(a.searchHistory.map((n) => n.focus)));
    // the attach before the search, which no cost window covers, is reported: the debugger's start at
    // least (a program started plainly), within the session's time before the search
    const pre = a.cost.beforeSearch;
    assert.ok(pre && pre.seconds > 0 && pre.seconds * 1000 <= a.startedAt + a.durationSeconds * 1000 - attaching && pre.busiest > 0 && pre.observed === Math.min(1, pre.busiest / pre.seconds), JSON.stringify(pre));
    assert.match(renderDiagnosis(a), /\nparanode: before the search \(the attach or launch, the sampler's start\): the tool's work took \d+ ms of the busiest thread in \d+ ms \(\d\S*%; no cost window covers it: what is over the limit is paid back by a pause in testing\)\n/);
    // the search's end after its last window, which no window covers either: the last sample's reading at least,
    // ending by the report's time
    const post = a.cost.afterSearch;
    assert.ok(post && post.seconds > 0 && post.busiest > 0 && post.observed === Math.min(1, post.busiest / post.seconds) &&
      (a.cost.trace.at(-1)?.t ?? 0) + post.seconds <= a.durationSeconds, JSON.stringify({ post, trace: a.cost.trace.at(-1), duration: a.durationSeconds }));
    assert.match(renderDiagnosis(a), /\nparanode: the search's end \(after the last window: its tests taken out\): the tool's work took \d+ ms of the busiest thread in \d+ ms \(\d\S*%\)\n/);
    // and the detach after the last window: the runtime switched off, the debugger's disable at least
    const det = a.cost.detach;
    assert.ok(det && det.seconds > 0 && det.main > 0 && det.main <= det.seconds && det.observed === det.main / det.seconds, JSON.stringify(det));
    // after the search's end, which the report's time is taken after
    assert.ok(det.at >= (a.cost.trace.at(-1)?.t ?? 0) + post.seconds && det.at >= a.durationSeconds - 1e-3, JSON.stringify({ det, post, duration: a.durationSeconds }));
    assert.match(renderDiagnosis(a), /\nparanode: the detach \(after the last window\): it stopped the main thread for \d+ ms in \d+ ms \(\d\S*%\)\n/);
  } finally {
    child.kill();
  }
});

test('what explains a loop in the report: a function called in it, a loop of its function nested in it; nothing else', async (t) => {
  const s = await Session.launch([process.execPath, 'hot-loop.js', '60'], [], { stdio: 'pipe', cwd: FIXTURES });
  t.after(() => s.child?.kill());
  await new Promise((resolve) => s.child!.stdout!.once('data', resolve));
  const at = (f: string): SearchNode => ({ id: 0, parent: null, hypothesis: 'cpu_bound', focus: `/Code/hot-loop.js/${f}`, state: 'true', threshold: 0.2, tests: [] });
  const [outer, inner, short, calls, score, again] = ['score/loop@10', 'score/loop@11', 'score/loop@9', 'again/loop@20', 'score', 'again'].map(at);
  const explains = await callGraph(s, [outer, inner, short, calls, score, again]);
  // again's loop calls score: score's time is tested at score (a fresh-clone CI run on Node 22 listed that loop at 99 % beside score)
  assert.equal(explains(calls, score), true);
  assert.equal(explains(outer, inner), true);
  for (const [a, b] of [[inner, outer], [short, inner], [outer, short], [calls, inner], [score, inner], [inner, score], [again, calls]]) {
    assert.equal(explains(a, b), false, `${a.focus} by ${b.focus}`);
  }
  // and functions as before: again calls score
  assert.equal(explains(again, score), true);
});

test('cpu-bound demo starved of CPU (one core shared with three busy processes): still hashRecord, a share of the CPU time it got', async () => {
  // three busy loops and the target on one core (the first this process may run on): the target gets about a
  // quarter of it (the loops end by themselves after 2 minutes, should this test die before killing them)
  const core = /Cpus_allowed_list:\s*(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1];
  const busy = [0, 1, 2].map(() => spawn('taskset', ['-c', core, process.execPath, '-e', 'const end = Date.now() + 120e3; while (Date.now() < end);'], { stdio: 'ignore' }));
  try {
    const { d } = await diagnoseDemo('cpu-bound', {
      onStart: (_c, s) => assert.equal(spawnSync('taskset', ['-a', '-p', '-c', core, String(s.pid)]).status, 0),
    });
    const whole = d.searchHistory.find((n) => n.hypothesis === 'cpu_bound' && n.parent === null)!;
    // the thread ran a fraction of the time and waited for the core the rest: CPU-bound all the same
    // (its CPU time alone, about a quarter of the window, fell under the 20% threshold beside more load)
    assert.ok(whole.state === 'true' && whole.value! > 0.8, `whole program: ${whole.state} ${whole.value}`);
    const b = first(d, 'cpu_bound');
    assert.ok(b, JSON.stringify(d.bottlenecks));
    assert.equal(b.focus, '/Code/cpu-bound.js/hashRecord');
    assert.equal(b.shareOf, 'cpu');
    assert.ok(b.value >= b.threshold && b.value <= 1, `hashRecord ${b.value}`);
    assert.ok(d.searchSeconds !== null && d.searchSeconds < WITHIN, `search took ${d.searchSeconds} s`);
  } finally {
    for (const p of busy) p.kill();
  }
});

test('async-wait demo: waiting, at fetchProfile (awaiting the network), not at its awaiting callers', async () => {
  const { d, pid } = await diagnoseDemo('async-wait');
  const b = first(d, 'waiting');
  assert.ok(b, JSON.stringify(d.bottlenecks));
  assert.equal(b.focus, '/Code/async-wait.js/fetchProfile');
  assert.equal(b.thread, `${pid}/main`);
  // not CPU-bound; on a loaded machine the program's start (loading, its first requests) may be: a phase
  // at its start, in its module, never a function on the waiting path, and over before the waiting is. How
  // long it lasts is the machine's (CI's Node 24: the module at 30 % of the busy samples over [0, 1.6] s, and
  // over [0, 4.9] s of a [0.6, 6.9] s wait, when the time its callbacks waited for a core counted as CPU need)
  const cpu = d.bottlenecks.filter((x) => x.hypothesis === 'cpu_bound');
  assert.ok(cpu.every((x) => x.interval[0] <= 1 && x.interval[1] < b.interval[1] && (x.focus === '/Code/async-wait.js' || x.focus.startsWith('/Process/'))), JSON.stringify(d.bottlenecks));
  for (const caller of ['loadUser', 'loadUsers', 'main']) assert.equal(d.searchHistory.find((n) => n.focus === `/Code/async-wait.js/${caller}`)?.state, 'true');
  assert.ok(d.searchSeconds !== null && d.searchSeconds < WITHIN, `search took ${d.searchSeconds} s`);
  // the launch's work before the search over the limit is paid back before its thread's first test: the
  // debt falls by at most the limit's share of each second, so no window ends with a test running sooner
  const pre = d.cost.beforeSearch!, limit = d.cost.limit!;
  const owed = pre.busiest - limit * pre.seconds;
  const firstTest = d.cost.trace.find((w) => w.tests > 0);
  assert.ok(owed > 0 && firstTest && firstTest.t >= owed / limit, JSON.stringify({ pre, owed, trace: d.cost.trace.slice(0, 12) }));
  // the stack samples are the program's: paranode's own parser, preparing modules in this thread, is not in them
  assert.ok((d.hottest ?? []).every((h) => h.node ? /^(node:|\(native\)\/)/.test(h.function) : h.function.startsWith('async-wait.js/')), JSON.stringify(d.hottest));
  // nor is the tool's own code, where it calls Node (the sampler's inspector session, its clock reads)
  assert.ok(!(d.hottest ?? []).some((h) => h.function.startsWith('node:inspector/')), JSON.stringify(d.hottest));
});

test('async-wait demo on one core shared with six busy processes: waiting, and not CPU-bound for the time its callbacks wait for the core', async () => {
  // its callbacks, stretched by the wait for the core, fill much of the time its loop is not idle: counted as
  // CPU need (the CPU it got plus that wait), the program read 21-25 % CPU-bound mid-run here, beside other
  // test files too; as the CPU it got less that wait taken off its time, 7-13 %
  const core = /Cpus_allowed_list:\s*(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1];
  const busy = [0, 1, 2, 3, 4, 5].map(() => spawn('taskset', ['-c', core, process.execPath, '-e', 'const end = Date.now() + 120e3; while (Date.now() < end);'], { stdio: 'ignore' }));
  try {
    const { d } = await diagnoseDemo('async-wait', {
      hypotheses: ['cpu_bound', 'waiting'],
      // no cost limit: the thread runs a seventh of the time, and priced against that the default 5 %
      // held the refinement's tests back (the search took 18-112 s on Node 22 by hand, and past the
      // demo's 120 s in CI); what the limit does is not this test's question
      maxOverhead: Infinity,
      onStart: (_c, s) => assert.equal(spawnSync('taskset', ['-a', '-p', '-c', core, String(s.pid)]).status, 0),
    });
    assert.equal(first(d, 'waiting')?.focus, '/Code/async-wait.js/fetchProfile', JSON.stringify(d.bottlenecks));
    // its first window holds its start (loading, preparing its module), which may be CPU-bound; none after it is
    const whole = d.searchHistory.find((n) => n.hypothesis === 'cpu_bound' && n.parent === null)!;
    assert.ok(whole.tests.length >= 2 && whole.tests.slice(1).every((t) => !t.verdict), JSON.stringify(whole.tests));
  } finally {
    for (const p of busy) p.kill();
  }
});

test('a small hot function that runs in a builtin (no interrupt check in it) is named by V8\'s stack samples; under --cpu-prof they come by interrupt and the program\'s stderr gains nothing', async () => {
  const FIX = path.join(ROOT, 'test', 'fixtures');
  // allowed() is V8's top self-time function (93% of --cpu-prof's samples): a bottleneck and the hottest
  const { diagnosis: d, session } = await diagnose({ command: [process.execPath, 'small-hot.js', '120'] }, { cwd: FIX, hypotheses: ['cpu_bound'] });
  session.child!.kill();
  const b = first(d, 'cpu_bound');
  assert.equal(b?.focus, '/Code/small-hot.js/allowed', JSON.stringify(d.bottlenecks));
  assert.equal(b.shareOf, 'cpu');
  assert.match(d.searchHistory.find((n) => n.focus === '/Code/small-hot.js/allowed')?.note ?? '', /^decided from \d+ stack samples of the busy thread/);
  const hot = (d.hottest ?? []).filter((h) => h.thread === 'main');
  assert.equal(hot[0]?.function, 'small-hot.js/allowed', JSON.stringify(hot));
  assert.ok(hot[0].by === 'profiler' && hot[0].self > 0.5, JSON.stringify(hot));
  // with Node's own --cpu-prof on, console-started profiles would reach its session (it prints
  // "Cannot retrieve id from CPU profile response"): interrupt samples instead, and said so
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-cpuprof-'));
  let stderr = '';
  const r = await diagnose({ command: [process.execPath, '--cpu-prof', '--cpu-prof-dir', dir, 'small-hot.js', '3'] }, {
    cwd: FIX, stdio: 'pipe', hypotheses: ['cpu_bound'],
    onStart: (_c, s) => { s.child!.stderr!.setEncoding('utf8').on('data', (x: string) => { stderr += x; }); s.child!.stdout!.resume(); },
  });
  await r.session.waitForExit();
  assert.equal(stderr, '');
  assert.ok((r.diagnosis.hottest ?? []).every((h) => h.by === 'interrupt'), JSON.stringify(r.diagnosis.hottest));
  assert.ok(r.session.notes.some((n) => n.startsWith('stack samples by inspector interrupt, not by V8\'s sampling profiler (the program runs with --cpu-prof)')), r.session.notes.join('\n'));
  assert.equal(fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).length, 1);
});

test('anonymous functions are told apart by the line they start at: the hot callback of three is decided from V8\'s stack samples and listed as the hottest', async () => {
  const FIX = path.join(ROOT, 'test', 'fixtures');
  const { diagnosis: d, session } = await diagnose({ command: [process.execPath, 'anonymous-hot.js', '60'] }, { cwd: FIX, hypotheses: ['cpu_bound'] });
  session.child!.kill();
  const node = (line: number) => d.searchHistory.find((n) => n.focus === `/Code/anonymous-hot.js/<anonymous>@${line}`);
  // the setInterval callback at line 8 sorts and joins; the others (lines 11, 12) do nearly nothing
  assert.equal(node(8)?.state, 'true', JSON.stringify(d.searchHistory));
  for (const line of [8, 11, 12]) assert.match(node(line)?.note ?? '', /^decided from \d+ stack samples of the busy thread \(on the stack in \d+\)$/, `line ${line}: ${JSON.stringify(node(line))}`);
  for (const line of [11, 12]) assert.equal(node(line)?.state, 'false', JSON.stringify(node(line)));
  assert.ok(d.bottlenecks.some((b) => b.focus === '/Code/anonymous-hot.js/<anonymous>@8' && b.source === 'anonymous-hot.js:8'), JSON.stringify(d.bottlenecks));
  const hot = (d.hottest ?? []).filter((h) => h.thread === 'main' && !h.node);
  assert.equal(hot[0]?.function, 'anonymous-hot.js/<anonymous>@8', JSON.stringify(hot));
});

test('where breakpoints reach the code, a function whose own code is hot is never tested (it would run in V8\'s interpreter), a cold one is', async () => {
  const FIX = path.join(ROOT, 'test', 'fixtures');
  const child = spawn(process.execPath, ['pinning.js', '120'], { cwd: FIX, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise((resolve) => child.stdout!.once('data', resolve));
    // no LiveEdit (a pause limit of 0 ms, or Node 26's V8): the functions are reached by breakpoints on every version
    const { diagnosis: d, session } = await diagnose({ pid: child.pid! }, { hypotheses: ['sync_io'], maxPauseMs: 0 });
    await session.detach();
    assert.equal(first(d, 'sync_io')?.focus, '/Code/pinning.js/cold', JSON.stringify(d.searchHistory));
    const hot = d.searchHistory.find((n) => n.focus === '/Code/pinning.js/hot');
    assert.equal(hot?.state, 'too costly', JSON.stringify(hot));
    assert.match(hot.note ?? '', /^its points are reached by breakpoints here, and a function holding one runs in V8's interpreter: \/Code\/pinning\.js\/hot \(its own code, and its callers' that it may be inlined into, \d+\.\d% of the thread's samples\) would cost about \d+\.\d% of the thread, over the 5\.0% limit$/);
    // nothing of the test went into hot (hotLoop, its caller, may be tested: a name of its own)
    assert.ok(!session.notes.some((n) => /pinning\.js\/hot(?![\w$])/.test(n)), session.notes.join('\n'));
    assert.match(renderDiagnosis(d), /\nnot tested, too costly under the limit \(\d+\):\n {2}\$ sync_io @ \/Code\/pinning\.js\/hot \(its points are reached by breakpoints/);
  } finally {
    child.kill();
  }
});

test('worker-imbalance demo: CPU-bound in the overloaded worker thread, at crunch', async () => {
  const { d, pid, stderr, notes } = await diagnoseDemo('worker-imbalance');
  const heavy = /heavy worker: thread (\d+)/.exec(stderr)?.[1];
  assert.ok(heavy, stderr);
  const b = first(d, 'cpu_bound');
  assert.ok(b, JSON.stringify(d.bottlenecks));
  assert.equal(b.focus, `/Code/worker-imbalance.js/crunch,/Thread/${pid}/${heavy}`, `${renderDiagnosis(d)}\n${JSON.stringify(d.searchHistory.filter((n) => n.focus.includes(`/Thread/${pid}/${heavy}`)))}`);
  // where V8 had inlined crunch into the message callback that calls it (code optimized before the
  // profiler started: some runs), the samples were the callback's and a timer decided crunch
  const crunch = d.searchHistory.find((n) => n.focus === b.focus)!;
  if (crunch.inlinedInto) assert.match(crunch.note ?? '', /^tested (by a timer: worker-imbalance\.js\/<anonymous>@16, which calls it, holds the stack samples|alone)/);
  // the other workers were tested and found not CPU-bound
  const threads = d.searchHistory.filter((n) => n.hypothesis === 'cpu_bound' && /^\/Thread\/\d+\/\d+$/.test(n.focus));
  assert.equal(threads.length, 4, `${JSON.stringify(threads)}; notes: ${notes.join('; ')}`);
  for (const n of threads) assert.equal(n.state, n.focus.endsWith(`/${heavy}`) ? 'true' : 'false', n.focus);
  // the threads that wait (main on its workers, the idle workers for work) rank after the busy worker
  // (crunch is inlined into its caller: it has no stack samples of its own, and ranks by its value)
  const at = d.bottlenecks.indexOf(b);
  const waiting = d.bottlenecks.map((w, i) => ({ w, i })).filter(({ w }) => w.hypothesis === 'waiting' && w.thread !== `${pid}/${heavy}`);
  for (const { w, i } of waiting) assert.ok(i > at, `waiting at ${w.focus} ranks ${i + 1}, crunch ${at + 1}: ${renderDiagnosis(d)}`);
  assert.ok(d.searchSeconds !== null && d.searchSeconds < WITHIN, `search took ${d.searchSeconds} s`);
});

test('ranking: a thread waiting while another thread of its process is CPU-bound ranks after that thread\'s CPU-bound bottlenecks, whatever the values', () => {
  const b = (hypothesis: string, thread: string | null, value: number): Bottleneck =>
    ({ hypothesis, focus: `/Thread/${thread}`, value, thread, threshold: 0.2, shareOf: 'time', source: null, interval: [0, 1] });
  const mainWaits = b('waiting', '1/main', 0.97), busyWaits = b('waiting', '1/5', 0.9), gc = b('gc', null, 0.8), busy = b('cpu_bound', '1/5', 0.6), idleWorker = b('waiting', '1/2', 0.5);
  const byValue = [mainWaits, busyWaits, gc, busy, idleWorker];
  const ranked = waitersAfterBusy(byValue, new Map(byValue.map((x) => [x, x.value])));
  // the busy thread's own waiting and what is not waiting keep their places; the other threads' waiting follows the busy one
  assert.deepEqual(ranked, [busyWaits, gc, busy, mainWaits, idleWorker]);
  // with no CPU-bound thread nothing moves
  const calm = [mainWaits, gc, idleWorker];
  assert.deepEqual(waitersAfterBusy(calm, new Map(calm.map((x) => [x, x.value]))), calm);
});

test('CLI: paranode diagnose -- node app.js prints the ranked report and writes --json', () => {
  const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-')), 'd.json');
  const r = spawnSync(process.execPath, [CLI, 'diagnose', '--stop', '--hypotheses', 'cpu_bound,waiting', '-t', 'waiting=60%', '--json', json, '--', process.execPath, 'async-wait.js', '60'], { cwd: DEMO, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /search complete after [\d.]+ s/);
  assert.match(r.stdout, /^ 1\. Waiting/m);
  assert.match(r.stdout, /at \/Code\/async-wait\.js\/fetchProfile/);
  assert.match(r.stderr, /TRUE {2}waiting @ \/Code\/async-wait\.js\/fetchProfile/);
  // the log says what holds: a refinement found false is printed only if it held before
  for (const [line, focus] of r.stderr.matchAll(/^paranode: [\d.]+ s false \w+ @ (\S+) .*$/gm)) {
    assert.ok(r.stderr.slice(0, r.stderr.indexOf(line)).includes(` @ ${focus} `), `${line}: never shown true`);
  }
  const d = JSON.parse(fs.readFileSync(json, 'utf8')) as Diagnosis;
  assert.deepEqual(Object.keys(d.bottlenecks[0]).sort(), ['focus', 'hypothesis', 'interval', 'next', 'shareOf', 'source', 'thread', 'threshold', 'value']);
  // (a waiting function is not on the stack: no sampled paths; the command that measures it)
  assert.equal(d.bottlenecks[0].next, `paranode run -e await_wait@/Code/async-wait.js/fetchProfile -e procedure_calls@/Code/async-wait.js/fetchProfile -- ${shellWord(process.execPath)} async-wait.js 60`);
  assert.ok(r.stdout.includes(`    next: ${d.bottlenecks[0].next}\n`), r.stdout);
  assert.equal(d.bottlenecks[0].shareOf, 'time');
  assert.equal(d.bottlenecks[0].threshold, 0.6);
  assert.equal(d.bottlenecks[0].source, 'async-wait.js:23');
  assert.ok(Array.isArray(d.searchHistory) && d.searchHistory.every((n) => ['cpu_bound', 'waiting'].includes(n.hypothesis)));
  assert.ok(typeof d.cost.observed.avg === 'number' && d.cost.limit === 0.05);
});

test('CLI: bad diagnose arguments are one-line errors, before any target is touched', () => {
  const run = (...args: string[]) => spawnSync(process.execPath, [CLI, 'diagnose', ...args], { encoding: 'utf8' });
  let r = run('--max-overhead', 'lots', '--', 'node', 'x.js');
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /--max-overhead must be a percentage like 5%/);
  r = run('-t', 'slow=10%', '--', 'node', 'x.js');
  assert.match(r.stderr, /unknown hypothesis "slow"/);
  r = run('--hypotheses', 'cpu,waiting', '--', process.execPath, '-e', '0');
  assert.match(r.stderr, /unknown hypothesis "cpu"/);
  r = run('attach');
  assert.match(r.stderr, /usage: paranode diagnose \[options\] attach <pid>/);
});


test('functions that stack samples name alike (A.parse, B.parse, C.parse: `parse` in a frame) are told apart by the line they start at: each its own share of the thread, none another\'s', async () => {
  // (before, each read the samples of all three: 0.99 of the thread each, C.parse a bottleneck)
  const { diagnosis: d, session } = await diagnose({ command: [process.execPath, '--max-opt=0', 'same-names.js', '120'] }, { cwd: FIXTURES, stdio: 'pipe', hypotheses: ['cpu_bound'] });
  session.child!.kill();
  const node = (c: string) => d.searchHistory.find((n) => n.focus === `/Code/same-names.js/${c}.parse`);
  const [a, b, c] = ['A', 'B', 'C'].map(node);
  assert.deepEqual([a?.state, b?.state, c?.state], ['true', 'true', 'false'], renderDiagnosis(d));
  // A's loop does twice B's work; C's next to none
  assert.ok(a!.value! > b!.value! && b!.value! >= 0.2 && c!.value! < 0.05, `A ${a!.value}, B ${b!.value}, C ${c!.value}`);
  assert.ok(a!.value! + b!.value! + c!.value! <= 1.01, `A ${a!.value}, B ${b!.value}, C ${c!.value}: more than the thread`);
  assert.deepEqual(d.bottlenecks.filter((x) => x.focus.endsWith('.parse')).map((x) => x.focus), ['/Code/same-names.js/A.parse', '/Code/same-names.js/B.parse']);
  // the hottest functions: the two parse methods seen, each by its start line, A's first; C's, called
  // once, only where a sample happened to land in it (1 of 174 once on Node 22), under the bound above
  const hot = d.hottest!.filter((h) => h.thread === 'main' && h.function.startsWith('same-names.js/parse'));
  assert.deepEqual(hot.slice(0, 2).map((h) => h.function), ['same-names.js/parse@8', 'same-names.js/parse@9'], JSON.stringify(d.hottest));
  assert.ok(hot.slice(2).every((h) => h.function === 'same-names.js/parse@10' && h.self < 0.05), JSON.stringify(d.hottest));
  assert.match(renderDiagnosis(d), /same-names\.js\/parse@8/);
});

test('a whole-program hypothesis with nothing to refine that holds again leaves the search complete: the event loop held in phases, the search complete once, before the second phase', async () => {
  // (under a 5 % limit the instrumentation's own cost flickers about its 5 % threshold: each new
  // phase of it made the search "complete" anew, a typecheck's search 24.6 s long for 12 s of work)
  let completions = 0;
  const { diagnosis: d, session } = await diagnose({ command: [process.execPath, 'blocked-phases.js', '60'] }, {
    cwd: FIXTURES, stdio: 'pipe', hypotheses: ['event_loop_blocked'], durationSeconds: 17,
    onStart: (c) => { c.on('complete', () => { completions++; }); },
  });
  session.child!.kill();
  const phases = d.phases.event_loop_blocked ?? [];
  assert.ok(phases.length >= 2, `two phases of a held event loop: ${JSON.stringify(phases)}`);
  assert.equal(completions, 1);
  assert.ok(d.searchSeconds !== null && d.searchSeconds < phases[1][0], `complete at ${d.searchSeconds} s, before the second phase (${JSON.stringify(phases)})`);
});

test('phases of a whole-program hypothesis: a dip of fewer than three windows does not end one; after one ended, a single window over the threshold is no new phase (no refinement is decided from stack samples on it), two in a row are', () => {
  const windows = (v: string) => [...v].map((c, i) => ({ from: i, to: i + 1, value: c === 'T' ? 0.3 : 0, verdict: c === 'T' }));
  // the first phase may be one window (the search refines at once); a dip of two does not end it
  assert.deepEqual(phasesOf(windows('TFFTTFFF')), [[0, 5]]);
  assert.deepEqual(phasesOf(windows('TFFFF')), [[0, 1]]);
  // a lone window after a phase ended: a blip (the tool's cost priced high for a second), no phase
  assert.deepEqual(phasesOf(windows('TTFFFFFFFFTFFFF')), [[0, 2]]);
  assert.deepEqual(phasesOf(windows('TTFFFFTTFFF')), [[0, 2], [6, 8]]);
  // a window true at the very end may be the start of one: kept
  assert.deepEqual(phasesOf(windows('TTFFFFT')), [[0, 2], [6, 7]]);
  // stack samples decide a refinement only in a phase: the first window, a dip's end, the second of a new one
  const live = (v: string) => inPhase(windows(v));
  assert.deepEqual(['FFT', 'TTT', 'TFFT', 'TTFFFFTT', 'FFFFT'].map(live), [true, true, true, true, true]);
  assert.deepEqual(['', 'TF', 'TTFFFFT', 'TTFFFFFFFFT', 'TTFFFFTTFFFT'].map(live), [false, false, false, false, false]);
});

test('a search with nothing left to test reads a busy thread every 500 ms until its duration ends, the report says so', async () => {
  const child = spawn(process.execPath, ['hot-loop.js', '120'], { cwd: FIXTURES, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise((resolve) => child.stdout!.once('data', resolve));
    const ac = new AbortController();
    const searching = new Set<number | null>();
    let completeAt = -1;
    const quiet: { at: number; interval: number | null }[] = [];
    const { diagnosis: d, session: s } = await diagnose({ pid: child.pid! }, {
      hypotheses: ['cpu_bound'], durationSeconds: 120, signal: ac.signal,
      onStart: (c, s) => {
        c.once('complete', () => { completeAt = performance.now(); });
        s.on('sample', () => {
          if (completeAt < 0) { searching.add(s.samplingIntervalMs); return; }
          quiet.push({ at: performance.now(), interval: s.samplingIntervalMs });
          // the sample the completing tick followed, then four at the quiet pace
          if (quiet.length === 5) ac.abort();
        });
      },
    });
    await s.detach();
    assert.deepEqual([...searching], [200]);
    // (the search's end and the detach sample once more by themselves, after the abort)
    const paced = quiet.slice(0, 5);
    assert.ok(paced.slice(1).every((q) => q.interval === QUIET_INTERVAL_MS), JSON.stringify(quiet));
    // three gaps of the session's timer at 500 ms (each sample's answer comes a little after its timer)
    assert.ok(paced[4].at - paced[1].at >= 1250, JSON.stringify(paced.map((q) => q.at - paced[0].at)));
    assert.equal(first(d, 'cpu_bound')?.focus, '/Code/hot-loop.js/score', renderDiagnosis(d));
    assert.ok(d.sampling?.some((n) => /^stack samples: read every 500 ms from \d+\.\d s, nothing being left to test and every thread busy \(every 200 ms while the search tested\)/.test(n)), JSON.stringify(d.sampling));
    assert.match(renderDiagnosis(d), /stack samples: read every 500 ms from/);
  } finally {
    child.kill();
  }
});
