// The cost system's measuring half: calibration, and the observed cost of the
// instrumentation (handler runs by cost class, priced by the calibration), and
// the predicted cost of a request before it is inserted.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { BUSY_SHARE, busyWarning, calibration, Calibration, classCost, loadCalibration, pinningFactor, threadWaits } from '../src/cost/calibration';
import { CpuSampler, MAX_INTERVAL_US, predictedSamplingShare, SAMPLE_INTERVAL_US } from '../src/agent/cpu-sampler';
import { ObservedCostWatch } from '../src/cli/cost-limit';
import { COST_SERIES, RELAY_CLASS, STACK_SAMPLE_CLASS, SWITCH_GAP_MS, TOOL_CLASS } from '../src/agent/runtime';
import { THREAD_SERIES } from '../src/session/series';
import { STATIC_ENTRY, STATIC_SELF, STATIC_TRIPS } from '../src/cost/predict';
import { MetricManager } from '../src/metrics/manager';
import { diagnose } from '../src/consultant/diagnose';
import { renderDiagnosis } from '../src/consultant/report';
import { Session } from '../src/session/session';
import { CLI, FIXTURES, LIVEEDIT, lineRequests, ROOT, Target } from './support/helpers';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-config-'));
process.env.PARANODE_CONFIG_DIR = dir;
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('calibration: measured once, kept per machine and Node version, every cost a finite number of ns', async () => {
  assert.equal(loadCalibration(), null);
  const said: string[] = [];
  const c = await calibration({ progress: (m) => said.push(m) });
  assert.match(said[0], /calibrating/);
  assert.ok(fs.existsSync(path.join(dir, 'calibration.json')));
  assert.deepEqual(loadCalibration(), c);
  assert.equal(c.node, process.version);
  for (const [k, p] of [...Object.entries(c.mechanism), ...Object.entries(c.primitive)]) {
    for (const x of p) assert.ok(Number.isFinite(x) && x >= 0, `${k}: ${p}`);
  }
  // a breakpoint stops the thread for the debugger: far dearer than anything done in the thread
  assert.ok(c.mechanism.breakpoint[0] > 100 * c.mechanism.slot[1], JSON.stringify(c.mechanism));
  // a function holding a breakpoint is never optimized: its own code runs several times slower
  assert.ok(c.pinned[0] >= 1 && c.pinned[1] >= c.pinned[0] && c.pinned[1] > 2, `pinned ${c.pinned}`);
  // per shape; the range is theirs, and a loop (arith) is the dearest
  assert.deepEqual(Object.keys(c.pinnedShapes).sort(), ['arith', 'calls', 'strings']);
  assert.deepEqual(c.pinned, [Math.min(...Object.values(c.pinnedShapes)), Math.max(...Object.values(c.pinnedShapes))]);
  assert.equal(pinningFactor(c, true), c.pinned[1]);
  assert.equal(pinningFactor(c, false), c.pinnedShapes.strings);
  // a CPU timer reads the thread's CPU clock (a system call) at start and stop
  assert.ok(c.primitive.cpuPair[0] > c.primitive.n[0]);
  // a stack sample stops the thread for a signal and a walk of its stack: microseconds, not seconds
  assert.ok(c.stackSample[0] >= 0 && c.stackSample[1] >= c.stackSample[0] && c.stackSample[1] < 1e7, `stack sample ${c.stackSample} ns`);
  assert.deepEqual(classCost(c, STACK_SAMPLE_CLASS), c.stackSample);
  const [lo, hi] = classCost(c, 'slot:n2c1p1');
  assert.ok(lo <= hi);
  // how busy the machine was while its targets ran: a share of their time (Linux)
  assert.ok(c.waited !== undefined && c.waited >= 0 && c.waited <= 1, `waited ${c.waited}`);
  // the second call measures nothing (and says again that it was made on a busy machine, where it was)
  const again: string[] = [];
  assert.deepEqual(await calibration({ progress: (m) => again.push(m) }), c);
  assert.deepEqual(again, busyWarning(c) ? [busyWarning(c)] : []);
});

test('observed_cost: exact handler runs per cost class, priced by the calibration, low and high bound', async () => {
  const c = await calibration();
  const target = path.join(FIXTURES, 'metrics-target.js');
  const { session: s, manager: mm, instances } = await MetricManager.launch([process.execPath, target],
    [{ metric: 'procedure_calls', focus: '/Code/metrics-target.js/f' }, { metric: 'cpu', focus: '/Code/metrics-target.js/mainSpin' }, { metric: 'observed_cost' }],
    { stdio: 'pipe', cwd: FIXTURES });
  after(() => s.child!.kill());
  after(() => s.detach());
  const request = lineRequests(s.child!);
  await request('', /ready/);
  await request('calls 1000', /calls 1000/);
  // (mainSpin, not spin: the fixture's worker runs the same file, and a probe switched on there
  // after its functions loaded is a slot switch, priced up to its cost: two were counted so)
  await request('mainspin 1000 7', /mainspun/);
  await s.sample();
  const runs = (cls: string, thread?: string) => s.sampled(`_pnx:${cls}`, thread)?.last ?? 0;
  // f: one counter at entry; mainSpin: a CPU timer started at entry and stopped at exit
  assert.equal(runs('slot:n1'), 1000);
  assert.equal(runs('slot:c1'), 7);
  assert.equal(runs('slot:p1'), 7);
  // and the runtime's own work for the tool since the metric was enabled (samples, placing probes), and its
  // relay's CPU time: microseconds of the thread's time, the same in both bounds
  const cost = instances.find((i) => i.metric.name === 'observed_cost')!.value();
  // every class counted, priced: the handlers' above, and the slot switches where the fixture's worker
  // (the same file) loaded f before the request reached it (switch-unseen: 1-2 in 2 of 8 runs beside a busy loop, Node 24)
  const classes = s.sampledNames(COST_SERIES).map((n) => n.slice(COST_SERIES.length)).filter((n) => n !== TOOL_CLASS && n !== RELAY_CLASS);
  const handlers = (side: 0 | 1) => classes.reduce((x, n) => x + runs(n) * classCost(c, n)[side], 0) / 1e9;
  const own = (thread?: string) => (runs('tool', thread) + runs('relay', thread)) / 1e6;
  const tool = cost.range![0] - handlers(0);
  assert.ok(runs('relay') > 0, 'the relay ran');
  assert.ok(tool > 0 && tool <= own() + 1e-12, `the tool's work: ${tool} s of ${runs('tool')} + ${runs('relay')} us counted`);
  assert.ok(Math.abs(cost.range![1] - handlers(1) - tool) < 1e-12, `${cost.range} against ${handlers(0)}, ${handlers(1)} + ${tool}; ${JSON.stringify(s.sampledNames("_pnx:").map((n) => [n, s.sampled(n)?.last]))}`);
  assert.equal(cost.total, cost.range![1]);
  assert.equal(cost.units, 's/s');
  // counted from when the metric was enabled: a later request starts from zero
  const later = await mm.enable('observed_cost', `/Thread/${s.pid}/main`);
  // (the main thread's work only, the metric's focus; the session's own periodic sample may have run since the
  // metric's start: its value then is the starting point)
  const toolBefore = own('main'), atStart = later.value().range![0];
  await request('calls 10', /calls 10\n/);
  await s.sample();
  const grew = later.value().range![0] - atStart, expected = 10 * classCost(c, 'slot:n1')[0] / 1e9 + own('main') - toolBefore;
  assert.ok(Math.abs(grew - expected) < 1e-12, `${grew} s against ${expected} s`);
});

