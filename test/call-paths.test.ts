// Call-path profiles (issue #13, TAU's k-level call paths): exact calls per
// path for k = 1, 2, 3 and whole paths, recursion folded, time after an await
// on the path that awaited, a generator's segments under whoever resumed it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { MetricManager, Session } from '../src/api';
import type { CallPath } from '../src/data/call-path-profile';
import { CallPaths } from '../src/agent/call-paths';
import type { Protocol } from 'devtools-protocol';
import Ajv from 'ajv';
import { pathToFileURL } from 'node:url';
import { sampleInterval } from '../src/data/profile-export';
import { CLI, FIXTURES, LIVEEDIT, lineRequests, Target } from './support/helpers';

const M = 'call-paths.js';
/** path -> calls, over the main thread, for paths of the fixture's own functions */
const calls = (ps: CallPath[]) => Object.fromEntries(ps.filter((p) => p.thread === 'main').map((p) => [p.functions.map((f) => f.slice(M.length + 1)).join('>'), p.calls]));
const ROOTDIR = path.resolve(FIXTURES, '..', '..');
const pick = (ps: CallPath[], key: string) => ps.find((p) => p.functions.map((f) => f.slice(M.length + 1)).join('>') === key);

async function launched(): Promise<{ s: Session; request: (line: string, re: RegExp) => Promise<RegExpMatchArray> }> {
  const s = await Session.launch([process.execPath, path.join(FIXTURES, M)], [], { stdio: 'pipe', cwd: FIXTURES });
  after(() => s.child?.kill());
  const request = lineRequests(s.child!);
  await request('', /ready/);
  return { s, request };
}

