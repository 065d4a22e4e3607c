// Call-path profiles (issue #13): what one profiled call costs against a flat
// counter and an entry/exit timer on the same functions (timed in the
// program), and on a real program (marked, every function of it profiled):
// its slowdown, the profile's size against an entry/exit trace of the same
// run, and what cutting it to k = 1, 2, 4 and whole paths costs the tool.
// `npm run bench -- --only call-paths`, or: node dist/bench/call-paths.js [--quick]
import * as path from 'path';
import { callPathProbes, Session } from '../src/api';
import { BenchOptions, fmt, median, Proc, progress, Section, table, TARGETS, timeMs } from './lib';

const CHAIN = path.join(TARGETS, 'call-chain.js');
const ALL = '/Code/call-chain.js/f?';
type Kind = 'off' | 'counter' | 'timer' | 'paths';
const KINDS: Kind[] = ['off', 'counter', 'timer', 'paths'];
const PROBES: Record<Kind, string[]> = {
  off: [],
  counter: [`${ALL}.entry: n++`],
  timer: [`${ALL}.entry: startWallTimer(t)`, `${ALL}.exit: stopTimer(t)`],
  paths: callPathProbes([ALL]),
};

/** ns per function call with each kind of instrumentation on all eight functions, launched (slots), a process per kind and round. */
async function perCall(opts: BenchOptions): Promise<string[]> {
  const k = 11, m = opts.quick ? 200_000 : 1_000_000;
  const rounds = opts.quick ? 2 : 5;
  const ns: Record<Kind, number[]> = { off: [], counter: [], timer: [], paths: [] };
  let exact = true;
  for (let i = 0; i < rounds; i++) {
    // the kinds take turns, the order rotating every round
    for (const kind of KINDS.map((_, j) => KINDS[(i + j) % KINDS.length])) {
      progress(`call-paths: per call, round ${i + 1} of ${rounds}: ${kind}`);
      const s = await Session.launch([process.execPath, CHAIN], PROBES[kind], { stdio: 'pipe', cwd: TARGETS });
      try {
        const p = new Proc(s.child!, 'call-chain.js');
        await p.waitFor(/ready/, 0);
        await p.request(`run 3 ${m}`, /ns \S+/); // warm-up
        const r = await p.request(`run ${k} ${m}`, /ns (\S+) (\d+)/);
        ns[kind].push(Number(r[1]));
        await s.sample();
        const calls = 8 * (3 + k) * m;
        if (kind === 'counter' && s.value('n') !== calls) exact = false;
        if (kind === 'paths') {
          const ps = s.callPaths(Infinity);
          if (ps.length !== 8 || ps.some((p) => p.calls !== calls / 8)) exact = false;
        }
      } finally {
        await s.detach().catch(() => undefined);
        s.child?.kill();
      }
    }
  }
  const off = median(ns.off);
  const row = (kind: Kind) => [kind === 'off' ? 'nothing on (slots off)' : kind === 'counter' ? 'a counter at entry' : kind === 'timer' ? 'a wall timer, entry to exit' : 'call-path profile (any k)',
    fmt(median(ns[kind]), 2), kind === 'off' ? '' : fmt(median(ns[kind]) - off, 2), ns[kind].map((x) => fmt(x, 2)).join(' / ')];
  return [
    `bench/targets/call-chain.js: \`f0\` calls \`f1\` … calls \`f7\`, which adds; \`f0\` is called ${m.toLocaleString('en')} times in a loop, ${k} times over (3 more first, untimed), and the ` +
    `program prints the median ns per function call. Launched (\`Session.launch\`, every function prepared at load, slots), with the probes given at launch on all eight functions; ` +
    `a new process per kind and round, ${rounds} rounds, the order of the kinds rotating. Medians over the rounds:`,
    '',
    table(['instrumentation on f0 … f7', 'ns per function call', 'added ns per call', 'rounds'], KINDS.map(row)),
    '',
    `Counts exact (the counter ${8 * (3 + k) * m} calls; the profile eight paths \`f0\`, \`f0>f1\`, … of ${(3 + k) * m} calls each): ${exact ? 'yes' : '**no**'}.`,
  ];
}

