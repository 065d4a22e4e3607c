// 3. Inserting into a large script: one point, then about 1,000 points. The
// TypeScript compiler script (9 MB) is the large script of the issue;
// paranode's LiveEdit planning is timed on it (and on smaller scripts) in a
// child process with a time limit; the whole attach path through the Session
// API (plan, setScriptSource, the pause measured inside the target) runs on
// esprima.js (283 KB), and on typescript.js only when its planning finished;
// the launch path (load-time slots) runs on both.
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { Session } from '../src/api';
import { BenchOptions, fmt, fmtStop, median, Proc, progress, ratio, ROOT, Section, sleep, spinSeries, spinWindow, table, TARGETS, timeMs } from './lib';

interface PlanResult {
  file: string; chars: number; functions?: number; points?: number; analyzeMs?: number; planMs?: number;
  unslotted?: number; droppedFunctions?: number; predictedPauseMs?: number; unchanged?: boolean;
  timedOut?: boolean; error?: string; limitS: number;
}

/** Time planLiveEdit on a file in a child process, killed after limitS seconds. */
async function timePlan(file: string, limitS: number, heapBytes: number): Promise<PlanResult> {
  const abs = path.join(ROOT, file);
  const chars = fs.readFileSync(abs, 'utf8').length;
  const child = spawn(process.execPath, ['--max-old-space-size=8192', path.join(__dirname, 'plan-child.js'), abs, String(heapBytes)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
  child.stderr.setEncoding('utf8').on('data', (d: string) => { err += d; });
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, limitS * 1000);
  await new Promise((r) => child.once('close', r));
  clearTimeout(timer);
  const lines = out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const last = lines[lines.length - 1] ?? {};
  const res: PlanResult = { file, chars, limitS, ...last, timedOut };
  if (!timedOut && last.phase !== 'planned') res.error = err.trim().split('\n').slice(-3).join(' ') || 'no result';
  return res;
}

interface Stop { stop: number; toolMs: number }

interface RealResult {
  lib: string; how: 'attach' | 'launch'; heapMB: number; plainHeapMB: number;
  /** attach: Session.attach; launch: Session.launch until the program printed "ready" */
  startMs: number;
  /** the same program started plainly until it printed "ready" */
  plainStartMs: number;
  floor: number;
  one: Stop & { placed: number; counted: number };
  later: Stop[]; nul: Stop[]; list: Stop[];
  many: Stop & { placed: number; counted: number; probe: string };
  detach: Stop; notes: string[];
}

/** targets that died during detach (see section 4) */
const diedOnDetach: string[] = [];

const MODULES = { esprima: 'node_modules/esprima/dist/esprima.js', typescript: 'node_modules/typescript/lib/typescript.js' };
// one point, and about 1,000 (esprima: 1,197 exits of all its functions; typescript: 1,311 exits of its parse* functions)
const ONE = { esprima: 'tokenize.entry', typescript: 'createSourceFile@33019.entry' };
const MANY = { esprima: '*.exit', typescript: 'parse*.exit' };

/**
 * Through the Session API: a target that loaded the library, either attached to
 * (the first probe plans and LiveEdits the script) or launched (the script was
 * prepared at load time); one point, later one-point changes, ~1,000 points, detach.
 */
async function realPath(lib: 'esprima' | 'typescript', how: 'attach' | 'launch'): Promise<RealResult> {
  const mod = MODULES[lib];
  const script = path.join(TARGETS, 'big.js');
  const nodeArgs = ['--max-old-space-size=4096'];
  let t0 = timeMs();
  const plain = Proc.spawn(script, [lib], ROOT, nodeArgs);
  const plainReady = await plain.waitFor(/ready (\d+)/, 0);
  const plainStartMs = timeMs() - t0;
  let p: Proc;
  let s: Session;
  let startMs: number;
  if (how === 'attach') {
    p = plain;
  } else {
    await plain.stop();
    t0 = timeMs();
    s = await Session.launch([process.execPath, ...nodeArgs, script, lib], [], { stdio: 'pipe', cwd: ROOT });
    p = new Proc(s.child!, `big.js ${lib} (launch)`);
    await p.waitFor(/ready/, 0);
    startMs = timeMs() - t0;
  }
  try {
    const ready = await p.waitFor(/ready (\d+)/, 0);
    await p.request('work', /work/);
    const floor = await spinWindow(p, () => sleep(300));
    if (how === 'attach') {
      t0 = timeMs();
      s = await Session.attach(p.pid, { maxPauseMs: 1e9 });
      startMs = timeMs() - t0;
    }
    const session = s!;
    progress(`large: ${lib} (${how}): first probe, one point${how === 'attach' ? ` (plans and LiveEdits ${mod})` : ''}`);
    let placedOne = 0;
    const one = await spinWindow(p, async () => { placedOne = (await session.probe(`/Code/${mod}/${ONE[lib]}: one++`)).placed; });
    progress(`large: ${lib} (${how}): 3 later one-point changes, with null actions`);
    const steps: { name: string; fn: () => Promise<unknown> }[] = [];
    for (let i = 0; i < 3; i++) {
      steps.push({ name: 'null', fn: () => sleep(2) });
      steps.push({ name: 'later', fn: () => session.probe(`/Code/${mod}/${ONE[lib]}: later${i}++`) });
      // the first request of every probe(): the runtime's list of prepared functions and points (private CDP)
      steps.push({ name: 'list', fn: () => (session as any).cdp.evaluate(`globalThis[Symbol.for('paranode.runtime')].functionsOf([...globalThis[Symbol.for('paranode.runtime')].scripts.keys()])`) });
    }
    const series = await spinSeries(p, steps);
    progress(`large: ${lib} (${how}): a probe on about 1,000 points`);
    let placedMany = 0;
    const many = await spinWindow(p, async () => { placedMany = (await session.probe(`/Code/${mod}/${MANY[lib]}: many++`)).placed; });
    await p.request('work', /work/);
    await session.sample();
    const vals = new Map(session.metrics().map((x) => [x.name, x.total]));
    progress(`large: ${lib} (${how}): detach${how === 'attach' ? ' (restores the script by LiveEdit)' : ''}`);
    let detach: Stop = { stop: NaN, toolMs: NaN };
    try {
      detach = await spinWindow(p, () => session.detach());
    } catch (e) {
      diedOnDetach.push(`${lib} (${how}): ${(e as Error).message.split('\n')[0]}`);
    }
    return {
      lib, how, heapMB: Number(ready[1]) / 1e6, plainHeapMB: Number(plainReady[1]) / 1e6, startMs: startMs!, plainStartMs, floor: floor.stop, notes: [...session.notes],
      one: { ...one, placed: placedOne, counted: vals.get('one') ?? 0 },
      later: series.get('later')!, nul: series.get('null')!, list: series.get('list')!,
      many: { ...many, placed: placedMany, counted: vals.get('many') ?? 0, probe: MANY[lib] },
      detach,
    };
  } finally {
    await p.stop();
  }
}

export async function benchLarge(opts: BenchOptions): Promise<Section> {
  const limit = opts.largeLimitS ?? (opts.quick ? 30 : 90);
  const body: string[] = [];
  const files = ['bench/targets/small.js', 'bench/targets/victim1.js', 'node_modules/marked/lib/marked.cjs', 'node_modules/typescript/lib/typescript.js'];
  const plans: PlanResult[] = [];
  for (const f of files) {
    progress(`large: timing planLiveEdit on ${f} (limit ${limit} s)`);
    plans.push(await timePlan(f, limit, 50e6));
  }
  body.push('**Planning alone**: `planLiveEdit(source, 1, 50e6)` from `src/instrument/liveedit.ts` (acorn analysis, slot ' +
    'insertions, and the model of V8\'s diff that predicts which functions LiveEdit would leave on their old code), ' +
    `in a child process of its own, killed after ${limit} s. This runs in the tool, before the target is touched.`, '');
  const small = plans[0].planMs ?? NaN;
  body.push(table(['script', 'size (chars)', 'functions', 'points', 'analysis ms', 'planning ms', '× small.js', 'points left without a slot', 'functions left without slots'], plans.map((r) => [
    `\`${r.file}\``, String(r.chars), String(r.functions ?? 'n/a'), String(r.points ?? 'n/a'), r.analyzeMs !== undefined ? fmt(r.analyzeMs, 0) : 'n/a',
    r.timedOut ? `**not finished after ${r.limitS} s**` : r.error ? `**failed**: ${r.error}` : fmt(r.planMs!, 0),
    r.planMs !== undefined ? ratio(r.planMs, small) : 'n/a',
    r.unslotted !== undefined ? `${r.unslotted}${r.unchanged ? ' (no slot at all: plan gave up)' : ''}` : 'n/a',
    r.droppedFunctions !== undefined ? String(r.droppedFunctions) : 'n/a',
  ])), '');

  const real: RealResult[] = [];
  const failures: string[] = [];
  const attempt = async (lib: 'esprima' | 'typescript', how: 'attach' | 'launch') => {
    progress(`large: ${lib}: real path through Session.${how}`);
    try { real.push(await realPath(lib, how)); } catch (e) { failures.push(`${lib} (${how}): ${(e as Error).message}`); }
  };
  await attempt('esprima', 'attach');
  const ts = plans[plans.length - 1];
  if (ts.planMs !== undefined) await attempt('typescript', 'attach');
  else {
    failures.push(`typescript.js by attach (LiveEdit): not run, because planning alone did not finish within ${limit} s ` +
      '(the first probe would spend at least that long in the tool before sending the LiveEdit)');
  }
  await attempt('esprima', 'launch');
  await attempt('typescript', 'launch');
  body.push('**Through the Session API**: a target (`bench/targets/big.js`) loads the library and waits. *attach*: the tool ' +
    'attaches (`maxPauseMs: 1e9`) and the first probe makes the session plan the script and prepare it by one ' +
    '`Debugger.setScriptSource`; detach restores the original text by another. *launch*: the target runs under ' +
    '`Session.launch`, so the script was prepared at load time and every probe is a later change. Then in both: one probe ' +
    'on one point, three more one-point probes (later changes, each next to a null action: the tool sleeping 2 ms, and to ' +
    'the runtime\'s `functionsOf` of every script, the first part (up to 1,000 functions with their points) of what a probe reaching every script fetches, sent through the session\'s private CDP ' +
    'connection), one ' +
    'probe on about 1,000 points, detach. Tool: wall time of the call, ms. Target: the largest stop of its main thread ' +
    'during the call, ms, measured inside it by the busy loop of section 4 (noise floor: the same around a 300 ms sleep). ' +
    'Heap used: when the target was ready (before attaching), in parentheses the same program started plainly.', '');
  if (real.length) {
    body.push(table(['script', 'path', 'heap used MB (plain)', 'plain start ms', 'attach / launch ms', 'first point: tool', 'first point: target stop',
      'later 1-point change: tool', 'later change: target stop (null action)', '`functionsOf`: target stop', '~1,000 points: probe', 'tool', 'target stop', 'detach: tool', 'detach: target stop', 'noise floor'], real.map((r) => [
      r.lib, r.how, `${fmt(r.heapMB, 0)} (${fmt(r.plainHeapMB, 0)})`, fmt(r.plainStartMs, 0), `${fmt(r.startMs, 0)} (${ratio(r.startMs, r.plainStartMs)}× plain start)`,
      fmt(r.one.toolMs, 0), fmtStop(r.one.stop, 1),
      fmt(median(r.later.map((x) => x.toolMs)), 1), `${fmtStop(median(r.later.map((x) => x.stop)))} (${fmtStop(median(r.nul.map((x) => x.stop)))})`, fmtStop(median(r.list.map((x) => x.stop))),
      `\`${r.many.probe}\``, fmt(r.many.toolMs, 0), fmtStop(r.many.stop, 1), Number.isNaN(r.detach.toolMs) ? '**target died**' : fmt(r.detach.toolMs, 0), Number.isNaN(r.detach.stop) ? '**target died**' : fmtStop(r.detach.stop, 1), fmtStop(r.floor),
    ])), '');
    body.push('Placed and counted: what `probe()` returned, and the counter after the target used the library once more ' +
      '(esprima: one `tokenize` of a 2 KB file; typescript: one `createSourceFile` of it).', '');
    body.push(table(['script', 'path', 'one point: placed / counted', '~1,000 points: placed / counted'], real.map((r) => [
      r.lib, r.how, `${r.one.placed} / ${r.one.counted}`, `${r.many.placed} / ${r.many.counted}`])), '');
    for (const r of real) if (r.notes.length) body.push(`Session notes (${r.lib}, ${r.how}): ${r.notes.map((n) => `"${n}"`).join('; ')}.`, '');
  }
  if (diedOnDetach.length) body.push(`**The target died during or right after \`detach()\`**: ${diedOnDetach.join('; ')}.`, '');
  if (failures.length) body.push(`Not measured: ${failures.join('; ')}.`);
  return { title: '3. Inserting into a large script', body };
}