test('predicted cost: each point its calibrated cost times its expected runs; a call site in a loop runs STATIC_TRIPS times per entry (two levels at most); a counted entry rate replaces the static one', async () => {
  const c = await calibration();
  const { session: s, manager: mm } = await MetricManager.launch([process.execPath, path.join(FIXTURES, 'loops.js')], [], { stdio: 'pipe', cwd: FIXTURES });
  after(() => s.child!.kill());
  await lineRequests(s.child!)('', /ready/);
  const counter = classCost(c, 'slot:n1')[1] / 1e9;
  const at = (focus: string, known?: (r: { function: string }) => number | undefined) => mm.predict('procedure_calls', `/Code/loops.js/${focus}`, { known });
  // equal but for rounding (the prediction multiplies in another order)
  const close = (a: number, b: number) => assert.ok(Math.abs(a - b) <= 1e-9 * b, `${a} against ${b}`);
  // one counter at the entry: the static entry rate
  const entry = await at('looped');
  assert.equal(entry.points, 1);
  close(entry.cost, STATIC_ENTRY * counter);
  // one at each call of g
  close((await at('once/g()')).cost, STATIC_ENTRY * counter);
  close((await at('looped/g()')).cost, STATIC_ENTRY * STATIC_TRIPS * counter);
  close((await at('nested/g()')).cost, STATIC_ENTRY * STATIC_TRIPS ** 2 * counter);
  close((await at('deeper/g()')).cost, STATIC_ENTRY * STATIC_TRIPS ** 2 * counter);
  // what the running program showed: the function's counted entries per second
  close((await at('looped/g()', (r) => (r.function === 'looped' ? 3 : undefined))).cost, 3 * STATIC_TRIPS * counter);
});

test("stack samples dear to read (deep stacks, each sample a new one) are taken less often, and the diagnosis says so; a shallow program's are not", async (t) => {
  // (V8 samples at 40 ms first, and more often only where that fits: said where it does not)
  const slower = /^stack samples: V8 samples the thread every (\d+) ms, the first interval under a cost limit: at \d+ ms they would take [\d.]+ % of the time it could run with the profiler's restart \(\d+ ms here\), over their budget of 2.5 % of the thread$|^stack samples: V8 samples the thread every (\d+) ms from now on \(was 40 ms, the first interval under a cost limit; [\d.]+ % of the time it could run expected with the profiler's restart, \d+ ms here\), their cost kept under 2.5 % of the thread$/;
  // under the default 5 % limit the samples may take half of it (judged over two seconds of windows)
  await calibration();
  const { diagnosis: d, session: deep } = await diagnose({ command: [process.execPath, 'deep-stacks.js', '120'] }, { cwd: FIXTURES, stdio: 'pipe', hypotheses: ['cpu_bound'], durationSeconds: 15 });
  deep.child?.kill();
  const note = (d.sampling ?? []).find((n) => slower.test(n));
  assert.ok(note, JSON.stringify(d.sampling));
  const m = slower.exec(note)!;
  const every = Number(m[1] ?? m[2]);
  assert.ok(every >= 20 && every <= 40, `${every} ms`);
  assert.ok(renderDiagnosis(d).includes(`\n${note}\n`), renderDiagnosis(d));
  // the samples still came, and named the program's functions
  assert.ok((d.hottest ?? []).some((h) => /^deep-stacks\.js\/(f\d+|leaf)$/.test(h.function) && h.samples > 0), JSON.stringify(d.hottest));

  const shallow = await Session.launch([process.execPath, path.join(ROOT, 'demo', 'cpu-bound.js'), '120'], [], { cwd: FIXTURES, stdio: 'pipe' });
  t.after(() => shallow.child?.kill());
  await shallow.watchThreads({ stacks: true });
  shallow.startSampling(200);
  await new Promise<void>((r) => {
    let n = 0;
    const on = () => { if (++n >= 15) { shallow.off('sample', on); r(); } };
    shallow.on('sample', on);
  });
  shallow.stopSampling();
  assert.ok(shallow.stackSamples('main').samples > 100, `${shallow.stackSamples('main').samples} samples`);
  assert.ok(!shallow.notes.some((n) => n.startsWith('stack samples:')), shallow.notes.join('\n'));
  await shallow.detach();
});

test('predicted cost of a function reached by breakpoints: its pinning in the interpreter, its own share of the thread times (the calibrated factor of its shape - 1), once per function; a 1% share where no samples say', async () => {
  const c = await calibration();
  // fallback.js stays active, so a LiveEdit of it is always blocked: its functions are reached by breakpoints
  const t = new Target(path.join(FIXTURES, 'fallback.js'));
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await Session.attach(t.pid, { activeWaitMs: 300 });
  after(() => s.detach());
  const mm = new MetricManager([s]);
  // where this V8 has no LiveEdit (Node 26), that is known before anything is placed
  assert.equal((await s.resources('/Code/fallback.js/f'))[0].prepared, LIVEEDIT ? 'no' : 'breakpoint');
  // once a probe has gone in, the script is registered as reached by breakpoints on every version
  assert.equal((await s.probe('/Code/fallback.js/f.entry: n++')).byBreakpoint, 1);
  assert.equal((await s.resources('/Code/fallback.js/f'))[0].prepared, 'breakpoint');
  // Box.get has no loop: straight-line code's factor
  const factor = c.pinnedShapes.strings - 1;
  const close = (a: number, b: number) => assert.ok(Math.abs(a - b) <= 1e-9 * b, `${a} against ${b}`);
  const counter = STATIC_ENTRY * classCost(c, 'breakpoint:n1')[1] / 1e9;
  const known = await mm.predict('procedure_calls', '/Code/fallback.js/Box.get', { selfShare: (r) => (r.function === 'Box.get' ? 0.02 : undefined) });
  assert.deepEqual(known.pinning.map((p) => [p.path, p.share, p.known, p.factor]), [['/Code/fallback.js/Box.get', 0.02, true, c.pinnedShapes.strings]]);
  close(known.pinned, 0.02 * factor);
  close(known.cost, known.pinned + counter);
  // not known from samples
  const guessed = await mm.predict('procedure_calls', '/Code/fallback.js/Box.get');
  close(guessed.pinned, STATIC_SELF * factor);
  assert.equal(guessed.pinning[0].known, false);
  // a wall timer at entry and exit pins the function once, not once per point
  const timer = await mm.predict('wall', '/Code/fallback.js/Box.get', { selfShare: () => 0.001 });
  assert.equal(timer.pinning.length, 1);
  close(timer.pinned, 0.001 * factor);
  // serve() has loops: the highest factor
  const looped = await mm.predict('procedure_calls', '/Code/fallback.js/serve', { selfShare: () => 0.001 });
  assert.equal(looped.pinning[0].factor, c.pinned[1]);
  close(looped.pinned, 0.001 * (c.pinned[1] - 1));
  // a built-in reached by wrapping its export is not pinned
  const wrapped = await mm.predict('procedure_calls', '/Code/node:fs/existsSync');
  assert.deepEqual([wrapped.pinned, wrapped.pinning], [0, []]);
});