/** marked with every function of the program profiled: slowdown, data volume, and the tool's cut per k. */
async function realProgram(opts: BenchOptions): Promise<string[]> {
  const reps = opts.quick ? 5 : 20;
  const rounds = opts.quick ? 1 : 3;
  const ms: Record<'off' | 'paths', number[]> = { off: [], paths: [] };
  let last: Session | null = null;
  for (let i = 0; i < rounds; i++) {
    for (const kind of (i % 2 ? ['paths', 'off'] : ['off', 'paths']) as ('off' | 'paths')[]) {
      progress(`call-paths: marked, round ${i + 1} of ${rounds}: ${kind}`);
      const s = await Session.launch([process.execPath, 'work.js', 'marked', String(reps), 'hold'], kind === 'paths' ? callPathProbes(['/Code/**']) : [], { stdio: 'pipe', cwd: TARGETS });
      const r = await new Proc(s.child!, 'work.js').waitFor(/work (\S+)/, 0);
      ms[kind].push(Number(r[1]));
      await s.sample();
      if (kind === 'paths' && i === rounds - 1) last = s;
      else { await s.detach().catch(() => undefined); s.child?.kill(); }
    }
  }
  // the same profiled with four times the repetitions: the profile's size must not follow
  progress(`call-paths: marked, ${4 * reps} repetitions, profiled`);
  const longer = await Session.launch([process.execPath, 'work.js', 'marked', String(4 * reps), 'hold'], callPathProbes(['/Code/**']), { stdio: 'pipe', cwd: TARGETS });
  let long: { paths: number; calls: number; json: number };
  try {
    await new Proc(longer.child!, 'work.js').waitFor(/work (\S+)/, 0);
    await longer.sample();
    const w = longer.callPaths(Infinity);
    long = { paths: w.length, calls: w.reduce((t, p) => t + p.calls, 0), json: Buffer.byteLength(JSON.stringify(w)) };
  } finally {
    await longer.detach().catch(() => undefined);
    longer.child?.kill();
  }
  const s = last!;
  try {
    const whole = s.callPaths(Infinity);
    const calls = whole.reduce((t, p) => t + p.calls, 0);
    const json = Buffer.byteLength(JSON.stringify(whole));
    // an entry/exit trace of the same run: two events per call, each a 4-byte function id and an 8-byte time stamp
    const trace = 2 * calls * 12;
    const cuts = [1, 2, 4, Infinity].map((k) => {
      const t0 = timeMs();
      const ps = s.callPaths(k);
      return [k === Infinity ? 'whole (inf)' : String(k), String(ps.length), fmt(timeMs() - t0, 2)];
    });
    const off = median(ms.off), on = median(ms.paths);
    return [
      `bench/targets/work.js marked ${reps}: marked renders its README ×20, ${reps} timed repetitions after 30 untimed, launched with nothing on or with ` +
      `\`--call-paths '/Code/**'\` (every function of work.js and marked's 13 modules), ${rounds} round(s), the order alternating; ms per repetition, median of the runs' medians:`,
      '',
      table(['nothing on', 'call-path profile of every function', 'ratio'], [[fmt(off, 2), fmt(on, 2), `${fmt(on / off, 2)}×`]]),
      '',
      `Runs: nothing on ${ms.off.map((x) => fmt(x, 2)).join(' / ')}; profiled ${ms.paths.map((x) => fmt(x, 2)).join(' / ')}.`,
      '',
      `Data volume of the last profiled run: ${whole.length} distinct whole paths over ${calls.toLocaleString('en')} calls; the profile as \`--json\` writes it ` +
      `${(json / 1024).toFixed(1)} KB, against ${(trace / 1e6).toFixed(1)} MB for an entry/exit trace of the same calls (2 events a call, 12 bytes an event: ` +
      `computed from the exact call counts, not written) — ${fmt(trace / json, 0)}× smaller. With ${4 * reps} timed repetitions instead: ${long.paths} paths over ` +
      `${long.calls.toLocaleString('en')} calls, ${(long.json / 1024).toFixed(1)} KB, against ${(2 * long.calls * 12 / 1e6).toFixed(1)} MB for the trace: the profile grows with the ` +
      'number of distinct paths, not with the run.',
      '',
      'The tool cutting that profile to k functions (Session.callPaths(k), in the tool, after the run):',
      '',
      table(['k', 'paths', 'ms'], cuts),
    ];
  } finally {
    await s.detach().catch(() => undefined);
    s.child?.kill();
  }
}

/**
 * Intrusion compensation: each function's inclusive time per call, raw and
 * virtual (less the profile's own work), against the same work timed in a
 * plain (unprofiled) process: the chain, and marked's whole job.
 */
