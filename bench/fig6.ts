// 1. Cost of triggering instrumentation (MDL paper, Figure 6): ns per call of a
// tiny function, uninstrumented and with paranode's slots and snippets, timed
// inside the targets; four targets run side by side and take turns batch by
// batch, so every figure of the table comes from the same run.
import { Session } from '../src/api';
import { BenchOptions, fmt, median, Proc, progress, quantile, ratio, Section, table, TARGETS } from './lib';

const PROBES = [
  '/Code/hot.js/fNop.entry: if (0) z++',
  '/Code/hot.js/fCount.entry: c++',
  '/Code/hot.js/fPred.entry: if ($arg[0] % 2 == 0) p++',
  '/Code/hot.js/fTimer.entry: startWallTimer(t)',
  '/Code/hot.js/fTimer.exit: stopTimer(t)',
  '/Code/hot.js/fCpuTimer.entry: startProcessTimer(ct)',
  '/Code/hot.js/fCpuTimer.exit: stopTimer(ct)',
  '/Code/node:path/isAbsolute.entry: w++',
];
/** the fallback by breakpoint: the same probes in a target whose LiveEdit is refused */
const BP_ROWS = ['empty', 'nop', 'count', 'timer'] as const;
const BP_CALLS = 2000;

type Mode = 'plain' | 'launch' | 'late' | 'attach';
const MODES: Mode[] = ['plain', 'launch', 'late', 'attach'];
const MODE_TITLE: Record<Mode, string> = {
  plain: 'plain `node hot.js`',
  launch: '`Session.launch`, probes from the start',
  late: '`Session.launch`, probes added later',
  attach: '`Session.attach` (LiveEdit), then probes',
};

const ROWS = ['empty', 'nop', 'count', 'pred', 'timer', 'cputimer', 'hand', 'hand32', 'now', 'cpuusage', 'threadcpu', 'builtin'] as const;
type Row = typeof ROWS[number];

/** calls per batch: about 0.1-0.4 s of the slowest mode */
function callsPerBatch(row: Row, quick: boolean): number {
  const full: Record<Row, number> = {
    empty: 20e6, nop: 20e6, count: 20e6, pred: 20e6, hand: 20e6, hand32: 20e6, timer: 2e6, now: 2e6, cputimer: 2e5, cpuusage: 2e5, threadcpu: 2e5, builtin: 2e6,
  };
  return quick ? full[row] / 4 : full[row];
}