test('observed cost of pinning: each V8 stack sample in which a function holding a breakpoint (or, as V8 gives its ticks to them, a caller in its script) ran its own code costs the part of a sampling interval the interpreter added', async () => {
  const c = await calibration();
  const interval = SAMPLE_INTERVAL_US * 1000;
  assert.deepEqual(classCost(c, 'pinned'), [interval * (1 - 1 / c.pinned[0]), interval * (1 - 1 / c.pinned[1])]);
  const child = spawn(process.execPath, ['pinning.js', '60'], { cwd: FIXTURES, stdio: ['ignore', 'pipe', 'inherit'] });
  after(() => child.kill());
  await new Promise((resolve) => child.stdout!.once('data', resolve));
  // a pause limit of 0 ms: no LiveEdit, so hot() is reached by a breakpoint on every version
  const s = await Session.attach(child.pid!, { maxPauseMs: 0 });
  after(() => s.detach());
  const mm = new MetricManager([s]);
  const probe = await s.probe('/Code/pinning.js/hot.entry: n++');
  assert.equal(probe.byBreakpoint, 1);
  const cost = await mm.enable('observed_cost');
  // V8 samples every 10 ms throughout: the count is in samples of that interval, and this loop reads
  // windows as fast as it can, which can cost over the samples' budget (CI, Node 24: every 35 ms
  // after a while, 20 samples counted as 71 of 10 ms)
  await s.watchThreads({ stacks: true, samplingBudget: Infinity });
  // V8's samples come with each sample of the session (a window of them each); a pinned function's ticks are
  // its caller's in them (the debugger's copy of its bytecode is not in the profiler's code map)
  const own = () => { const o = s.stackSamples('main').own; return (o.get('pinning.js/hot') ?? 0) + (o.get('pinning.js/hotLoop') ?? 0); };
  while (own() < 20) await s.sample();
  const pinned = s.sampled('_pnx:pinned')?.last ?? 0;
  // every sample of hot's or its caller's own code since its breakpoint was set counts, and nothing else does
  assert.equal(pinned, own());
  const v = cost.value().range!;
  assert.ok(v[0] >= pinned * classCost(c, 'pinned')[0] / 1e9, `${v} against ${pinned} pinned samples`);
  // once the breakpoint is out, hot is not pinned any more: the count stops
  await s.removeProbe(probe.id);
  const before = own();
  while (own() < before + 20) await s.sample();
  assert.equal(s.sampled('_pnx:pinned')?.last, pinned);
});

test('observed cost of switching slots: each function a request switches counts once, as seen running in V8\'s samples (the calibrated cost) or not (at most that); switches of one function in a burst count once', async () => {
  const c = await calibration();
  assert.ok(c.switched[0] >= 0 && c.switched[1] >= c.switched[0] && Number.isFinite(c.switched[1]), `switched ${c.switched}`);
  assert.deepEqual(classCost(c, 'switch'), c.switched);
  assert.deepEqual(classCost(c, 'switch-unseen'), [0, c.switched[1]]);
  const s = await Session.launch([process.execPath, path.join(FIXTURES, 'switching.js')], [], { stdio: 'pipe', cwd: FIXTURES });
  after(() => s.child!.kill());
  await lineRequests(s.child!)('', /ready/);
  const cost = await new MetricManager([s]).enable('observed_cost');
  const counts = async () => { await s.sample(); return { seen: s.sampled('_pnx:switch')?.last ?? 0, unseen: s.sampled('_pnx:switch-unseen')?.last ?? 0 }; };
  // a switch of a function counts where its last counted one is SWITCH_GAP_MS behind
  const gap = () => new Promise((r) => setTimeout(r, SWITCH_GAP_MS + 10));
  // no stack samples: every switch is one that cannot be told
  const a = await s.probe('/Code/switching.js/hot.entry: n++');
  assert.deepEqual(await counts(), { seen: 0, unseen: 1 });
  await gap();
  await s.removeProbe(a.id);
  assert.deepEqual(await counts(), { seen: 0, unseen: 2 });
  // in and out again at once: V8 threw its code away once
  await gap();
  const t0 = performance.now();
  await s.removeProbe((await s.probe('/Code/switching.js/hot.entry: n++')).id);
  const burst = performance.now() - t0;
  const grew = (await counts()).unseen - 2;
  assert.ok(grew === 1 || (grew === 2 && burst >= SWITCH_GAP_MS), `${grew} switches counted for two ${burst.toFixed(1)} ms apart at most`);
  const u0 = 2 + grew;
  // never's exits are several slots of one function: one switch
  const b = await s.probe('/Code/switching.js/never.exit: m++');
  assert.ok(b.placed > 1, `never has ${b.placed} exit slots`);
  assert.deepEqual(await counts(), { seen: 0, unseen: u0 + 1 });
  // with V8's samples: whichever of the loop's functions they see running (V8 gives an inlined
  // function's ticks to the function it is inlined into) is seen; never is not
  await s.watchThreads({ stacks: true });
  let running: string | undefined;
  while (!(running = ['hot', 'work', 'outer'].find((f) => s.stackSamples('main').own.has(`switching.js/${f}`)))) await s.sample();
  await gap();
  const c1 = await s.probe(`/Code/switching.js/${running}.entry: n++`);
  await s.removeProbe(b.id);
  assert.deepEqual(await counts(), { seen: 1, unseen: u0 + 2 }, `${running} is seen running`);
  await gap();
  await s.removeProbe(c1.id);
  assert.deepEqual(await counts(), { seen: 2, unseen: u0 + 2 });
  // priced into the observed cost: the seen ones at least at the calibrated low cost, all at most the high
  const v = cost.value().range!;
  assert.ok(v[0] >= 2 * c.switched[0] / 1e9, `${v} against 2 switches of ${c.switched} ns`);
  assert.ok(v[1] >= (4 + u0) * c.switched[1] / 1e9, `${v} against ${4 + u0} switches of ${c.switched} ns`);
  // one request switching every function: V8 throws away each running function's code once, whatever it
  // inlined, so the unseen ones count at most one per running function not switched as seen
  await gap();
  const before = await counts();
  const all = await s.probe('/Code/switching.js/*.entry: k++');
  const after_ = await counts();
  const fns = new Set((await s.resources('/Code/switching.js/*')).map((r) => r.path)).size;
  assert.ok(all.placed >= 5 && fns >= 5, `${all.placed} entries of ${fns} functions`);
  assert.ok(after_.seen > before.seen, JSON.stringify({ before, after_ }));
  // never, at least, ran in no sample: fewer switches count than functions were switched
  assert.ok(after_.seen + after_.unseen - before.seen - before.unseen < fns, JSON.stringify({ before, after_, fns }));
  await s.detach();
});

