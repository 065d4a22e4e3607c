// 9. The Performance Consultant under the cost limit (the cost-system paper's
// section 5 and Figure 4): (a) search time on the demos with the cost limit,
// with a fixed limit of three tests at once, and with no limit, and the
// observed cost while searching; (b) the slowdown of a workload under a full
// search with --max-overhead 5% and with no limit, against the same workload
// run bare in the same benchmark.
import { diagnose } from '../src/consultant/diagnose';
import type { Diagnosis } from '../src/consultant/report';
import { deadline } from '../src/session/deadline';
import { BenchOptions, FIXTURES, firstFunctionSeconds, fmt, median, progress, ROOT, Section, table, TARGETS } from './lib';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

const DEMOS: { name: string; planted: (d: Diagnosis, heavy?: string) => boolean }[] = [
  { name: 'cpu-bound', planted: (d) => d.bottlenecks.find((b) => b.hypothesis === 'cpu_bound')?.focus === '/Code/cpu-bound.js/hashRecord' },
  { name: 'async-wait', planted: (d) => d.bottlenecks.find((b) => b.hypothesis === 'waiting')?.focus === '/Code/async-wait.js/fetchProfile' },
  { name: 'worker-imbalance', planted: (d, heavy) => d.bottlenecks.find((b) => b.hypothesis === 'cpu_bound')?.focus === `/Code/worker-imbalance.js/crunch,/Thread/${d.pid}/${heavy}` },
];

const MODES: { label: string; maxOverhead: number; maxTests?: number }[] = [
  { label: '5% cost limit', maxOverhead: 0.05 },
  { label: '3 tests at once', maxOverhead: Infinity, maxTests: 3 },
  { label: 'unlimited', maxOverhead: Infinity },
];

const sd = (xs: number[]) => { const m = xs.reduce((a, b) => a + b, 0) / (xs.length || 1); return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length || 1)); };
const pct = (x: number) => `${fmt(100 * x, 1)}%`;

const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / (xs.length || 1);

/** The repetitions work.js reported with WORK_STAMPS set: "rep <ms> <epoch ms at its end>". */
const parseReps = (text: string) => [...text.matchAll(/^rep (\S+) (\d+)$/gm)].map((m) => ({ ms: Number(m[1]), at: Number(m[2]) }));

/** Targets launched by `start` report their repetitions' times (WORK_STAMPS), the tool's own environment restored after. */
async function withStamps<T>(start: () => Promise<T>): Promise<T> {
  const saved = process.env.WORK_STAMPS;
  process.env.WORK_STAMPS = '1';
  try {
    return await start();
  } finally {
    if (saved === undefined) delete process.env.WORK_STAMPS; else process.env.WORK_STAMPS = saved;
  }
}

/** The machine's CPU time so far and the part of it stolen by the hypervisor (/proc/stat); share(): stolen since an earlier reading. */
function stealNow(): { total: number; steal: number; share: (since: { total: number; steal: number }) => number } {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, x) => a + x, 0), steal = f[7] ?? 0;
  return { total, steal, share: (s) => (total > s.total ? (steal - s.steal) / (total - s.total) : 0) };
}

async function searchDemo(name: string, mode: typeof MODES[number]): Promise<{ d: Diagnosis; heavy?: string }> {
  let stderr = '';
  const { diagnosis, session } = await diagnose({ command: [process.execPath, `${name}.js`, '120'] }, {
    // until the search is complete; 90 s at most
    cwd: path.join(ROOT, 'demo'), stdio: 'pipe', maxOverhead: mode.maxOverhead, maxTests: mode.maxTests, signal: deadline(90_000),
    onStart: (_c, s) => { s.child!.stderr!.setEncoding('utf8').on('data', (x: string) => { stderr += x; }); s.child!.stdout!.resume(); },
  });
  session.child?.kill();
  return { d: diagnosis, heavy: /heavy worker: thread (\d+)/.exec(stderr)?.[1] };
}

/**
 * The workload's repetitions (ms each, and when each ended): bare, or launched
 * under a diagnosis; with it, the search's span in epoch ms.
 */
async function workload(reps: number, mode?: typeof MODES[number]): Promise<{ reps: { ms: number; at: number }[]; span?: [number, number]; d?: Diagnosis }> {
  const args = ['work.js', 'esprima', String(reps)];
  const env = { ...process.env, WORK_STAMPS: '1' };
  if (!mode) return { reps: parseReps(spawnSync(process.execPath, args, { cwd: TARGETS, encoding: 'utf8', env }).stderr) };
  let err = '', t0 = 0;
  const { diagnosis } = await withStamps(() => diagnose({ command: [process.execPath, ...args] }, {
    cwd: TARGETS, stdio: 'pipe', maxOverhead: mode.maxOverhead, maxTests: mode.maxTests, durationSeconds: 3600,
    onStart: (_c, s) => { t0 = Date.now(); s.child!.stderr!.setEncoding('utf8').on('data', (x: string) => { err += x; }); s.child!.stdout!.resume(); },
  }));
  const end = t0 + 1000 * (diagnosis.searchSeconds ?? diagnosis.durationSeconds);
  return { reps: parseReps(err), span: [t0, end], d: diagnosis };
}

