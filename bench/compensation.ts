// Intrusion compensation of MDL timers (issue #13): per function, a timer's raw
// inclusive time and its virtual time (less the handlers' runs inside it, priced
// by this machine's calibration, [low, high]) against the same work in a plain
// process, as the seeds' tables compare instrumented, compensated and actual
// times; and what keeping the virtual time costs a timer.
// `npm run bench -- --only compensation`, or: node dist/bench/compensation.js [--quick]
import * as path from 'path';
import { Session } from '../src/api';
import { calibration } from '../src/cost/calibration';
import { MetricManager } from '../src/metrics/manager';
import type { MetricInstance } from '../src/metrics/manager';
import { BenchOptions, fmt, median, Proc, progress, Section, table, TARGETS } from './lib';

const CHAIN = path.join(TARGETS, 'call-chain.js');
const F = [0, 1, 2, 3, 4, 5, 6, 7];

/** A launched target with a metric manager; the requests are made once it says `ready` (or `warm`). */
async function launched(args: string[], ready: RegExp): Promise<{ s: Session; mm: MetricManager; p: Proc }> {
  const s = await Session.launch([process.execPath, ...args], [], { stdio: 'pipe', cwd: TARGETS });
  const p = new Proc(s.child!, path.basename(args[0]));
  await p.waitFor(ready, 0);
  return { s, mm: new MetricManager([s]), p };
}

async function close(s: Session): Promise<void> {
  await s.detach().catch(() => undefined);
  s.child?.kill();
}

/** The chain f0 … f7: a wall timer on each and a counter at each entry; raw and virtual ns per call against the plain program's. */
async function chain(opts: BenchOptions): Promise<string[]> {
  const k = 5, m = opts.quick ? 100_000 : 300_000;
  const rounds = opts.quick ? 1 : 3;
  const plain: number[] = [], raw: number[][] = [], lo: number[][] = [], hi: number[][] = [];
  const perCall = { on: [] as number[], off: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    progress(`compensation: the chain, round ${r + 1} of ${rounds}`);
    const p = Proc.spawn(CHAIN);
    try {
      await p.waitFor(/ready/, 0);
      await p.request(`run 3 ${m}`, /ns \S+/);
      plain.push(Number((await p.request(`run ${k} ${m}`, /ns (\S+)/))[1]));
    } finally { p.child.kill(); }
    // compensated (the calibration's prices sent), then the same without: what the virtual time costs a timer
    for (const compensate of [true, false]) {
      const { s, mm, p: c } = await launched([CHAIN], /ready/);
      try {
        if (!compensate) mm.pricedAs(s, null);
        const walls: MetricInstance[] = [];
        for (const j of F) walls.push(await mm.enable('wall', `/Code/call-chain.js/f${j}`));
        await mm.enableAll('procedure_calls', '/Code/call-chain.js/f?');
        await c.request(`run 3 ${m}`, /ns \S+/);
        await s.sample();
        const before = walls.map((w) => w.value());
        const ns = Number((await c.request(`run ${k} ${m}`, /ns (\S+)/))[1]);
        await s.sample();
        const after = walls.map((w) => w.value());
        (compensate ? perCall.on : perCall.off).push(ns);
        if (!compensate) continue;
        const calls = k * m;
        raw.push(F.map((j) => (after[j].total - before[j].total) / calls * 1e9));
        lo.push(F.map((j) => (after[j].virtual![0] - before[j].virtual![0]) / calls * 1e9));
        hi.push(F.map((j) => (after[j].virtual![1] - before[j].virtual![1]) / calls * 1e9));
      } finally { await close(s); }
    }
  }
  const pc = median(plain);
  const rows = F.map((j) => {
    const actual = (8 - j) * pc;
    const r = median(raw.map((x) => x[j])), l = median(lo.map((x) => x[j])), h = median(hi.map((x) => x[j]));
    return [`f${j}`, fmt(actual, 1), fmt(r, 1), `${fmt(r / actual, 2)}×`, `${fmt(l, 1)} – ${fmt(h, 1)}`, `${fmt(l / actual, 2)}× – ${fmt(h / actual, 2)}×`];
  });
  const on = median(perCall.on), off = median(perCall.off);
  return [
    `bench/targets/call-chain.js: \`f0\` calls \`f1\` … \`f7\`; ${k} × ${m.toLocaleString('en')} calls of \`f0\` after 3 × as many untimed. Launched (slots); ` +
    '`wall` enabled on each of the eight functions and `procedure_calls` on all of them (a counter at each entry: the intrusion inside the outer timers). ' +
    'Per call of each function: its raw inclusive wall time and its virtual time, [low, high] (`virtual` of the instance), against the actual time in a plain process ' +
    `(the program's own ns per function call there, times the functions at and below it). ${rounds} round(s), medians:`,
    '',
    table(['function', 'plain ns', 'raw ns', 'raw ÷ plain', 'virtual ns', 'virtual ÷ plain'], rows),
    '',
    `What the virtual time costs: the same run with and without prices sent (the timers then keep no virtual time), the program's own ns per function call: ` +
    `${fmt(on, 2)} with, ${fmt(off, 2)} without (${fmt((on / off - 1) * 100, 1)} %; rounds: ${perCall.on.map((x) => fmt(x, 2)).join(' / ')} against ${perCall.off.map((x) => fmt(x, 2)).join(' / ')}).`,
  ];
}