test('attach --max-overhead: a probe, call-path profile or metric request predicted over the limit is not placed (said, and its script left as it was); one under it is placed and counts exactly; the observed cost is noted', async () => {
  // (the tool's --duration counts a first calibration too: made here if this test runs alone)
  await calibration();
  const t = new Target(path.join(FIXTURES, 'busy.js'));
  after(() => t.kill());
  await t.waitFor(/ready/);
  const json = path.join(dir, 'limit.json');
  // CPU timers at every function's entry and exit against a limit of a hundred-thousandth of a thread
  // (--duration, not a signal: one before the session begins ends an attach at once, unwritten)
  const tool = spawn(process.execPath, [CLI, 'attach', String(t.pid), '--max-overhead', '0.001%', '-p', '/Code/busy.js/*.entry: entries++', '-e', 'cpu_inclusive@/Code/busy.js/*',
    '--call-paths', '/Code/busy.js/*', '--json', json, '-d', '2'],
    { cwd: FIXTURES, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  tool.stderr!.setEncoding('utf8').on('data', (d: string) => { err += d; });
  assert.equal(await new Promise((r) => tool.once('close', r)), 0, err);
  assert.match(err, /paranode: metric request cpu_inclusive@\/Code\/busy\.js\/\* not placed: its predicted cost, [\d.]+% of a thread \(\d+ point\(s\)(, of which [\d.]+% keeping \d+ function\(s\) reached by breakpoints in V8's interpreter)?\) is over --max-overhead 0\.001%; narrow its focus or raise the limit\n/);
  // a probe is priced the same way, before the requests
  assert.match(err, /paranode: probe \/Code\/busy\.js\/\*\.entry: entries\+\+ not placed: its predicted cost, [\d.]+% of a thread \(4 point\(s\)(, of which [\d.]+% keeping \d+ function\(s\) reached by breakpoints in V8's interpreter)?\) is over --max-overhead 0\.001%/);
  // and a call-path profile, after the probes
  assert.match(err, /paranode: call-path profile of \/Code\/busy\.js\/\* not placed: its predicted cost, [\d.]+% of a thread \(\d+ point\(s\)(, of which [\d.]+% keeping \d+ function\(s\) reached by breakpoints in V8's interpreter)?\) is over --max-overhead 0\.001%/);
  assert.ok(err.indexOf('paranode: probe') < err.indexOf('paranode: call-path profile'), err);
  assert.ok(err.indexOf('paranode: call-path profile') < err.indexOf('paranode: metric request'), err);
  const refused = JSON.parse(fs.readFileSync(json, 'utf8')) as { metrics: unknown[]; notes: string[] };
  assert.deepEqual(refused.metrics, []);
  assert.ok(refused.notes.some((n) => /^probe \/Code\/busy\.js\/\*\.entry: entries\+\+ not placed/.test(n)), refused.notes.join('\n'));
  assert.ok(refused.notes.some((n) => /^metric request cpu_inclusive@\/Code\/busy\.js\/\* not placed: its predicted cost/.test(n)), refused.notes.join('\n'));
  // nothing was prepared for it: no LiveEdit, no breakpoints
  assert.ok(!refused.notes.some((n) => !/^(metric request|probe|call-path profile) /.test(n) && /busy\.js: no slot|LiveEdit|breakpoint/.test(n)), refused.notes.join('\n'));
  assert.equal((await t.request('count 10', /counted (\d+)/))[1], '5', 'the target runs on');

  // a counter at one function's entry fits under half a thread: placed, exact
  const tool2 = spawn(process.execPath, [CLI, 'attach', String(t.pid), '--max-overhead', '50%', '-p', '/Code/busy.js/inner.entry: hits++', '-e', 'procedure_calls@/Code/busy.js/inner', '--json', json, '-d', '6'],
    { cwd: FIXTURES, stdio: ['ignore', 'ignore', 'pipe'] });
  let err2 = '';
  const placed = new Promise<void>((r) => tool2.stderr!.setEncoding('utf8').on('data', (d: string) => { err2 += d; if (/metric request\(s\) on/.test(err2)) r(); }));
  const closed = new Promise((r) => tool2.once('close', r));
  await Promise.race([placed, closed]);
  assert.match(err2, /paranode: probe \/Code\/busy\.js\/inner\.entry: hits\+\+: predicted cost [\d.]+% of a thread \(1 point\(s\)(, of which [\d.]+% keeping \d+ function\(s\) reached by breakpoints in V8's interpreter)?\)\n/);
  assert.match(err2, /paranode: metric request procedure_calls@\/Code\/busy\.js\/inner: predicted cost [\d.]+% of a thread \(1 point\(s\)(, of which [\d.]+% keeping \d+ function\(s\) reached by breakpoints in V8's interpreter)?\)\n/);
  await t.request('count 1000', /counted/);
  assert.equal(await closed, 0, err2);
  const out = JSON.parse(fs.readFileSync(json, 'utf8')) as { metrics: { name: string; focus: string; total: number }[]; notes: string[] };
  assert.deepEqual(out.metrics.map((m) => [m.name, m.focus.replace(/\/Process\/.*/, '/Process'), m.total]), [['procedure_calls', '/Code/busy.js/inner', 1000], ['hits', '/Process', 1000]]);
  assert.ok(out.notes.some((n) => /^observed cost: at most [\d.]+% of the time a thread could run in a 2-s window \(--max-overhead 50\.0%\)$/.test(n)), out.notes.join('\n'));
});

/** paranode run on launch-priced.js with stdin piped to it: what it said, once it has said each of `until` */
function launchPriced(limit: string, json: string, more: string[] = []) {
  const tool = spawn(process.execPath, [CLI, 'run', '--max-overhead', limit, '-p', '/Code/launch-priced.js/inner.entry: hits++',
    '-e', 'procedure_calls@/Code/launch-priced.js/inner', '-e', 'cpu', '--call-paths', '/Code/launch-priced.js/*', ...more, '--json', json, '--', process.execPath, 'launch-priced.js'],
  { cwd: FIXTURES, stdio: ['pipe', 'pipe', 'pipe'] });
  const said = { err: '', out: '' };
  const waiters: { re: RegExp; on: 'err' | 'out'; r: () => void }[] = [];
  const seen = () => { for (const w of [...waiters]) if (w.re.test(said[w.on])) { waiters.splice(waiters.indexOf(w), 1); w.r(); } };
  tool.stderr!.setEncoding('utf8').on('data', (d: string) => { said.err += d; seen(); });
  tool.stdout!.setEncoding('utf8').on('data', (d: string) => { said.out += d; seen(); });
  const closed = new Promise<number | null>((r) => tool.once('close', r));
  const when = (on: 'err' | 'out', re: RegExp) => Promise.race([new Promise<void>((r) => { waiters.push({ re, on, r }); seen(); }),
    closed.then(() => { throw new Error(`ended before ${re}: ${said.err}`); })]);
  return { tool, said, closed, when };
}

type RunJson = { metrics: { name: string; focus: string; total: number; stopped?: string }[]; notes: string[] };

test('run --max-overhead: requests placed at launch are priced as the code loads; one over the limit is taken out (said, noted) and keeps what it counted; one under it counts exactly', async (t) => {
  await calibration();
  const json = path.join(dir, 'launch.json');
  // a limit under anything: every request with points is taken out once the program's code is loaded (the whole-thread cpu has none: it costs nothing)
  // (the same request twice is one, taken out once; a glob over files is priced by its holder's placements, in node:fs)
  const r = launchPriced('0.00001%', json, ['-e', 'procedure_calls@/Code/launch-priced.js/inner', '-e', 'sync_io@/SyncObject/File/*']);
  t.after(() => r.tool.kill());
  const over = (what: string) => new RegExp(`paranode: ${what} taken out after [\\d.]+ s: its predicted cost over the code loaded by then, [\\d.]+% of a thread \\(\\d+ point\\(s\\)[^)]*\\)[^\\n]* is over --max-overhead 0\\.00001% \\(what it measured until then is kept\\); narrow its focus or raise the limit\\n`);
  // (each in the first pricing that finds its code listed: in attach's order within one, but a
  // request whose functions the runtime had not yet listed is priced at 0 there and taken out at the next)
  for (const what of ['probe /Code/launch-priced\\.js/inner\\.entry: hits\\+\\+', 'call-path profile of /Code/launch-priced\\.js/\\*',
    'metric request procedure_calls@/Code/launch-priced\\.js/inner', 'metric request sync_io@/SyncObject/File/\\*']) await r.when('err', over(what));
  assert.equal(r.said.err.split('paranode: metric request procedure_calls@').length, 2, r.said.err);
  // calls after they were taken out count nowhere
  await r.when('out', /ready 50\n/);
  r.tool.stdin!.write('count 1000\n');
  await r.when('out', /counted 500\n/);
  r.tool.stdin!.end();
  assert.equal(await r.closed, 0, r.said.err);
  const out = JSON.parse(fs.readFileSync(json, 'utf8')) as RunJson;
  assert.equal(out.metrics.filter((m) => m.name === 'procedure_calls').length, 1, JSON.stringify(out.metrics));
  const calls = out.metrics.find((m) => m.name === 'procedure_calls')!;
  // the calls made as the module loaded, before the request was taken out: the take-out reaches the
  // program's thread by interrupt, which can land inside the module's loop of 100 calls (a CI run
  // kept 1); none of the 1,000 after it
  const hits = out.metrics.find((m) => m.name === 'hits')!;
  for (const m of [calls, hits]) assert.ok(Number.isInteger(m.total) && m.total >= 0 && m.total <= 100, JSON.stringify(m));
  assert.match(calls.stopped!, /^metric request procedure_calls@\/Code\/launch-priced\.js\/inner taken out after/);
  assert.ok(out.metrics.find((m) => m.name === 'cpu' && !m.stopped), JSON.stringify(out.metrics));
  assert.ok(out.notes.some((n) => /^metric request cpu: predicted cost 0\.00% of a thread \(0 point\(s\)\) over the code loaded, under --max-overhead 0\.00001%$/.test(n)), out.notes.join('\n'));
  for (const what of ['probe', 'call-path profile of', 'metric request procedure_calls']) assert.ok(out.notes.some((n) => n.startsWith(what) && / taken out after /.test(n)), out.notes.join('\n'));

  // under a limit of half a thread everything stays, and counts every call from the program's first line
  const r2 = launchPriced('50%', json);
  t.after(() => r2.tool.kill());
  await r2.when('out', /ready 50\n/);
  // (priced once the program's code is: after that, calls cannot end the program before its requests are priced)
  for (const what of ['probe /Code/launch-priced\\.js/inner\\.entry: hits\\+\\+', 'call-path profile of /Code/launch-priced\\.js/\\*', 'metric request procedure_calls@/Code/launch-priced\\.js/inner']) {
    await r2.when('err', new RegExp(`paranode: ${what}: predicted cost [\\d.]+% of a thread \\(\\d+ point\\(s\\)[^)]*\\) over the code loaded so far\\n`));
  }
  r2.tool.stdin!.write('count 1000\n');
  await r2.when('out', /counted 500\n/);
  r2.tool.stdin!.end();
  assert.equal(await r2.closed, 0, r2.said.err);
  assert.doesNotMatch(r2.said.err, / taken out after /);
  const out2 = JSON.parse(fs.readFileSync(json, 'utf8')) as RunJson;
  assert.equal(out2.metrics.find((m) => m.name === 'procedure_calls')?.total, 1100);
  assert.equal(out2.metrics.find((m) => m.name === 'hits')?.total, 1100);
  assert.ok(out2.metrics.every((m) => !m.stopped), JSON.stringify(out2.metrics));
  for (const what of ['probe /Code/launch-priced.js/inner.entry: hits++', 'call-path profile of /Code/launch-priced.js/*', 'metric request procedure_calls@/Code/launch-priced.js/inner']) {
    assert.ok(out2.notes.some((n) => n.startsWith(`${what}: predicted cost `) && n.endsWith('over the code loaded, under --max-overhead 50.0%')), out2.notes.join('\n'));
  }
});

test('the observed cost of a thread that waits for its core is a share of the time it could run (wall time less its waits), not of the wall clock', async (t) => {
  await calibration();
  // the target and a busy sibling on one core: the target runs about half the time
  const core = String(os.cpus().length - 1);
  const sibling = spawn('taskset', ['-c', core, process.execPath, '-e', 'for (;;);'], { stdio: 'ignore' });
  t.after(() => sibling.kill());
  const { session: s, manager: mm } = await MetricManager.launch(['taskset', '-c', core, process.execPath, path.join(FIXTURES, 'busy.js')], [],
    { stdio: 'pipe', cwd: FIXTURES, probes: ['/Code/busy.js/inner.entry: c++'] });
  t.after(() => s.child?.kill());
  const request = lineRequests(s.child!);
  await request('', /ready/);
  const cost = await mm.enable('observed_cost');
  const wait = await mm.enable('cpu_wait');
  const watch = new ObservedCostWatch(cost, 0, () => undefined, 1, wait);
  // the same totals as the watch reads, at the same samples (this listener runs right after its)
  const seen: { t: number; cost: number; wait: number }[] = [];
  const one = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  const onSample = () => {
    watch.check(() => []);
    seen.push({ t: performance.now() / 1000, cost: one(cost.threadTotals()), wait: one(wait.threadTotals()) });
  };
  s.on('sample', onSample);
  await request('spin 4000', /spinning/);
  s.startSampling(100);
  await request('', /spun/);
  s.stopSampling();
  s.off('sample', onSample);
  // the watch's first window: from the first sample to the first one a second or more later
  const w0 = seen[0], w1 = seen.find((x) => x.t - w0.t >= 1)!;
  const dt = w1.t - w0.t, waited = w1.wait - w0.wait, spent = w1.cost - w0.cost;
  assert.ok(waited > 0.25 * dt, `waited ${waited} s of ${dt} s: the sibling shares the core`);
  const expected = spent / (dt - waited);
  assert.ok(Math.abs(watch.highestShare - expected) <= 0.02 * expected || watch.highestShare > expected, `${watch.highestShare} against ${expected}`);
  assert.ok(watch.highestShare > 1.3 * spent / dt, `${watch.highestShare}: the share of wall time is ${spent / dt}`);
  await s.detach();
});

test('the tool\'s work in a thread that shares its core is charged for the time the thread could run, not the waits inside it', async (t) => {
  // an idle program and a busy sibling on one core: the tool places and removes a probe over
  // every function of esprima, work long enough for the scheduler to hand the core over inside it
  const core = String(os.cpus().length - 1);
  const sibling = spawn('taskset', ['-c', core, process.execPath, '-e', 'for (;;);'], { stdio: 'ignore' });
  t.after(() => sibling.kill());
  const s = await Session.launch(['taskset', '-c', core, process.execPath, '-e', 'require("esprima"); console.log("ready"); setInterval(() => {}, 1 << 30);'],
    [], { stdio: 'pipe', cwd: ROOT, watchThreads: true });
  t.after(() => s.child?.kill());
  await lineRequests(s.child!)('', /ready/);
  const read = () => ({ tool: (s.sampled(`${COST_SERIES}${TOOL_CLASS}`, 'main')?.last ?? 0) / 1e6, ran: s.sampled(`${THREAD_SERIES}ran`, 'main')!.last, waited: s.sampled(`${THREAD_SERIES}ready`, 'main')!.last });
  await s.sample();
  const before = read();
  for (let i = 0; i < 10; i++) {
    const { id } = await s.probe('/Code/**/esprima.js/*.entry: n++');
    await s.removeProbe(id);
  }
  await s.sample();
  const now = read();
  const tool = now.tool - before.tool, ran = now.ran - before.ran, waited = now.waited - before.waited;
  assert.ok(waited > 0.02, `the thread waited ${waited} s for its core: the sibling shares it`);
  // the thread ran the tool's work and little else (the samples' own work is in the tool's too)
  assert.ok(tool > 0 && tool <= ran + 0.002, `the tool's work charged ${tool.toFixed(4)} s; the thread ran ${ran.toFixed(4)} s and waited ${waited.toFixed(4)} s`);
  await s.detach();
});

test("the stack samples' cost at a longer interval: the timer's samples thin out, the stacks V8 lists at each deoptimization do not", () => {
  // 5 windows a second at 0.2 ms each, 100 timer samples and 300 deoptimization stacks a second at
  // 0.01 ms a stack listed, a timer sample priced 0.02 ms, 1,000 ms the thread could run a second
  const rate = { windows: 5, samples: 100, listed: 400, runnable: 1000 };
  const at = (to: number) => predictedSamplingShare([0.2, 0.01], rate, 0.02, 10_000, to)!;
  assert.ok(Math.abs(at(10_000) - (1 + 4 + 2) / 1000) < 1e-12, String(at(10_000)));
  // at 40 ms: 25 timer samples, the 300 deoptimization stacks as before: 1 + 3.25 + 0.5 ms a second
  assert.ok(Math.abs(at(40_000) - (1 + 3.25 + 0.5) / 1000) < 1e-12, String(at(40_000)));
  // with no deoptimizations the listed stacks are the timer's, all thinned out: 1 + 0.25 + 0.5
  assert.ok(Math.abs(predictedSamplingShare([0.2, 0.01], { ...rate, listed: 100 }, 0.02, 10_000, 40_000)! - 1.75 / 1000) < 1e-12);
  assert.equal(predictedSamplingShare([0.2, 0.01], { ...rate, runnable: 0 }, 0.02, 10_000, 40_000), null);
});

test("the stack samples' budget is a share of the time the thread could run: a thread that waited for its core pays for them out of less, and V8 samples it less often", () => {
  const deep = (n: number): number => (n === 0 ? Math.sqrt(performance.now()) : deep(n - 1) + 1);
  const notes = (readyShare: number, samplePriceNs = 0, restartMs?: number, samplesForMs = -1): string[] => {
    const said: string[] = [];
    const t0 = performance.now();
    const sampler = new CpuSampler((_url, name) => name || null, () => false, (n) => said.push(n), 0.05, undefined, () => readyShare * (performance.now() - t0));
    sampler.priceSamples(samplePriceNs);
    assert.ok(sampler.start());
    sampler.samplesFor(samplesForMs);
    // (what a restart of V8's profiler costs is measured at its start: set here for the rent-or-buy rule)
    if (restartMs !== undefined) (sampler as unknown as { restartMs: number }).restartMs = restartMs;
    for (let w = 0; w < 35; w++) {
      const end = performance.now() + 100;
      while (performance.now() < end) deep(30);
      sampler.take();
    }
    sampler.stop();
    return said;
  };
  // this thread's shallow samples (reading them, and V8's profiler thread: 1-2.5 % here) cost well under 5 % of its time...
  assert.deepEqual(notes(0), []);
  // ...and well over it when the thread could run a tenth of it (a restart priced at nothing: see the rent-or-buy case below)
  const slower = notes(0.9, 0, 0);
  assert.equal(slower.length, 1, slower.join('\n'));
  const [, every, expected] = /^stack samples: they took [\d.]+ % of the time the thread could run .*V8 samples it every (20|30|40) ms from now on \(was 10 ms(?:; ([\d.]+) % expected)?\)/.exec(slower[0]) ?? assert.fail(slower[0]);
  // in one step (each restart of V8's profiler logs the heap's code again): the interval the windows' cost says fits, else the
  // longest; with no line through the windows' costs (windows all alike: once on CI's Node 22), longer by the share over the budget
  assert.ok(expected === undefined || Number(expected) <= 5 || every === '40', slower[0]);
  // a sample's calibrated price counts against the budget too: at 2 ms a sample (20 % of the thread at 10 ms) it is over
  // twice the 5 % (the whole limit where the budget is half of it), which is not waited out, whatever a restart costs
  const priced = notes(0, 2e6, 1e9);
  assert.equal(priced.length, 1, priced.join('\n'));
  const [, took, every2, expected2] = /^stack samples: they took ([\d.]+) % of the time the thread could run \(reading them, V8's profiler thread, and taking them\); V8 samples it every (20|30|40) ms from now on \(was 10 ms(?:; ([\d.]+) % expected)?\)/.exec(priced[0]) ?? assert.fail(priced[0]);
  // (up to a tenth of the thread in samples alone: 1 ms every 10 ms, where V8 takes every one; with no
  // line through the windows' costs yet, the interval is longer by the share over the budget, at least twice)
  assert.ok(Number(took) > 10 && (expected2 === undefined ? Number(every2) >= 20 : Number(expected2) <= 5 || every2 === '40'), priced[0]);
  // between the budget and twice it (0.7 ms a sample: 7 % and more at 10 ms), a restart waits until staying has cost what it
  // costs (rent or buy): one dearer than the run stays at 10 ms; one of nothing is made at the first judgement
  assert.deepEqual(notes(0, 0.7e6, 1e9), []);
  const cheap = notes(0, 0.7e6, 0);
  assert.equal(cheap.length, 1, cheap.join('\n'));
  assert.match(cheap[0], /they took ([5-9]|1\d)\.\d % .*V8 samples it every (20|30|40) ms from now on \(was 10 ms/);
  // the session's end known: made where what it saves by then is more than it costs (a minute left saves some
  // 2 s, over a restart of 0.5 s, which waiting would not have made within the run), and never where the end is near
  const ahead = notes(0, 0.7e6, 500, 60_000);
  assert.equal(ahead.length, 1, ahead.join('\n'));
  assert.deepEqual(notes(0, 0.7e6, 5, 1500), []);
});

test("stack samples under a cost limit start at the longest interval, and are taken more often once where that fits the budget with the profiler's restart", () => {
  const deep = (n: number): number => (n === 0 ? Math.sqrt(performance.now()) : deep(n - 1) + 1);
  const run = (readyShare: number, samplePriceNs = 0, restartMs?: number): { said: string[]; windows: { samples: number; intervalUs?: number }[] } => {
    const said: string[] = [];
    const t0 = performance.now();
    const sampler = new CpuSampler((_url, name) => name || null, () => false, (n) => said.push(n), 0.05, undefined, () => readyShare * (performance.now() - t0), MAX_INTERVAL_US);
    sampler.priceSamples(samplePriceNs);
    assert.ok(sampler.start());
    if (restartMs !== undefined) (sampler as unknown as { restartMs: number }).restartMs = restartMs;
    const windows: { samples: number; intervalUs?: number }[] = [];
    for (let w = 0; w < 30; w++) {
      const end = performance.now() + 100;
      while (performance.now() < end) deep(30);
      windows.push(sampler.take());
    }
    sampler.stop();
    return { said, windows };
  };
  // this thread's shallow samples cost little: from the first judged second (10 windows) V8 samples every 10 ms, the default: nothing said
  // (a restart priced at nothing: this test process's own start cost 133 ms on a busy CI run, and 20 ms was rightly taken)
  const cheap = run(0, 0, 0);
  assert.deepEqual(cheap.said, []);
  // the windows before it were V8's 40-ms ones (a tenth of a second: 2-3 samples), those after it 10-ms ones (about 10)
  const at = cheap.windows.findIndex((w) => w.intervalUs === undefined);
  assert.ok(at >= 9 && at <= 13, `the first 10-ms window: ${at}`);
  const middle = (ws: { samples: number }[]) => ws.map((w) => w.samples).sort((a, b) => a - b)[ws.length >> 1];
  const before = cheap.windows.slice(1, at), after = cheap.windows.slice(at + 1);
  assert.ok(before.every((w) => w.intervalUs === MAX_INTERVAL_US) && middle(before) <= 4, JSON.stringify(before));
  assert.ok(after.every((w) => w.intervalUs === undefined) && middle(after) >= 6, JSON.stringify(after));
  // a restart dearer than the budget over the next 10 s (0.05 * 10 s = 0.5 s) is not made: it stays at 40 ms, and says why
  const stays = /^stack samples: V8 samples the thread every 40 ms, the first interval under a cost limit: at 30 ms they would take ([\d.]+) % of the time it could run with the profiler's restart \((\d+) ms here\), over their budget of 5 % of the thread$/;
  const dear = run(0, 0, 600);
  assert.equal(dear.said.length, 1, dear.said.join('\n'));
  const [, took, restart] = stays.exec(dear.said[0]) ?? assert.fail(dear.said[0]);
  assert.ok(Number(took) > 5 && restart === '600', dear.said[0]);
  assert.ok(dear.windows.slice(1).every((w) => w.intervalUs === MAX_INTERVAL_US), JSON.stringify(dear.windows));
  // nor where a shorter interval's samples would take over the budget (a sample priced at 1.5 ms: 5 % of the thread at 30 ms)
  const priced = run(0, 1.5e6, 0);
  assert.equal(priced.said.length, 1, priced.said.join('\n'));
  assert.match(priced.said[0], stays);
  assert.ok(priced.windows.slice(1).every((w) => w.intervalUs === MAX_INTERVAL_US), JSON.stringify(priced.windows));
});

test("observed cost of the agent's relay: its thread's CPU time from its start, as the kernel counts it, at every sample", async (t) => {
  const target = new Target(path.join(FIXTURES, 'busy.js'));
  t.after(() => target.kill());
  await target.waitFor(/ready/);
  // the relay is the thread the attach leaves (Node 22 names every thread "node"), read from outside it (the oracle)
  const task = `/proc/${target.pid}/task`;
  const before = new Set(fs.readdirSync(task));
  const s = await Session.attach(target.pid);
  let made: string[] = [];
  // (the inspector's own thread, for the port the attach opened, ends with the port's close)
  for (const deadline = Date.now() + 10000; Date.now() < deadline; await s.sample()) {
    made = fs.readdirSync(task).filter((x) => !before.has(x));
    if (made.length === 1) break;
  }
  assert.equal(made.length, 1, `threads the attach left: ${made.join(', ')}`);
  const onCpuMs = () => Number(fs.readFileSync(`${task}/${made[0]}/schedstat`, 'latin1').split(' ')[0]) / 1e6;
  const counted = () => (s.sampled(COST_SERIES + RELAY_CLASS)?.last ?? 0) / 1000;
  // traffic through it: the samples, and a probe placed and taken out
  const probe = await s.probe('/Code/busy.js/inner.entry: n++');
  for (let i = 0; i < 20; i++) await s.sample();
  await s.removeProbe(probe.id);
  // the sample reads the relay's time between the two readings here
  const k0 = onCpuMs();
  await s.sample();
  const k1 = onCpuMs();
  assert.ok(k0 > 0, 'the relay ran');
  assert.ok(counted() >= k0 - 0.001 && counted() <= k1 + 0.001, `counted ${counted()} ms, the kernel ${k0}-${k1} ms`);
  await s.detach();
});

test("observed cost of the stack samples' V8 profiler thread: its CPU time while it samples, as the kernel counts it", async (t) => {
  const s = await Session.launch([process.execPath, path.join(FIXTURES, 'busy.js')], [], { stdio: 'pipe', cwd: FIXTURES });
  t.after(() => s.child?.kill());
  const request = lineRequests(s.child!);
  await request('', /ready/);
  await s.watchThreads({ stacks: true });
  // the profiler's thread in the target, read from outside it (the oracle)
  const task = `/proc/${s.pid}/task`;
  const tid = fs.readdirSync(task).find((x) => fs.readFileSync(`${task}/${x}/comm`, 'latin1').trim() === 'v8:ProfEvntProc');
  assert.ok(tid, 'V8 started its profiler thread');
  const onCpuMs = () => Number(fs.readFileSync(`${task}/${tid}/schedstat`, 'latin1').split(' ')[0]) / 1e6;
  const counted = () => s.sampled('_pnx:sampler')?.last ?? 0;
  await s.sample();
  const [c0, k0] = [counted(), onCpuMs()];
  await request('spin 2000', /spinning/);
  for (let i = 0; i < 10; i++) await s.sample();
  await request('', /spun/);
  const k1 = onCpuMs();
  await s.sample();
  const grew = (counted() - c0) / 1000, ran = k1 - k0;
  assert.ok(ran > 0, 'the profiler thread ran');
  // every window's part since the first read, and none of the time before it (read within the last window)
  assert.ok(grew > 0.5 * ran && grew <= onCpuMs() - k0 + 1, `counted ${grew} ms, the kernel ${ran} ms`);
  await s.detach();
});

test('observed cost of the stack samples taken of the program\'s thread: each sample V8 took of it counted once, priced as calibrated', async (t) => {
  const c = await calibration();
  const s = await Session.launch([process.execPath, path.join(FIXTURES, 'busy.js')], [], { stdio: 'pipe', cwd: FIXTURES });
  t.after(() => s.child?.kill());
  const request = lineRequests(s.child!);
  await request('', /ready/);
  await s.watchThreads({ stacks: true });
  // busy, then idle: a sample of a waiting thread interrupts it as well
  await request('spin 1000', /spinning/);
  for (let i = 0; i < 5; i++) await s.sample();
  await request('', /spun/);
  await s.sample();
  // the oracle: the samples in V8's profiles, as the tool received them window by window
  const taken = s.stackSamples('main').samples;
  assert.ok(taken > 50, `${taken} samples`);
  assert.equal(s.sampled(COST_SERIES + STACK_SAMPLE_CLASS, 'main')?.last, taken);
  const mm = new MetricManager([s]);
  const cost = await mm.enable('observed_cost', `/Thread/${s.pid}/main`);
  const atStart = cost.value().range!;
  await request('spin 500', /spinning/);
  await s.sample();
  await request('', /spun/);
  await s.sample();
  const more = s.stackSamples('main').samples - taken;
  assert.ok(more > 0, 'samples taken after the metric started');
  // in both bounds, at its calibrated price (with whatever else the tool did meanwhile: its own work, the relay)
  const grew = cost.value().range!.map((v, i) => v - atStart[i]);
  assert.ok(grew[0] >= more * c.stackSample[0] / 1e9 - 1e-12 && grew[1] >= more * c.stackSample[1] / 1e9 - 1e-12, `${grew} s for ${more} samples at ${c.stackSample} ns`);
  await s.detach();
});

test('paranode calibrate: measures afresh, keeps it, and prints every price, a stack sample\'s among them', async () => {
  const tool = spawn(process.execPath, [CLI, 'calibrate'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '', err = '';
  tool.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  tool.stderr!.setEncoding('utf8').on('data', (d: string) => { err += d; });
  assert.equal(await new Promise((r) => tool.once('close', r)), 0, err);
  const c = loadCalibration()!;
  assert.ok(c, 'kept');
  assert.match(out, new RegExp(`^ns per run +optimized unoptimized +\\(Node ${process.version.replace(/\./g, '\\.')}, `, 'm'));
  for (const line of [/^reach by slot +[\d.]+ +[\d.]+$/m, /^counter \+\+ +[\d.]+ +[\d.]+$/m, /^CPU timer start\+stop +[\d.]+ +[\d.]+$/m,
    /^a breakpoint's function runs [\d.]+-[\d.]+x slower/m, /^a switch of a slot V8 optimized costs [\d.]+-[\d.]+ ms/m]) assert.match(out, line);
  const us = c.stackSample.map((x) => (x / 1e3).toFixed(1)).join('-');
  assert.ok(out.includes(`\na stack sample of V8's profiler takes ${us} µs of the sampled thread\n`), out);
  // progress on stderr, one line a measurement
  assert.match(err, /a stack sample of the program's thread/);
});

test('a calibration made on a busy machine: its targets\' waits for a CPU are read as a share of their time, and calibrate\'s use and a diagnosis priced by it say so', async () => {
  // a process sharing its one core with a neighbour that never sleeps waits for it about half the time it could run
  // (read as the calibration reads its targets; a short while, not a whole calibration, so other tests keep their cores)
  const cpu = String(os.cpus().length - 1);
  const spin = 'const end = Date.now() + 1500; while (Date.now() < end);';
  const hog = spawn('taskset', ['-c', cpu, process.execPath, '-e', 'for (;;) {}'], { stdio: 'ignore' });
  after(() => hog.kill('SIGKILL'));
  const busy = spawn('taskset', ['-c', cpu, process.execPath, '-e', `process.stdin.once('data', () => { ${spin} console.log('spun'); }); console.log('ready');`], { stdio: ['pipe', 'pipe', 'ignore'] });
  let said = '';
  busy.stdout!.setEncoding('utf8').on('data', (d: string) => { said += d; });
  const line = async (text: string) => { while (!said.includes(text)) await new Promise((r) => busy.stdout!.once('data', r)); };
  await line('ready'); // (its start is not what is measured)
  const w0 = threadWaits(busy.pid!);
  busy.stdin!.write('go\n');
  await line('spun');
  const w1 = threadWaits(busy.pid!);
  hog.kill('SIGKILL');
  busy.kill();
  assert.ok(w0 && w1, 'schedstat read');
  const waited = (w1[1] - w0[1]) / ((w1[0] - w0[0]) + (w1[1] - w0[1]));
  assert.ok(waited > BUSY_SHARE, `waited ${waited}`);
  // the machine's calibration with that share kept: every use of it says so, as does a diagnosis priced by it
  await calibration(); // (made here if this test runs alone)
  const busyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-busy-config-'));
  after(() => fs.rmSync(busyDir, { recursive: true, force: true }));
  const saved = JSON.parse(fs.readFileSync(path.join(dir, 'calibration.json'), 'utf8')) as Record<string, Calibration>;
  for (const c of Object.values(saved)) c.waited = waited;
  fs.writeFileSync(path.join(busyDir, 'calibration.json'), JSON.stringify(saved));
  const c = Object.values(saved)[0];
  assert.match(busyWarning(c)!, /measured while the machine was busy: its targets waited for a CPU \d+ % of the time they could run, so its prices \(and the observed cost they give\) may read up to 2× high/);
  const tool = spawn(process.execPath, [CLI, 'diagnose', '-d', '3', '--', process.execPath, path.join(ROOT, 'demo', 'cpu-bound.js')],
    { env: { ...process.env, PARANODE_CONFIG_DIR: busyDir }, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '', err = '';
  tool.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  tool.stderr!.setEncoding('utf8').on('data', (d: string) => { err += d; });
  assert.equal(await new Promise((r) => tool.once('close', r)), 0, err);
  assert.ok(err.includes(`paranode: ${busyWarning(c)}\n`), err);
  assert.match(out, /^paranode: the costs were priced by a calibration measured on a busy machine \(its targets waited for a CPU \d+% of their time\): they may read up to 2× high/m);
});