/**
 * esprima parsing its own source under V8's sampling profiler (in-process, the
 * same run): the function the consultant names CPU-bound, and its rank in the
 * profiler's list by self time.
 */
async function againstProfiler(limit: number): Promise<{ named: string; rank: number; top: string[]; search: number | null }> {
  const { diagnosis: d, session } = await diagnose({ command: [process.execPath, 'profiled-parse.js'] }, {
    cwd: FIXTURES, stdio: 'pipe', hypotheses: ['cpu_bound'], thresholds: { cpu_bound: 0.1 }, maxOverhead: limit,
    onStart: (_c, s) => { s.child!.stderr!.resume(); },
  });
  let out = '';
  const child = session.child!;
  child.stdout!.setEncoding('utf8').on('data', (x: string) => { out += x; });
  const exited = new Promise((r) => child.once('exit', r));
  child.stdin!.write('stop\n');
  await exited;
  const top = JSON.parse(/^profile (.*)$/m.exec(out)![1]) as { name: string; line: number }[];
  const named = d.bottlenecks.find((b) => b.hypothesis === 'cpu_bound' && b.source && /esprima\.js:\d+$/.test(b.source));
  const line = named ? Number(/:(\d+)$/.exec(named.source!)![1]) : -1;
  return { named: named ? named.focus.slice(named.focus.lastIndexOf('/') + 1) : '(none)', rank: top.findIndex((f) => f.line === line) + 1, top: top.slice(0, 4).map((f) => f.name), search: d.searchSeconds };
}

/** runs of each demo and control method, and of the profiler comparison */
const runsOf = (opts: BenchOptions) => (opts.quick ? 1 : 3);

/** (a): search times on the demos under each control method (the cost-system paper's Figure 4). */
async function searchTimes(opts: BenchOptions): Promise<string[]> {
  const body: string[] = [];
  const runs = runsOf(opts);
  const rows: string[][] = [];
  // runs that missed the planted bottleneck or did not complete, and what they found instead
  const misses: string[] = [];
  for (const demo of DEMOS) {
    for (const mode of MODES) {
      const times: number[] = [], firsts: number[] = [], avg: number[] = [], max: number[] = [], dev: number[] = [];
      let named = 0, done = 0;
      for (let r = 0; r < runs; r++) {
        progress(`consultant: ${demo.name}, ${mode.label}, run ${r + 1}/${runs}`);
        const { d, heavy } = await searchDemo(demo.name, mode);
        if (d.searchSeconds !== null) { times.push(d.searchSeconds); done++; }
        const first = firstFunctionSeconds(d.searchHistory);
        if (first !== null) firsts.push(first);
        if (demo.planted(d, heavy)) named++;
        else misses.push(`${demo.name}, ${mode.label}, run ${r + 1}: ranked first ${d.bottlenecks.slice(0, 3).map((b) => `${b.hypothesis} at ${b.focus || '(program)'} ${pct(b.value)}`).join('; ') || 'nothing'}${heavy ? ` (heavy worker: thread ${heavy})` : ''}`);
        if (d.searchSeconds === null) {
          const open = d.searchHistory.filter((n) => ['unknown', 'waiting', 'testing'].includes(n.state));
          misses.push(`${demo.name}, ${mode.label}, run ${r + 1}: not complete after ${fmt(d.durationSeconds, 1)} s; undecided: ${open.map((n) => `${n.hypothesis} at ${n.focus} (${n.state}${n.note ? `: ${n.note}` : ''})`).join('; ')}`);
        }
        const obs = d.cost.trace.map((x) => x.observed);
        avg.push(obs.reduce((a, b) => a + b, 0) / (obs.length || 1));
        max.push(Math.max(0, ...obs));
        dev.push(sd(obs));
      }
      const spread = (xs: number[]) => `${fmt(median(xs), 1)} (${fmt(Math.min(...xs), 1)}-${fmt(Math.max(...xs), 1)})`;
      rows.push([demo.name, mode.label, times.length ? spread(times) : 'not complete', firsts.length ? `${spread(firsts)}${firsts.length < runs ? ` (${firsts.length} runs)` : ''}` : 'none',
        pct(median(avg)), pct(median(max)), pct(median(dev)), `${named}/${runs}`, `${done}/${runs}`]);
    }
  }
  body.push(`(a) \`paranode diagnose\` (library \`diagnose\`) on each demo, launched; all hypotheses; tests of 1 s. Search time: seconds from the search's start ` +
    `until every refinement of every true hypothesis is decided, median of ${runs} runs (min-max). C_obs: the observed cost (high bound) per ` +
    '0.6 s window while searching, as a share of the busiest thread\'s time: median over the runs of its average, maximum and standard deviation. ' +
    "First function: seconds from the search's start until a function (not a module) was first found true, the end of its first test window that held (median, min-max). " +
    '"3 tests at once": no cost limit, at most three refinements tested at a time; "unlimited": every refinement as soon as its parent holds.', '',
    table(['demo', 'control', 'search time s', 'first function s', 'C_obs avg', 'C_obs max', 'C_obs std dev', 'planted named', 'complete'], rows));
  if (misses.length) body.push('', 'Runs that missed the planted bottleneck or did not complete:', '', ...misses.map((m) => `- ${m}`));

  return body;
}