async function compensation(opts: BenchOptions): Promise<string[]> {
  const rounds = opts.quick ? 1 : 3;
  const m = opts.quick ? 200_000 : 1_000_000, k = 5;
  const reps = opts.quick ? 5 : 20;
  const plainChain: number[] = [], plainJob: number[] = [];
  const raw: number[][] = [], virt: number[][] = [];
  const jobRaw: number[] = [], jobVirt: number[] = [];
  let notes: string[] = [];
  for (let i = 0; i < rounds; i++) {
    progress(`call-paths: compensation, round ${i + 1} of ${rounds}`);
    // plain: the chain's ns per f0 call, marked's ms per job
    const p = Proc.spawn('call-chain.js');
    try {
      await p.waitFor(/ready/, 0);
      await p.request(`run 3 ${m}`, /ns \S+/);
      plainChain.push(8 * Number((await p.request(`run ${k} ${m}`, /ns (\S+)/))[1]));
    } finally { p.child.kill(); }
    const w = Proc.spawn('work.js', ['marked', String(reps), 'warm']);
    try {
      await w.waitFor(/warm/, 0);
      const r = await w.request('go', /work \S+ (\S+)/);
      plainJob.push(Number(r[1]) / reps);
    } finally { w.child.kill(); }
    // profiled: every function of the chain; then every function of the marked program
    const s = await Session.launch([process.execPath, CHAIN], callPathProbes([ALL]), { stdio: 'pipe', cwd: TARGETS });
    try {
      const c = new Proc(s.child!, 'call-chain.js');
      await c.waitFor(/ready/, 0);
      await c.request(`run 3 ${m}`, /ns \S+/);
      await s.sample();
      const before = s.callPaths(1);
      await c.request(`run ${k} ${m}`, /ns \S+/);
      await s.sample();
      const after = s.callPaths(1);
      notes = s.notes.filter((n) => n.startsWith('call-path profile: its own work'));
      const per = (fn: string, pick: (p: (typeof after)[number]) => number) => {
        const a = after.find((x) => x.functions[0] === fn)!, b = before.find((x) => x.functions[0] === fn)!;
        return (pick(a) - pick(b)) / (a.calls - b.calls) * 1e9;
      };
      raw.push([0, 1, 2, 3, 4, 5, 6, 7].map((j) => per(`call-chain.js/f${j}`, (x) => x.wall.inclusive)));
      virt.push([0, 1, 2, 3, 4, 5, 6, 7].map((j) => per(`call-chain.js/f${j}`, (x) => x.virtual.wall.inclusive)));
    } finally { await s.detach().catch(() => undefined); s.child?.kill(); }
    const sm = await Session.launch([process.execPath, 'work.js', 'marked', String(reps), 'warm'], callPathProbes(['/Code/**']), { stdio: 'pipe', cwd: TARGETS });
    try {
      const c = new Proc(sm.child!, 'work.js');
      await c.waitFor(/warm/, 0);
      await sm.sample();
      const job = () => sm.callPaths(1).find((x) => x.functions[0].startsWith('work.js/job') && x.calls > 0)!;
      const b = job();
      // the program exits after its work: the last values are what the thread wrote as it ended
      await c.request('go', /work \S+/);
      await sm.waitForExit();
      const a = job();
      jobRaw.push((a.wall.inclusive - b.wall.inclusive) / (a.calls - b.calls) * 1e3);
      jobVirt.push((a.virtual.wall.inclusive - b.virtual.wall.inclusive) / (a.calls - b.calls) * 1e3);
    } finally { await sm.detach().catch(() => undefined); sm.child?.kill(); }
  }
  const pc = median(plainChain) / 8;
  const rows = [0, 1, 2, 3, 4, 5, 6, 7].map((j) => {
    const plain = (8 - j) * pc;
    const r = median(raw.map((x) => x[j])), v = median(virt.map((x) => x[j]));
    return [`f${j}`, fmt(plain, 1), fmt(r, 1), `${fmt(r / plain, 2)}×`, fmt(v, 1), `${fmt(v / plain, 2)}×`];
  });
  const pj = median(plainJob), rj = median(jobRaw), vj = median(jobVirt);
  return [
    `Inclusive wall time per call, raw and virtual (less the profile's own work, as the session's note gives it: "${notes.join('; ') || 'no note'}"), ` +
    `against the same work in a plain process, ${rounds} round(s), medians. The chain: ${k} × ${m.toLocaleString('en')} calls of \`f0\` after 3 × as many untimed; plain: ` +
    `the program's own ns per function call in a plain process, times the functions below (f0 runs all eight). marked: the timed ${reps} repetitions after the warm-up, \`job\` ` +
    '(`marked.parse` of its README ×20) with every function of the program profiled, against the mean ms per repetition of a plain process (its total ÷ repetitions).',
    '',
    table(['function', 'plain ns', 'raw ns', 'raw ÷ plain', 'virtual ns', 'virtual ÷ plain'], rows),
    '',
    table(['marked, per job', 'plain ms', 'raw ms', 'raw ÷ plain', 'virtual ms', 'virtual ÷ plain'], [['work.js/job', fmt(pj, 2), fmt(rj, 2), `${fmt(rj / pj, 2)}×`, fmt(vj, 2), `${fmt(vj / pj, 2)}×`]]),
  ];
}

export async function benchCallPaths(opts: BenchOptions): Promise<Section> {
  const body = [...(await perCall(opts)), '', ...(await realProgram(opts)), '', ...(await compensation(opts))];
  return { title: 'Call-path profiles: cost per call, on a real program, and data volume against a trace', body };
}

if (require.main === module) {
  benchCallPaths({ quick: process.argv.includes('--quick') }).then((s) => {
    process.stdout.write(`## ${s.title}\n\n${s.body.join('\n')}\n`);
  }).catch((e) => { process.stderr.write(`${e?.stack ?? e}\n`); process.exit(1); });
}