/** marked: a wall timer on the job, a counter at the entry of every function of the program. */
async function marked(opts: BenchOptions): Promise<string[]> {
  const reps = opts.quick ? 5 : 20;
  const rounds = opts.quick ? 1 : 3;
  const plain: number[] = [], raw: number[] = [], lo: number[] = [], hi: number[] = [], own: number[] = [];
  // the warm-up again after the slots were switched on: V8 compiles the switched functions again
  const first: number[] = [], settle: number[] = [];
  let warmups = 0;
  for (let r = 0; r < rounds; r++) {
    progress(`compensation: marked, round ${r + 1} of ${rounds}`);
    const w = Proc.spawn('work.js', ['marked', String(reps), 'warm']);
    try {
      await w.waitFor(/warm/, 0);
      // warmed up twice, as the instrumented run is (before and after its switch)
      await w.request('rewarm', /warm [\d. ]+\n/);
      plain.push(Number((await w.request('go', /work \S+ (\S+)/))[1]) / reps);
    } finally { w.child.kill(); }
    const { s, mm, p } = await launched(['work.js', 'marked', String(reps), 'warm'], /warm/);
    try {
      // (`job` is named by its line: work.js assigns one per workload)
      const jobs = await mm.enableAll('wall', '/Code/work.js/job*');
      await mm.enableAll('procedure_calls', '/Code/**');
      // timed as the plain run is, once V8 has compiled the switched code again: the
      // switch's own cost (the slowdown until then) is the observed cost's, not a timer's
      const again = (await p.request('rewarm', /warm ([\d. ]+)\n/))[1].trim().split(' ').map(Number);
      warmups = again.length;
      first.push(again[0]);
      settle.push(again.reduce((a, x) => a + x, 0) / again.length);
      await s.sample();
      const j = jobs.findIndex((x) => x.value().total > 0);
      const before = jobs[j].value();
      // the program exits after its work: the last values are what the thread wrote as it ended
      own.push(Number((await p.request('go', /work \S+ (\S+)/))[1]) / reps);
      await s.waitForExit();
      const v = jobs[j].value();
      raw.push((v.total - before.total) / reps * 1e3);
      lo.push((v.virtual![0] - before.virtual![0]) / reps * 1e3);
      hi.push((v.virtual![1] - before.virtual![1]) / reps * 1e3);
    } finally { await close(s); }
  }
  const pj = median(plain), rj = median(raw), l = median(lo), h = median(hi), o = median(own), f = median(first), st = median(settle);
  return [
    `marked (bench/targets/work.js: \`job\` is \`marked.parse\` of its README ×20), launched, the timed ${reps} repetitions after the warm-up, twice (instrumented: the second after the slots were switched on): \`wall\` of \`job\` with ` +
    '`procedure_calls` on every function of the program (`/Code/**`), against the mean ms per repetition of a plain process; beside it the program\'s own timer in the instrumented run. ' +
    `${rounds} round(s), medians:`,
    '',
    table(['per job', 'plain ms', 'instrumented, program\'s own timer', 'raw ms', 'raw ÷ plain', 'virtual ms', 'virtual ÷ plain'],
      [['work.js/job', fmt(pj, 2), fmt(o, 2), fmt(rj, 2), `${fmt(rj / pj, 2)}×`, `${fmt(l, 2)} – ${fmt(h, 2)}`, `${fmt(l / pj, 2)}× – ${fmt(h / pj, 2)}×`]]),
    '',
    `Before the timed part, right after the slots were switched on, the program's own timer over the warm-up again (V8 compiles the switched functions anew): ` +
    `the first job ${fmt(f, 2)} ms (${fmt(f / pj, 1)}× plain), the mean of those ${warmups} repetitions ${fmt(st, 2)} ms (${fmt(st / pj, 2)}×); ` +
    `rounds: first ${first.map((x) => fmt(x, 1)).join(' / ')}, mean ${settle.map((x) => fmt(x, 2)).join(' / ')}.`,
  ];
}

export async function benchCompensation(opts: BenchOptions): Promise<Section> {
  // the prices come from this machine's calibration (measured now if none is saved)
  await calibration({ progress });
  const body = [...(await chain(opts)), '', ...(await marked(opts))];
  return { title: 'Intrusion compensation of timers: raw and virtual inclusive times against the plain run', body };
}

if (require.main === module) {
  benchCompensation({ quick: process.argv.includes('--quick') }).then((s) => {
    process.stdout.write(`## ${s.title}\n\n${s.body.join('\n')}\n`);
  }).catch((e) => { process.stderr.write(`${e?.stack ?? e}\n`); process.exit(1); });
}