export async function benchFig6(opts: BenchOptions): Promise<Section> {
  const batches = opts.quick ? 5 : 11;
  const warmups = 2;
  progress(`fig6: starting 4 targets (plain, launch, launch+late probes, attach); ${batches} batches after ${warmups} warm-up batches`);
  const procs = new Map<Mode, Proc>();
  const sessions = new Map<Mode, Session>();
  const calls = new Map<string, number>(); // "mode:row" -> calls made while its probes were on
  const samples = new Map<string, number[]>();
  const on = new Set<Mode>(['launch']);
  const body: string[] = [];
  try {
    const plain = Proc.spawn('hot.js');
    procs.set('plain', plain);
    await plain.waitFor(/ready/);

    const launch = await Session.launch([process.execPath, 'hot.js'], PROBES, { stdio: 'pipe', cwd: TARGETS });
    sessions.set('launch', launch);
    procs.set('launch', new Proc(launch.child!, 'hot.js (launch)'));
    await procs.get('launch')!.waitFor(/ready/, 0);

    const late = await Session.launch([process.execPath, 'hot.js'], [], { stdio: 'pipe', cwd: TARGETS });
    sessions.set('late', late);
    procs.set('late', new Proc(late.child!, 'hot.js (late)'));
    await procs.get('late')!.waitFor(/ready/, 0);

    const attachProc = Proc.spawn('hot.js');
    procs.set('attach', attachProc);
    await attachProc.waitFor(/ready/);

    const runBatch = async (b: number, record: boolean) => {
      for (const row of ROWS) {
        const n = callsPerBatch(row, opts.quick);
        // rotate the order of the targets from batch to batch
        const order = MODES.map((_m, i) => MODES[(i + b) % MODES.length]);
        for (const mode of order) {
          const m = await procs.get(mode)!.request(`run ${row} ${n}`, /ns (\S+) (\S+) /);
          if (on.has(mode)) calls.set(`${mode}:${row}`, (calls.get(`${mode}:${row}`) ?? 0) + n);
          if (!record) continue;
          const key = `${mode}:${row}`;
          if (!samples.has(key)) samples.set(key, []);
          samples.get(key)!.push(Number(m[2]));
        }
      }
    };

    const bpProc = Proc.spawn('hot.js');
    procs.set('bp' as Mode, bpProc);
    await bpProc.waitFor(/ready/);

    progress('fig6: warm-up batch 1');
    await runBatch(0, false);
    const bp = await Session.attach(bpProc.pid, { maxPauseMs: 0.001 });
    sessions.set('bp' as Mode, bp);
    const kinds = new Map<string, number>();
    for (const p of PROBES.slice(0, 5)) {
      const r = await bp.probe(p);
      for (const [k, n] of [['slot', r.bySlot], ['breakpoint', r.byBreakpoint], ['not placed', r.notPlaced]] as const) kinds.set(k, (kinds.get(k) ?? 0) + n);
    }
    const bpSamples = new Map<string, number[]>();
    const bpCheck = { c: 0, calls: 0, how: [...kinds].map(([k, n]) => `${n} ${k}`).join(', ') };
    const runBp = async (record: boolean) => {
      for (const row of BP_ROWS) {
        const m = await bpProc.request(`run ${row} ${BP_CALLS}`, /ns (\S+) (\S+) /);
        if (row === 'count') bpCheck.calls += BP_CALLS;
        if (!record) continue;
        if (!bpSamples.has(row)) bpSamples.set(row, []);
        bpSamples.get(row)!.push(Number(m[2]));
      }
    };
    await runBp(false);
    // the attached target has run hot for a batch: attach and place the probes now
    const attach = await Session.attach(attachProc.pid, { maxPauseMs: 60000 });
    sessions.set('attach', attach);
    for (const p of PROBES) await attach.probe(p);
    for (const p of PROBES) await late.probe(p);
    on.add('attach');
    on.add('late');
    progress('fig6: warm-up batch 2 (probes now on in all three sessions)');
    await runBatch(1, false);
    for (let b = 0; b < batches; b++) {
      progress(`fig6: batch ${b + 1}/${batches}`);
      await runBatch(b + 2, true);
      await runBp(true);
    }
    await bp.sample();
    bpCheck.c = bp.value('c') ?? 0;

    // validity: every counter must equal the calls made while it was on
    const checks: string[][] = [];
    for (const mode of ['launch', 'late', 'attach'] as Mode[]) {
      const s = sessions.get(mode)!;
      await s.sample();
      const m = new Map(s.metrics().map((x) => [x.name, x.total]));
      const c = m.get('c') ?? 0;
      const p = m.get('p') ?? 0;
      const w = m.get('w') ?? 0;
      const expC = calls.get(`${mode}:count`) ?? 0;
      const expP = (calls.get(`${mode}:pred`) ?? 0) / 2;
      const expW = calls.get(`${mode}:builtin`) ?? 0;
      checks.push([MODE_TITLE[mode], `${c} / ${expC}`, `${p} / ${expP}`, `${w} / ${expW}`, fmt(m.get('t') ?? 0, 3), fmt(m.get('ct') ?? 0, 3),
        c === expC && p === expP && (mode === 'launch' ? w >= expW : w === expW) ? 'yes' : '**NO**']);
      if (s.notes.length) body.push(`Notes of the ${mode} session: ${s.notes.map((x) => `"${x}"`).join('; ')}.`, '');
    }

    const med = (mode: Mode, row: Row) => median(samples.get(`${mode}:${row}`) ?? []);
    const base = med('plain', 'empty');
    const cell = (mode: Mode, row: Row) => `${fmt(med(mode, row))} (${ratio(med(mode, row), base)})`;
    const added = (mode: Mode, row: Row) => med(mode, row) - med('plain', row);

    body.push(`Median ns per call over ${batches} batches (after ${warmups} warm-up batches); in parentheses the ratio to the ` +
      `uninstrumented empty function (plain target, same run), as in the paper. Calls per batch: ` +
      ROWS.map((r) => `${r} ${callsPerBatch(r, opts.quick) / 1e6}M`).join(', ') + '.', '');
    body.push(table(['', 'plain (no tool)', 'launch (load-time slots)', 'launch, probes added later', 'attach (LiveEdit slots)'], [
      ['call to empty function `fEmpty(e){return e}`', cell('plain', 'empty'), '', '', ''],
      ['+ prepared with slots, nothing switched on', '', cell('launch', 'empty'), cell('late', 'empty'), cell('attach', 'empty')],
      ['+ switched on, empty snippet at entry `if (0) z++`', cell('plain', 'nop'), cell('launch', 'nop'), cell('late', 'nop'), cell('attach', 'nop')],
      ['+ entry counter `c++`', cell('plain', 'count'), cell('launch', 'count'), cell('late', 'count'), cell('attach', 'count')],
      ['+ entry counter under a predicate `if ($arg[0] % 2 == 0) p++`', cell('plain', 'pred'), cell('launch', 'pred'), cell('late', 'pred'), cell('attach', 'pred')],
      ['+ entry/exit wall timer (`startWallTimer`/`stopTimer`)', cell('plain', 'timer'), cell('launch', 'timer'), cell('late', 'timer'), cell('attach', 'timer')],
      ['+ entry/exit process timer (`startProcessTimer`/`stopTimer`)', cell('plain', 'cputimer'), cell('launch', 'cputimer'), cell('late', 'cputimer'), cell('attach', 'cputimer')],
      ['reference: counter written by hand in the source, `Float64Array` (`a[0]++`)', cell('plain', 'hand'), cell('launch', 'hand'), cell('late', 'hand'), cell('attach', 'hand')],
      ['reference: the same with a `Uint32Array` (`u[0]++`, what `c++` compiles to)', cell('plain', 'hand32'), cell('launch', 'hand32'), cell('late', 'hand32'), cell('attach', 'hand32')],
      ['clock read alone: `performance.now()`', cell('plain', 'now'), cell('launch', 'now'), cell('late', 'now'), cell('attach', 'now')],
      ['clock read alone: `process.cpuUsage()`', cell('plain', 'cpuusage'), cell('launch', 'cpuusage'), cell('late', 'cpuusage'), cell('attach', 'cpuusage')],
      ['clock read alone: the thread CPU clock process timers use (`CLOCK_THREAD_CPUTIME_ID`, native)', cell('plain', 'threadcpu'), cell('launch', 'threadcpu'), cell('late', 'threadcpu'), cell('attach', 'threadcpu')],
      ['built-in call `path.isAbsolute(\'/x\')` (plain), + entry counter by wrapping (`/Code/node:path/isAbsolute.entry: w++`)', cell('plain', 'builtin'), cell('launch', 'builtin'), cell('late', 'builtin'), cell('attach', 'builtin')],
    ]), '');
    body.push(`Fallback by breakpoint: a fifth \`hot.js\`, attached with \`maxPauseMs: 0.001\` so that its LiveEdit is refused and ` +
      `the same probes go to conditional breakpoints (${BP_CALLS} calls per batch, ${batches} batches, same run).`, '');
    const bpMed = (row: string) => median(bpSamples.get(row) ?? []);
    body.push(table(['row', 'ns per call', 'ratio to the empty function', 'added to the same row in the plain target'], [
      ['call to empty function, prepared nothing (no breakpoint)', fmt(bpMed('empty')), ratio(bpMed('empty'), base), fmt(bpMed('empty') - med('plain', 'empty'))],
      ['+ empty snippet at entry, by breakpoint', fmt(bpMed('nop')), ratio(bpMed('nop'), base), fmt(bpMed('nop') - med('plain', 'nop'))],
      ['+ entry counter `c++`, by breakpoint', fmt(bpMed('count')), ratio(bpMed('count'), base), fmt(bpMed('count') - med('plain', 'count'))],
      ['+ entry/exit wall timer, by two breakpoints', fmt(bpMed('timer')), ratio(bpMed('timer'), base), fmt(bpMed('timer') - med('plain', 'timer'))],
    ]), '');
    body.push(`Check: \`c\` = ${bpCheck.c} for ${bpCheck.calls} calls while on (${bpCheck.c === bpCheck.calls ? 'exact' : '**NOT exact**'}); ` +
      `mechanisms of the probes: ${bpCheck.how}.`, '');
    body.push('Spread: 25th-75th percentile of the batches, ns per call.', '');
    body.push(table(['row', ...MODES], ROWS.map((r) => [r, ...MODES.map((m) => {
      const xs = samples.get(`${m}:${r}`) ?? [];
      return `${fmt(quantile(xs, 0.25))}-${fmt(quantile(xs, 0.75))}`;
    })])), '');
    const now2 = 2 * med('plain', 'now');
    const cpu2 = 2 * med('plain', 'threadcpu');
    const goal = (x: number, lim: number) => (x < lim ? 'met' : '**not met**');
    body.push('Against the goals (added ns = instrumented minus the same function in the plain target):', '');
    body.push(table(['goal', 'launch', 'launch, later', 'attach'], [
      ['prepared, nothing on ≈ empty function (ratio)', ...(['launch', 'late', 'attach'] as Mode[]).map((m) => ratio(med(m, 'empty'), base))],
      ['(no goal) switching a function on with an empty snippet adds', ...(['launch', 'late', 'attach'] as Mode[]).map((m) => `${fmt(added(m, 'nop'))} ns`)],
      ['entry counter adds < 2 ns', ...(['launch', 'late', 'attach'] as Mode[]).map((m) => `${fmt(added(m, 'count'))} ns: ${goal(added(m, 'count'), 2)}`)],
      [`wall timer adds ≤ its 2 clock reads (2 × ${fmt(med('plain', 'now'))} = ${fmt(now2)} ns)`, ...(['launch', 'late', 'attach'] as Mode[]).map((m) => `${fmt(added(m, 'timer'))} ns: ${goal(added(m, 'timer'), now2)}`)],
      [`process timer adds ≤ its 2 clock reads (2 × ${fmt(med('plain', 'threadcpu'))} = ${fmt(cpu2)} ns)`, ...(['launch', 'late', 'attach'] as Mode[]).map((m) => `${fmt(added(m, 'cputimer'))} ns: ${goal(added(m, 'cputimer'), cpu2)}`)],
    ]), '');
    body.push('Check that the probes really ran: each counter against the calls made while it was on; timer totals in seconds.', '');
    body.push(table(['session', '`c` / calls', '`p` / even calls', '`w` / `path.isAbsolute` calls', '`t` (s)', '`ct` (s)', 'exact'], checks), '');
    body.push('In the launched target the wrapper is in place from the first line, so `w` also counts the calls Node.js makes ' +
      'through `path`\'s exports while it loads the program (the check there is `w` ≥ calls).', '');
  } finally {
    for (const [mode, s] of sessions) { if (mode === 'attach' || (mode as string) === 'bp') await s.detach().catch(() => undefined); }
    for (const p of procs.values()) await p.stop();
  }
  return { title: '1. Cost of triggering instrumentation (Figure 6)', body };
}