/** Section 9(a) alone: `--only search`. */
export async function benchSearch(opts: BenchOptions): Promise<Section> {
  return { title: '9(a). Search times under the cost limit, 3 tests at once and unlimited (the cost-system paper\'s Figure 4)', body: await searchTimes(opts) };
}

export async function benchConsultant(opts: BenchOptions): Promise<Section> {
  const body = await searchTimes(opts);
  const runs = runsOf(opts);

  // long enough for a search under the limit to be under way for most of it
  const reps = opts.quick ? 300 : 600;
  const wrows: string[][] = [];
  const bare: number[] = [], bareSteal: number[] = [];
  const got = new Map<string, { during: number[]; slow: number[]; n: number[]; search: number[]; avg: number[]; steal: number[] }>();
  // more rounds than elsewhere: each compares runs made one after the other, and the host's load moves between them
  const rounds = opts.quick ? 1 : 5;
  for (let r = 0; r < rounds; r++) {
    progress(`consultant: workload run ${r + 1}/${rounds}: bare`);
    let st = stealNow();
    const b = (await workload(reps)).reps.map((x) => x.ms);
    bareSteal.push(stealNow().share(st));
    bare.push(median(b));
    for (const mode of [MODES[0], MODES[2]]) {
      progress(`consultant: workload run ${r + 1}/${rounds}: ${mode.label}`);
      st = stealNow();
      const w = await workload(reps, mode);
      const steal = stealNow().share(st);
      // the repetitions that ran while the search did (started after it began, ended before it was complete),
      // against the same repetitions (by index) of this round's bare run: the JIT's progress is the same
      const idx = w.reps.map((x, i) => [x, i] as const).filter(([x]) => x.at - x.ms >= w.span![0] && x.at <= w.span![1]).map(([, i]) => i);
      const g = got.get(mode.label) ?? { during: [], slow: [], n: [], search: [], avg: [], steal: [] };
      got.set(mode.label, g);
      g.steal.push(steal);
      if (idx.length) {
        g.during.push(mean(idx.map((i) => w.reps[i].ms)));
        g.slow.push(mean(idx.map((i) => w.reps[i].ms)) / mean(idx.map((i) => b[i] ?? b[b.length - 1])) - 1);
      }
      g.n.push(idx.length);
      g.search.push(w.d!.searchSeconds ?? NaN);
      const obs = w.d!.cost.trace.filter((x) => x.t <= (w.d!.searchSeconds ?? Infinity)).map((x) => x.observed);
      g.avg.push(obs.reduce((a, x) => a + x, 0) / (obs.length || 1));
    }
  }
  wrows.push(['bare (no paranode)', '', '', fmt(median(bare), 0), '', '', bareSteal.map(pct).join(', ')]);
  for (const [label, g] of got) {
    wrows.push([`full search, ${label}`, fmt(median(g.search), 1), String(median(g.n)), fmt(median(g.during), 0),
      `${pct(median(g.slow))} (${g.slow.map(pct).join(', ')})`, pct(median(g.avg)), g.steal.map(pct).join(', ')]);
  }
  body.push('', `(b) \`bench/targets/work.js esprima ${reps}\` (esprima parses its own source again and again; the program times each parse) ` +
    'launched under a diagnosis with all hypotheses. Rep ms: the mean time of the parses that ran entirely while the search was going on ' +
    '(from its start until every refinement was decided; bare: the median parse). Slowdown: that mean against the mean of the same parses ' +
    `(by index) in the bare run of the same round, minus 1; median of ${rounds} rounds (each round's), the modes taking turns. ` +
    'Steal: the share of the machine\'s CPU time the hypervisor gave to others during each round\'s run (/proc/stat), a measure of how ' +
    'much the host\'s load moved between the runs compared.', '',
    table(['run', 'search s', 'parses during search', 'rep ms', 'slowdown', 'C_obs avg', 'steal per round'], wrows));
  const prow: string[][] = [];
  for (let r = 0; r < runs; r++) {
    progress(`consultant: esprima against V8's profiler, run ${r + 1}/${runs}`);
    const x = await againstProfiler(0.25);
    prow.push([String(r + 1), x.named, x.rank ? String(x.rank) : 'not in its top 10', x.top.join(', '), x.search === null ? 'not complete' : fmt(x.search, 1)]);
  }
  body.push('', '(c) `test/fixtures/profiled-parse.js`: esprima parses its own source again and again under V8\'s sampling profiler ' +
    '(an in-process inspector session, 0.5 ms interval) until the search is complete; `diagnose` with `cpu_bound` only, threshold 10%, ' +
    'limit 25%. The function the report ranks first, and its rank in the profiler\'s list by self time (matched by source line).', '',
    table(['run', 'named CPU-bound', 'V8 self-time rank', 'V8 top four by self time', 'search s'], prow));

  return { title: '9. The Performance Consultant under the cost limit (the cost-system paper\'s Figure 4)', body };
}