test('call paths: exact calls per path for k = 1, 2, 3 and whole paths; recursion folds into the outermost', async () => {
  const { s, request } = await launched();
  const r = await s.profileCallPaths(['sync', 'a', 'b', 'leaf', 'rec', 'x', 'y'].map((f) => `/Code/${M}/${f}`));
  assert.ok(r.bySlot > 0 && r.byBreakpoint === 0 && r.notPlaced === 0, JSON.stringify(r));
  await request('sync', /sync done/);
  await s.sample();
  // rec(3) twice: 2 outer and 6 recursive activations, one path; x(2) -> y -> x -> y -> x folds to sync>x and sync>x>y
  assert.deepEqual(calls(s.callPaths()), {
    'sync': 1, 'sync>a': 10, 'sync>a>b': 10, 'sync>a>b>leaf': 20, 'sync>a>leaf': 10, 'sync>b': 5, 'sync>b>leaf': 10,
    'sync>rec': 8, 'sync>rec>leaf': 2, 'sync>x': 3, 'sync>x>y': 2, 'sync>x>leaf': 1,
  });
  assert.deepEqual(calls(s.callPaths(1)), { sync: 1, a: 10, b: 15, leaf: 43, rec: 8, x: 3, y: 2 });
  assert.deepEqual(calls(s.callPaths(2)), {
    'sync': 1, 'sync>a': 10, 'a>b': 10, 'b>leaf': 30, 'a>leaf': 10, 'sync>b': 5, 'sync>rec': 8, 'rec>leaf': 2, 'sync>x': 3, 'x>y': 2, 'x>leaf': 1,
  });
  assert.deepEqual(calls(s.callPaths(3)), {
    'sync': 1, 'sync>a': 10, 'sync>a>b': 10, 'a>b>leaf': 20, 'sync>a>leaf': 10, 'sync>b': 5, 'sync>b>leaf': 10,
    'sync>rec': 8, 'sync>rec>leaf': 2, 'sync>x': 3, 'sync>x>y': 2, 'sync>x>leaf': 1,
  });
  const ps = s.callPaths();
  assert.equal(pick(ps, 'sync>a')!.path, `/CallPath/inf/${M}/sync>${M}/a`);
  assert.equal(s.callPaths(2).find((p) => p.calls === 30)!.path, `/CallPath/2/${M}/b>${M}/leaf`);
  // times add up: a path's inclusive time is its exclusive time and its callees' inclusive time,
  // recursion counted once (the outermost rec), and nothing is more inclusive than sync. In
  // mutual recursion the inner x goes back to x's path: its time is in y's inclusive time and in
  // x's exclusive time, so x's inclusive time is its exclusive time, y's and leaf's (and y's
  // inclusive time holds more than its exclusive time with no callee path of its own)
  const [sx, sxy, sxl] = ['sync>x', 'sync>x>y', 'sync>x>leaf'].map((k) => pick(ps, k)!);
  assert.ok(Math.abs(sx.wall.inclusive - (sx.wall.exclusive + sxy.wall.exclusive + sxl.wall.inclusive)) < 1e-6, JSON.stringify([sx, sxy, sxl]));
  assert.ok(sxy.wall.inclusive > sxy.wall.exclusive, JSON.stringify(sxy));
  for (const p of ps) {
    if (p === sx || p === sxy) continue;
    const kids = ps.filter((c) => c.functions.length === p.functions.length + 1 && c.functions.slice(0, -1).join('>') === p.functions.join('>'));
    const sum = p.wall.exclusive + kids.reduce((t, c) => t + c.wall.inclusive, 0);
    assert.ok(Math.abs(p.wall.inclusive - sum) < 1e-6, `${p.path}: inclusive ${p.wall.inclusive} against ${sum}`);
    assert.ok(p.wall.exclusive >= 0 && p.cpu.exclusive >= -1e-6 && p.wait === 0, JSON.stringify(p));
    assert.ok(p.wall.inclusive <= pick(ps, 'sync')!.wall.inclusive + 1e-9, p.path);
    // virtual times: the same less the profile's own work, never more, never below zero
    const v = p.virtual;
    assert.ok(v.wall.inclusive <= p.wall.inclusive + 1e-9 && v.wall.exclusive <= p.wall.exclusive + 1e-9 && v.cpu.inclusive <= p.cpu.inclusive + 1e-9, JSON.stringify(p));
    assert.ok(v.wall.inclusive >= 0 && v.wall.exclusive >= 0 && v.cpu.exclusive >= 0, JSON.stringify(p));
  }
  // a path's name comes with its first record only: the second run's records name it by number
  await request('sync', /sync done/);
  await s.sample();
  assert.deepEqual(calls(s.callPaths(3)), {
    'sync': 2, 'sync>a': 20, 'sync>a>b': 20, 'a>b>leaf': 40, 'sync>a>leaf': 20, 'sync>b': 10, 'sync>b>leaf': 20,
    'sync>rec': 16, 'sync>rec>leaf': 4, 'sync>x': 6, 'sync>x>y': 4, 'sync>x>leaf': 2,
  });
  assert.ok(s.notes.some((n) => /^call-path profile: its own work adds \d+ ns to a call's time and \d+ ns to its caller's \((calibrated|measured in the thread)/.test(n)), s.notes.join('\n'));
  await s.detach();
});

test('call paths: the profile\'s own work is measured where it runs, never priced under the starting price, and left out of the virtual times', async () => {
  const { s, request } = await launched();
  await s.profileCallPaths(['many', 'sync', 'a', 'b', 'leaf', 'rec', 'x', 'y'].map((f) => `/Code/${M}/${f}`));
  // many(2000): one frame over 2,000 × 82 calls, about 330,000 operations, one in 256 timed
  // (at random gaps), 512 a window: the price changes while it runs
  await request('many 2000', /many done/);
  await s.sample();
  const ps = s.callPaths();
  assert.equal(pick(ps, 'many')!.calls, 1);
  assert.equal(pick(ps, 'many>sync')!.calls, 2000);
  assert.equal(pick(ps, 'many>sync>a>b>leaf')!.calls, 40000);
  const start = s.notes.map((n) => n.match(/^call-path profile: its own work adds (\d+) ns to a call's time and (\d+) ns to its caller's \((calibrated|measured in the thread)/)).find(Boolean);
  const measured = s.notes.map((n) => n.match(/^call-path profile: its own work measured where it runs \((\d+) operations timed\): the virtual times take (\d+) ns of a call's time and (\d+) ns of its caller's$/)).find(Boolean);
  assert.ok(start && measured, s.notes.join('\n'));
  const [timed, own, perChild] = measured.slice(1, 4).map(Number);
  assert.ok(timed >= 512, `${timed} operations timed`);
  // a clock read is tens of ns, an operation a few of them: what is measured is in that range
  assert.ok(own > 0 && own < 20_000 && perChild > 0 && perChild < 20_000, measured[0]);
  // the calibrated price is a floor (what the timed span leaves out, the handler's call, it has)
  if (start[3] === 'calibrated') assert.ok(own >= Number(start[1]) && perChild >= Number(start[2]), `${start[0]} / ${measured[0]}`);
  // never more than the raw times, never below zero, the exclusive ones too: a frame's
  // callees are priced as they ended, in its time as in theirs, whatever the price later
  for (const p of ps) {
    const v = p.virtual;
    assert.ok(Number.isFinite(v.wall.inclusive) && v.wall.inclusive >= 0 && v.wall.inclusive <= p.wall.inclusive + 1e-9, JSON.stringify(p));
    assert.ok(v.wall.exclusive >= 0 && v.wall.exclusive <= p.wall.exclusive + 1e-9, JSON.stringify(p));
  }
  const many = pick(ps, 'many')!;
  assert.ok(many.wall.inclusive - many.virtual.wall.inclusive > 0, JSON.stringify(many));
  await s.detach();
});

test('call paths: a timed operation is split at its boundary read, the caller\'s side only where there is a caller; a frame\'s callees are priced as they ended', () => {
  // every clock read takes r (100 ns); kindOf takes W, read before a resumption's boundary
  // (the caller's side) and after an await's (the caller's side too); the program's own work
  // is added to the clock by hand: P in each callee segment, Q in the caller's between them
  const r = 0.0001, W = 0.00005, P = 50 * r, Q = 50 * r;
  let t = 0;
  const profile = () => new CallPaths((id) => `f${id}`, () => { t += W; return 'await'; }, () => (t += r), () => 0);
  // resumed from the event loop and awaiting again, no frame below: the caller's sides are in
  // no segment, so the caller's part stays the starting price
  const p = profile();
  p.startFrom({ own: 20 * r, perChild: 20 * r }, false);
  for (let i = 0; i < 200_000; i++) { p.resume(1); t += P; p.suspend(1); }
  assert.ok(p.measuredFrom >= 512, `${p.measuredFrom} operations timed`);
  assert.ok(Math.abs(p.overhead.own - r) < 1e-9 && p.overhead.perChild === 20 * r, JSON.stringify(p.overhead));
  // under a frame of f0 that begins at a starting price above the one measured (as one
  // measured at the start, cold, is): own r, the caller's part r and the two W
  const q = profile();
  q.startFrom({ own: 20 * r, perChild: 20 * r }, false);
  q.enter(0);
  for (let i = 0; i < 400_000; i++) { q.resume(1); t += P; q.suspend(1); t += Q; }
  q.exit(0);
  assert.ok(q.measuredFrom >= 6 * 512, `${q.measuredFrom} operations timed`);
  assert.ok(Math.abs(q.overhead.own - r) < 1e-9 && Math.abs(q.overhead.perChild - (r + 2 * W)) < 1e-9, JSON.stringify(q.overhead));
  // f0's callees that ended in the first window were less 20 r and 20 r, the later ones less
  // r and r + 2 W: f0's own virtual time is its raw time less the same prices, so it stays
  // within its raw exclusive time (priced all at the last price it would gain 18 r from each
  // of the first window's callees: over its raw exclusive time)
  const f0 = q.take(true).find((x) => x[0] === 'f0')!;
  const [exclWall, vExclWall] = [f0[3], f0[8]];
  assert.ok(vExclWall <= exclWall + 1e-12 && vExclWall >= 400_000 * Q - 400_000 * 18 * r, JSON.stringify(f0));
  // and a floor holds: never priced under the starting price
  t = 0;
  const f = new CallPaths((id) => `f${id}`, () => 'none', () => (t += r), () => 0);
  f.startFrom({ own: 3 * r, perChild: 0 }, true);
  f.enter(0);
  for (let i = 0; i < 400_000; i++) { f.enter(1); f.exit(1); }
  f.exit(0);
  assert.ok(Math.abs(f.overhead.own - 3 * r) < 1e-9 && Math.abs(f.overhead.perChild - r) < 1e-9, JSON.stringify(f.overhead));
});

test('call paths: after an await the time stays on the path that awaited, and the suspension is its waiting time', async () => {
  const { s, request } = await launched();
  await s.profileCallPaths(['rounds', 'loadUser', 'fetchProfile', 'parse', 'spin'].map((f) => `/Code/${M}/${f}`));
  const N = 4;
  await request(`async ${N}`, /async done/);
  await s.sample();
  const ps = s.callPaths();
  // three loadUser at once, each resumed from the event loop: still under rounds>loadUser>fetchProfile
  assert.deepEqual(calls(ps), {
    'rounds': 1, 'rounds>loadUser': 3 * N, 'rounds>loadUser>fetchProfile': 3 * N,
    'rounds>loadUser>fetchProfile>spin': 3 * N, 'rounds>loadUser>fetchProfile>parse': 3 * N, 'rounds>loadUser>fetchProfile>parse>spin': 3 * N,
  });
  const f = pick(ps, 'rounds>loadUser>fetchProfile')!;
  // its own 20 ms spin and parse's 5 ms after the await are on its path; the 30 ms delay is waiting
  assert.ok(f.wall.inclusive >= 3 * N * 0.025, `inclusive ${f.wall.inclusive} s`);
  // the profile's own work is microseconds against the 25 ms spun: its virtual time is all but the same
  assert.ok(f.virtual.wall.inclusive >= 3 * N * 0.025 && f.virtual.wall.inclusive <= f.wall.inclusive, JSON.stringify(f));
  assert.ok(f.wait >= 3 * N * 0.03, `waiting ${f.wait} s`);
  assert.ok(pick(ps, 'rounds>loadUser>fetchProfile>spin')!.wall.inclusive >= 3 * N * 0.02);
  assert.ok(pick(ps, 'rounds>loadUser')!.wait >= pick(ps, 'rounds>loadUser')!.wall.inclusive);
  // the CPU columns: the thread's CPU time, never more than the wall time (how much of the 25 ms
  // spun by the clock is CPU time depends on the machine's load: not a bound here)
  assert.ok(f.cpu.inclusive > 0 && f.cpu.inclusive <= f.wall.inclusive + 1e-9, `CPU inclusive ${f.cpu.inclusive} s, wall ${f.wall.inclusive} s`);
  await s.detach();
});

test('call paths: a generator runs each segment under whoever resumed it; bad requests are refused with a reason', async () => {
  const { s, request } = await launched();
  await s.profileCallPaths(['consume', 'count', 'leaf'].map((f) => `/Code/${M}/${f}`));
  await request('gen', /gen done/);
  await s.sample();
  // count's body starts at the first next(): one call, four segments (three yields and the end)
  assert.deepEqual(calls(s.callPaths()), { 'consume': 1, 'consume>count': 1, 'consume>count>leaf': 3 });
  await assert.rejects(s.probe(`/Code/${M}/leaf.exit: enterPath()`), /enterPath\(\) belongs at the entry point, not at exit/);
  await assert.rejects(s.probe(`/Code/${M}/leaf.entry: enterPath(1)`), /enterPath\(\) takes no arguments/);
  await assert.rejects(s.profileCallPaths('/Thread/1'), /a call-path profile is over functions: a \/Code resource/);
  await assert.rejects(s.profileCallPaths(`/Code/${M}/nosuch`), /unknown resource: no function matches/);
  await s.detach();
});

test('call paths from the CLI: paranode run --call-paths, from the first line to the exit, nothing lost; a bad k is refused', () => {
  const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-cp-')), 'out.json');
  const globs = ['a', 'b', 'leaf'].flatMap((f) => ['--call-paths', `/Code/${M}/${f}`]);
  const r = spawnSync(process.execPath, [CLI, 'run', ...globs, '-k', '1', '--json', json, '--', process.execPath, M, 'sync'], { cwd: FIXTURES, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  // the program exits at once after its work: the values come from the thread's last write
  const out = JSON.parse(fs.readFileSync(json, 'utf8')) as { callPaths: CallPath[] };
  assert.deepEqual(calls(out.callPaths), { a: 10, b: 15, leaf: 43 });
  assert.equal(out.callPaths.find((p) => p.calls === 43)!.path, `/CallPath/1/${M}/leaf`);
  assert.match(r.stderr, /calls +wall incl +wall excl +cpu incl +cpu excl +waiting +call path \(1 deep\)\n(.*\n)* +43 +[\d.]+ .*call-paths\.js\/leaf\n/);
  const bad = spawnSync(process.execPath, [CLI, 'run', '--call-paths', `/Code/${M}/a`, '-k', '0', '--', process.execPath, M, 'sync'], { cwd: FIXTURES, encoding: 'utf8' });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /option '-k, --path-length <k>' argument '0' is invalid\. a call path's length is a whole number from 1 up, or inf/);
});

test('call paths attached: the same exact counts in a running program (slots by LiveEdit where it can, breakpoints elsewhere), and the approximation said', async () => {
  const t = new Target(path.join(FIXTURES, M));
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await Session.attach(t.pid);
  const r = await s.profileCallPaths(['sync', 'a', 'b', 'leaf'].map((f) => `/Code/${M}/${f}`));
  // functions LiveEdit cannot give slots (or all, where V8 has no LiveEdit) are reached by breakpoints: said
  if (!LIVEEDIT) assert.equal(r.bySlot, 0);
  assert.ok(r.byBreakpoint > 0 && s.notes.some((n) => /^call-path profile of .*: \d+ point\(s\) by breakpoint, \d+ not placed: a function reached by breakpoints has no await or thrown exit there/.test(n)), s.notes.join('\n'));
  await t.request('sync', /sync done/);
  await s.sample();
  assert.deepEqual(calls(s.callPaths(2)), { 'sync': 1, 'sync>a': 10, 'a>b': 10, 'b>leaf': 30, 'a>leaf': 10, 'sync>b': 5, 'sync>leaf': 3 });
  await s.detach();
});

test('call-path exports: .cpuprofile (DevTools protocol types), speedscope (valid by its own schema), folded stacks; their totals are the profile\'s', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-cp-'));
  const [json, cpu, ss, folded] = ['out.json', 'out.cpuprofile', 'out.speedscope.json', 'out.folded'].map((f) => path.join(dir, f));
  const r = spawnSync(process.execPath, [CLI, 'run', '-q', '--call-paths', `/Code/${M}/*`, '-k', 'inf', '--json', json,
    '--call-paths-out', cpu, '--call-paths-out', ss, '--call-paths-out', folded, '--', process.execPath, M, 'sync'], { cwd: FIXTURES, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const paths = (JSON.parse(fs.readFileSync(json, 'utf8')) as { callPaths: CallPath[] }).callPaths;
  const us = (p: CallPath) => Math.round(p.wall.exclusive * 1e6);
  const total = paths.reduce((t, p) => t + us(p), 0);
  const file = path.join(FIXTURES, M);
  const leafLine = fs.readFileSync(file, 'utf8').split('\n').findIndex((l) => l.startsWith('function leaf(')) + 1;

  // folded: a line per path with time, its exclusive µs
  const lines = fs.readFileSync(folded, 'utf8').trim().split('\n');
  assert.equal(lines.length, paths.filter((p) => us(p) > 0).length);
  for (const p of paths.filter((x) => us(x) > 0)) assert.ok(lines.includes(`${p.functions.join(';')} ${us(p)}`), `${p.path} in ${lines.join('\n')}`);

  // .cpuprofile: a tree under (root); per path as many samples, an interval apart, as its exclusive time holds
  const prof = JSON.parse(fs.readFileSync(cpu, 'utf8')) as Protocol.Profiler.Profile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  assert.equal(byId.size, prof.nodes.length);
  assert.equal(prof.nodes[0].callFrame.functionName, '(root)');
  for (const n of prof.nodes) for (const c of n.children ?? []) assert.ok(byId.has(c));
  assert.equal(prof.samples!.length, prof.timeDeltas!.length);
  const interval = sampleInterval(total);
  assert.deepEqual([...new Set(prof.timeDeltas!.slice(1))], [interval]);
  assert.equal(prof.endTime - prof.startTime, prof.samples!.length * interval);
  assert.ok(Math.abs(prof.endTime - total) <= paths.length * interval / 2, `${prof.endTime} against ${total}`);
  const parentOf = new Map(prof.nodes.flatMap((n) => (n.children ?? []).map((c) => [c, n.id] as const)));
  const stackOf = (id: number): string[] => (id === 1 ? [] : [...stackOf(parentOf.get(id)!), byId.get(id)!.callFrame.functionName]);
  const hits = new Map(prof.nodes.map((n) => [stackOf(n.id).join('>'), n.hitCount ?? 0]));
  assert.equal(prof.samples!.length, [...hits.values()].reduce((a, h) => a + h, 0));
  for (const p of paths) assert.equal(hits.get(p.functions.map((f) => f.slice(M.length + 1)).join('>')), Math.round(us(p) / interval), p.path);
  const leaf = prof.nodes.find((n) => n.callFrame.functionName === 'leaf')!;
  // 0-based line and column, as V8's own profiles have them
  assert.deepEqual([leaf.callFrame.url, leaf.callFrame.lineNumber, leaf.callFrame.columnNumber], [pathToFileURL(file).href, leafLine - 1, 0]);

  // speedscope: valid by the schema speedscope publishes, weights its samples' exclusive times
  const schema = JSON.parse(fs.readFileSync(path.join(ROOTDIR, 'node_modules', 'speedscope', 'dist', 'release', 'file-format-schema.json'), 'utf8'));
  const doc = JSON.parse(fs.readFileSync(ss, 'utf8'));
  const validate = new Ajv({ allErrors: true }).compile(schema);
  assert.ok(validate(doc), JSON.stringify(validate.errors));
  const [main] = doc.profiles as { samples: number[][]; weights: number[]; endValue: number }[];
  assert.equal(main.weights.reduce((a, w) => a + w, 0), total);
  assert.equal(main.endValue, total);
  const frames = doc.shared.frames as { name: string; file: string; line: number; col: number }[];
  assert.deepEqual(frames.find((f) => f.name === `${M}/leaf`), { name: `${M}/leaf`, file, line: leafLine, col: 1 });
  assert.deepEqual(main.samples.map((st) => st.map((i) => frames[i].name).join('>')).sort(), paths.filter((p) => us(p) > 0).map((p) => p.functions.join('>')).sort());
});

test('call paths in worker threads: each thread its own paths, exact, from its first line; the exports name the thread', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-cp-'));
  const [json, folded] = ['out.json', 'out.folded'].map((f) => path.join(dir, f));
  const W = 'call-paths-worker.js';
  const r = spawnSync(process.execPath, [CLI, 'run', '-q', '--call-paths', `/Code/${W}/*`, '-k', 'inf', '--json', json, '--call-paths-out', folded, '--', process.execPath, W], { cwd: FIXTURES, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const paths = (JSON.parse(fs.readFileSync(json, 'utf8')) as { callPaths: CallPath[] }).callPaths;
  const by = (thread: (t: string) => boolean) => Object.fromEntries(paths.filter((p) => thread(p.thread)).map((p) => [p.functions.map((f) => f.slice(W.length + 1)).join('>'), p.calls]));
  assert.deepEqual(by((t) => t === 'main'), { a: 3, 'a>b': 6, '<anonymous>@11': 1 }); // the worker's exit listener (line 11)
  const workers = [...new Set(paths.map((p) => p.thread).filter((t) => t !== 'main'))];
  assert.equal(workers.length, 1, JSON.stringify(paths));
  assert.deepEqual(by((t) => t === workers[0]), { a: 7, 'a>b': 14 });
  const lines = fs.readFileSync(folded, 'utf8');
  assert.match(lines, new RegExp(`^\\(thread ${workers[0]}\\);${W}/a;${W}/b \\d+$`, 'm'));
});

test('call paths: a function entered again below another never stands at two paths (no time counted twice in any cut); overlapping globs count once', async () => {
  const { s, request } = await launched();
  await s.profileCallPaths(['pA', 'pB', 'pC', 'pD'].map((f) => `/Code/${M}/${f}`));
  await s.profileCallPaths([`/Code/${M}/p*`]);
  await request('nest', /nest done/);
  await s.sample();
  // the second pC goes back to pA>pB>pC, where the first one is
  assert.deepEqual(calls(s.callPaths()), { 'pA': 1, 'pA>pB': 2, 'pA>pB>pC': 2, 'pA>pB>pD': 1 });
  const flat = s.callPaths(1);
  const a = pick(flat, 'pA')!.wall.inclusive;
  for (const p of flat) assert.ok(p.wall.inclusive <= a + 1e-9, `${p.path}: ${p.wall.inclusive} s inclusive, pA ${a} s`);
  assert.ok(pick(flat, 'pC')!.wall.inclusive >= 0.005 && a >= 0.005);
  await s.detach();
});

test('call paths: a function suspended where no point says so (for await) leaves the stack at the end of its job; a later session is told the price again', async () => {
  const { s, request } = await launched();
  await s.profileCallPaths(['consumeTicks', 'tick'].map((f) => `/Code/${M}/${f}`));
  await request('forawait', /forawait done/);
  await s.sample();
  // the timer's tick() ran while consumeTicks waited in its for await: not under it
  assert.deepEqual(calls(s.callPaths()), { consumeTicks: 1, tick: 1 });
  await s.detach();
  const t = new Target(path.join(FIXTURES, M));
  after(() => t.kill());
  await t.waitFor(/ready/);
  for (let i = 0; i < 2; i++) {
    const again = await Session.attach(t.pid);
    await again.profileCallPaths(`/Code/${M}/leaf`);
    await t.request('sync', /sync done/);
    await again.sample();
    assert.deepEqual(calls(again.callPaths()), { leaf: 43 }, `session ${i + 1}`);
    assert.ok(again.notes.some((n) => n.startsWith('call-path profile: its own work adds')), `session ${i + 1}: ${again.notes.join('\n')}`);
    await again.detach();
  }
});

test('call paths as MDL metrics: path_calls and path_wall over /CallPath/<k>/... count from their request, exact; the focus is checked', async () => {
  const { s, request } = await launched();
  const fn = (f: string) => `${M}/${f}`;
  // profiled before the requests: what ran then is not theirs
  await s.profileCallPaths([`/Code/${M}/a`, `/Code/${M}/b`]);
  await request('sync', /sync done/);
  await s.sample();
  const ab = () => s.callPaths(2).find((p) => p.path === `/CallPath/2/${fn('a')}>${fn('b')}`)!;
  assert.equal(ab().calls, 10);
  const before = ab().wall.inclusive;

  const mm = new MetricManager([s]);
  const calls2 = await mm.enable('path_calls', `/CallPath/2/${fn('a')}>${fn('b')}`);
  const calls1 = await mm.enable('path_calls', `/CallPath/1/${fn('b')}`);
  const wall2 = await mm.enable('path_wall', `/CallPath/2/${fn('a')}>${fn('b')}`);
  // the request's own placements are the profile's four probes on each function of the path
  assert.deepEqual(calls2.listing().map((l) => l.replace(/\s+\[.*$/, '')).sort(), [
    `append preInsn /Code/${M}/a.entry (* enterPath(); *)`, `append preInsn /Code/${M}/a.exit (* exitPath(); *)`,
    `append preInsn /Code/${M}/b.entry (* enterPath(); *)`, `append preInsn /Code/${M}/b.exit (* exitPath(); *)`,
  ]);
  await request('sync', /sync done/);
  await s.sample();
  // sync runs a() 10 times (each calling b() twice: the path a>b over the profiled a and b) and b() 5 times
  assert.equal(ab().calls, 20, 'the session\'s profile counts both runs');
  assert.equal(calls2.value().total, 10);
  assert.equal(calls1.value().total, 15);
  assert.equal(calls2.value().units, 'calls/s');
  assert.ok(Math.abs(wall2.value().total - (ab().wall.inclusive - before)) < 1e-9, `${wall2.value().total} against ${ab().wall.inclusive - before}`);
  assert.ok(wall2.value().total > 0);

  await assert.rejects(mm.enable('procedure_calls', `/CallPath/2/${fn('a')}>${fn('b')}`), /metric procedure_calls cannot be constrained to a call path \(\/CallPath\/2\/call-paths\.js\/a>call-paths\.js\/b\): the metrics of a call path are path_calls, path_wall, /);
  await assert.rejects(mm.enable('path_calls', `/Code/${M}/a`), /metric path_calls measures a call path: its focus names one, \/CallPath\/<k>\//);
  await assert.rejects(mm.enable('path_calls', `/CallPath/0/${fn('a')}`), /\/CallPath\/0\/call-paths\.js\/a: a call path's length is a whole number from 1 up, or inf/);
  await assert.rejects(mm.enable('path_calls', `/CallPath/1/${fn('a')}>${fn('b')}`), /2 functions on a path cut at k = 1/);
  await assert.rejects(mm.enable('path_calls', `/CallPath/2/${fn('nosuch')}`), /nosuch/);
  for (const i of [calls2, calls1, wall2]) await mm.disable(i);
});

test('call paths as MDL metrics from the CLI: paranode run -e path_calls@/CallPath/... counts from the first line (placed before the program runs)', () => {
  const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-cp-')), 'out.json');
  const r = spawnSync(process.execPath, [CLI, 'run', '-q', '--json', json, '-e', `path_calls@/CallPath/2/${M}/a>${M}/b`, '-e', `path_cpu@/CallPath/1/${M}/b`,
    '--', process.execPath, M, 'sync'], { cwd: FIXTURES, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const metrics = (JSON.parse(fs.readFileSync(json, 'utf8')) as { metrics: { name: string; focus: string; total: number; implausible?: string }[] }).metrics;
  const got = (name: string) => metrics.find((m) => m.name === name)!;
  assert.deepEqual([got('path_calls').focus, got('path_calls').total], [`/CallPath/2/${M}/a>${M}/b`, 10]);
  assert.ok(got('path_cpu').total > 0 && got('path_cpu').implausible === undefined, JSON.stringify(got('path_cpu')));
});
