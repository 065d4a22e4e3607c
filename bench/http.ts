// A loaded HTTP server (issue #15): bench/targets/http-server.js (Fastify; marked,
// sanitize-html and Handlebars in its article route) under a 10-connection load
// generator (autocannon) on loopback, on each supported Node, started plainly
// (attach: unprepared) and with the dormant agent (prepared at load). In one
// server process, three windows in turn, each under the same load:
//   before   the plain server
//   during   `paranode diagnose --max-overhead 5% attach <pid>` runs (attach,
//            search, detach), with the observed cost it reports
//   after    the server once paranode has gone
// Beside it a control server of the same Node and mode, loaded in the same windows
// and never attached: the host's drift (as large as the effect on these shared
// cores) cancels in the ratios against it, throughput and CPU time per request.
// Each repeated three times, interleaved; a crash or a failed request is stated.
// Beside each run, the same windows on a new pair with no tool: what a single run's
// ratio moves by on the host without paranode (the tolerance a run is judged with).
// Beside it the same load on a server started with --cpu-prof: its throughput
// and V8's top self-time functions, and whether diagnose named them.
// `npm run bench -- --only http`, or: node dist/bench/http.js [--quick] [--nodes 22,26] [--modes unprepared] [--reps 3] [--no-profile] [--no-sham]
import { execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
// eslint-disable-next-line @typescript-eslint/no-require-imports
import autocannon = require('autocannon');
import { BenchOptions, fmt, median, Proc, progress, ROOT, Section, table, TARGETS } from './lib';

export const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
export const AGENT = path.join(ROOT, 'dist', 'src', 'agent', 'dormant.js');
const SERVER = path.join(TARGETS, 'http-server.js');
const CONNECTIONS = 10;
/** the core the measured server and its control share (the rest of the run on core 0) */
const SERVERS_CPU = 1;
/** the second of a diagnose session from which its search runs without the attach */
const STEADY_FROM = 10;

export interface Load {
  rps: number; p99: number; errors: number; non2xx: number; slowestSecond: number; requests: number;
  /** the server's CPU time (all its threads, user and system) per request, ms; when its pid was given */
  cpuPerRequest?: number;
  /** requests answered in each whole second */
  perSecond: number[];
  /** each response's time (ms since the load started) and latency (ms), in order */
  responses: { at: number[]; ms: number[] };
  /** when the load started, ms since the epoch */
  startedAt: number;
}

/** The 99th percentile of the latencies of the responses answered from `from` to `to` (ms since the load started), or NaN where none were. */
export function p99Between(l: Load, from: number, to: number): number {
  const ms = l.responses.ms.filter((_, i) => l.responses.at[i] >= from && l.responses.at[i] < to).sort((a, b) => a - b);
  return ms.length ? ms[Math.min(ms.length - 1, Math.ceil(0.99 * ms.length) - 1)] : NaN;
}

/**
 * A process's CPU time so far, ms (user + system, all threads; /proc's clock ticks of 10 ms),
 * or with `children` that of its children waited for.
 */
export function cpuMs(pid: number | 'self', children = false): number {
  let stat: string;
  try { stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { return NaN; } // it has died
  // fields after the command name, which may hold spaces: utime, stime, cutime, cstime are the 12th to 15th
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (children ? Number(f[13]) + Number(f[14]) : Number(f[11]) + Number(f[12])) * 10;
}

export const nodeBin = (v: string) => path.join(ROOT, 'node_modules', `node${v}`, 'bin', 'node');

/** @param cpu keep the server on this core (`taskset`, which execs it: the pid is the server's) */
export function startServer(v: string, nodeArgs: string[], env: NodeJS.ProcessEnv = process.env, cpu?: number): Proc {
  const argv = [nodeBin(v), ...nodeArgs, SERVER, '0'];
  const child = cpu === undefined ? spawn(argv[0], argv.slice(1), { cwd: TARGETS, stdio: ['pipe', 'pipe', 'pipe'], env })
    : spawn('taskset', ['-c', String(cpu), ...argv], { cwd: TARGETS, stdio: ['pipe', 'pipe', 'pipe'], env });
  return new Proc(child, `http-server (Node ${v})`);
}

/**
 * `seconds` of load on the article route; per-second counts give the slowest second.
 * With the server's pid, also its CPU time per request over the window.
 */
export async function load(port: number, seconds: number, pid?: number): Promise<Load> {
  const perSecond: number[] = [];
  const responses = { at: [] as number[], ms: [] as number[] };
  const t0 = performance.now();
  // (the wall clock, as the report's startedAt: this process's monotonic one drifts from it over a bench's hour)
  const startedAt = Date.now();
  const cpu0 = pid === undefined ? 0 : cpuMs(pid);
  const r: any = await new Promise((resolve, reject) => {
    const instance = autocannon({
      url: `http://127.0.0.1:${port}`, connections: CONNECTIONS, duration: seconds,
      requests: [{ method: 'GET', setupRequest: (req: any) => ({ ...req, path: `/article/${1 + Math.floor(Math.random() * 50)}` }) }],
    }, (err, result) => (err ? reject(err) : resolve(result)));
    (instance as unknown as NodeJS.EventEmitter).on('tick', (t: { counter: number }) => perSecond.push(t.counter));
    (instance as unknown as NodeJS.EventEmitter).on('response', (_c: unknown, _status: number, _bytes: number, ms: number) => {
      responses.at.push(performance.now() - t0);
      responses.ms.push(ms);
    });
  });
  return {
    rps: r.requests.average, p99: r.latency.p99, errors: r.errors + r.timeouts, non2xx: r.non2xx,
    // whole seconds only: the last tick may come after the load has ended
    slowestSecond: Math.min(...perSecond.slice(0, Math.max(1, seconds - 1))), requests: r.requests.total,
    cpuPerRequest: pid === undefined || !r.requests.total ? undefined : (cpuMs(pid) - cpu0) / r.requests.total,
    perSecond: perSecond.slice(0, seconds), responses, startedAt,
  };
}

interface DiagnoseRun {
  load: Load; toolCpuMs: number; /** when the tool ended, ms after the load (and the tool) started */ exitedAt: number; observedAvg: number | null; observedMax: number | null;
  /** the report's cost windows (end s, observed) and its search's start (ms since the epoch) */
  trace: { t: number; observed: number }[]; searchStartedAt: number | null;
  /** what the report says of the session before its search (its length, the tool's work in it, s) */
  beforeSearch: { seconds: number; busiest: number } | null;
  /** what the report says of the search's end after its last window (its length, the tool's work in it, s) */
  afterSearch: { seconds: number; busiest: number } | null;
  /** what the report says of the detach (its start, s after the search's; its length, the main thread's time in it, s) */
  detach: { at: number; seconds: number; main: number } | null;
  named: string[]; hottest: string[]; exitCode: number | null; out: string;
}

/** `paranode diagnose` attached for `seconds`, under load the whole time. */
async function diagnoseUnderLoad(pid: number, port: number, seconds: number, json: string): Promise<DiagnoseRun> {
  // the tool's own CPU time: this process's waited-for children's grows by it once it is reaped
  const children0 = cpuMs('self', true);
  const tool = spawn(process.execPath, [CLI, 'diagnose', '-q', '--max-overhead', '5%', '--duration', String(seconds), '--json', json, 'attach', String(pid)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  tool.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  tool.stderr!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  const started = performance.now();
  let exitedAt = NaN;
  const exited = new Promise<number | null>((r) => tool.once('close', (c) => { exitedAt = performance.now() - started; r(c); }));
  const l = await load(port, seconds + 4, pid);
  const exitCode = await exited;
  const toolCpuMs = cpuMs('self', true) - children0;
  let d: any = null;
  try { d = JSON.parse(fs.readFileSync(json, 'utf8')); } catch { /* stated below */ }
  const named = (d?.bottlenecks ?? []).map((b: any) => `${b.hypothesis} ${b.focus}${b.source ? ` (${b.source})` : ''}`);
  const hottest = (d?.hottest ?? []).filter((h: any) => h.thread === 'main').map((h: any) => `${h.function} ${fmt(h.self * 100, 0)} %`);
  return { load: l, exitedAt, observedAvg: d?.cost?.observed?.avg ?? null, observedMax: d?.cost?.observed?.max ?? null, trace: d?.cost?.trace ?? [], searchStartedAt: d?.startedAt ?? null, beforeSearch: d?.cost?.beforeSearch ?? null, afterSearch: d?.cost?.afterSearch ?? null, detach: d?.cost?.detach ?? null, named, hottest, exitCode, out, toolCpuMs };
}

/** Responses of a load answered from `from` to `to`, ms since the epoch. */
function answered(l: Load, from: number, to: number): number {
  let n = 0;
  for (const at of l.responses.at) if (l.startedAt + at >= from && l.startedAt + at < to) n++;
  return n;
}

/** What the server lost in a stretch of its session, against its control's requests in the same stretch (a share of its requests; `base`: server ÷ control before). */
function lostIn(d: DiagnoseRun, control: Load, base: number, from: number, to: number): number {
  const c = answered(control, from, to);
  return c ? 1 - answered(d.load, from, to) / c / base : NaN;
}

/**
 * The observed cost diagnose reported against what the server lost in the same windows: the
 * attach (from the tool's start to its search's, no window), the search's windows before the
 * session's STEADY_FROM-th second and from it (each the time-weighted mean of its windows), the
 * search's end (from the end of the last window, as long as the report says), the report's making
 * (from there to the detach), the detach (as long as the report says) and the tool's exit (from
 * there to its end). Seconds and fractions; null where not known.
 */
interface CostAgainstLoss {
  attachS: number; attachLost: number; early: [number, number, number]; late: [number, number, number];
  endS: number; endLost: number; reportS: number; reportLost: number; detachS: number; detachLost: number; exitS: number; exitLost: number;
}

function costAgainstLoss(d: DiagnoseRun, control: Load, base: number): CostAgainstLoss | null {
  if (d.searchStartedAt === null || d.trace.length < 2) return null;
  const s0 = d.searchStartedAt, l0 = d.load.startedAt;
  const steadyAt = l0 + STEADY_FROM * 1000;
  const acc = { early: [0, 0, 0], late: [0, 0, 0] };
  // the first window's start is not in the report: from the second on
  for (let i = 1; i < d.trace.length; i++) {
    const from = s0 + d.trace[i - 1].t * 1000, to = s0 + d.trace[i].t * 1000, dt = to - from;
    const lost = lostIn(d, control, base, from, to);
    if (!Number.isFinite(lost)) continue;
    const a = from < steadyAt ? acc.early : acc.late;
    a[0] += d.trace[i].observed * dt; a[1] += lost * dt; a[2] += dt;
  }
  const mean = (a: number[]): [number, number, number] => (a[2] ? [a[0] / a[2], a[1] / a[2], a[2] / 1000] : [NaN, NaN, 0]);
  const last = s0 + d.trace[d.trace.length - 1].t * 1000;
  const end = last + (d.afterSearch?.seconds ?? 0) * 1000;
  const detachFrom = d.detach ? s0 + d.detach.at * 1000 : NaN, detachTo = d.detach ? detachFrom + d.detach.seconds * 1000 : NaN;
  return {
    attachS: (s0 - l0) / 1000, attachLost: lostIn(d, control, base, l0, s0),
    early: mean(acc.early), late: mean(acc.late),
    endS: (end - last) / 1000, endLost: d.afterSearch ? lostIn(d, control, base, last, end) : NaN,
    ...stretch('report', end, detachFrom),
    ...stretch('detach', detachFrom, detachTo),
    ...stretch('exit', detachTo, l0 + d.exitedAt),
  };
  function stretch<K extends string>(k: K, from: number, to: number): Record<`${K}S` | `${K}Lost`, number> {
    const ok = Number.isFinite(from) && Number.isFinite(to);
    return { [`${k}S`]: ok ? (to - from) / 1000 : NaN, [`${k}Lost`]: ok ? lostIn(d, control, base, from, to) : NaN } as Record<`${K}S` | `${K}Lost`, number>;
  }
}

export interface ProfileTop { name: string; share: number }

/** V8's sampling profiler: self time per function (by name and script), the top ones. */
export function topSelf(file: string, n: number): { top: ProfileTop[]; gc: number } {
  const p = JSON.parse(fs.readFileSync(file, 'utf8'));
  const self = new Map<string, number>();
  let total = 0, gc = 0;
  for (const node of p.nodes) {
    const cf = node.callFrame;
    const hits = node.hitCount ?? 0;
    if (cf.functionName === '(idle)' || cf.functionName === '(program)') continue;
    total += hits;
    if (cf.functionName === '(garbage collector)') { gc += hits; continue; }
    // an anonymous function by its start line, as paranode names it
    const key = `${cf.functionName || `(anonymous)@${cf.lineNumber + 1}`} ${cf.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/bench\/targets\//, '')}`;
    self.set(key, (self.get(key) ?? 0) + hits);
  }
  const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, h]) => ({ name, share: h / total }));
  return { top, gc: gc / total };
}

async function cpuProfRun(v: string, seconds: number): Promise<{ plain: Load; prof: Load; top: ProfileTop[]; gc: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-cpuprof-'));
  try {
    const plain = startServer(v, [], process.env, SERVERS_CPU);
    const port1 = Number((await plain.waitFor(/listening (\d+)/))[1]);
    await load(port1, 2);
    const plainLoad = await load(port1, seconds);
    plain.child.kill('SIGTERM');
    await plain.exited;
    const s = startServer(v, ['--cpu-prof', '--cpu-prof-dir', dir], process.env, SERVERS_CPU);
    const port = Number((await s.waitFor(/listening (\d+)/))[1]);
    await load(port, 2);
    const prof = await load(port, seconds);
    s.child.kill('SIGTERM');
    await s.exited;
    const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    const { top, gc } = file ? topSelf(path.join(dir, file), 5) : { top: [], gc: 0 };
    return { plain: plainLoad, prof, top, gc };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A server of the Node and mode named on SERVERS_CPU, and its control: a second one of the same Node and mode, listening; `both` loads them alike. */
async function startPair(v: string, mode: 'unprepared' | 'prepared', env: NodeJS.ProcessEnv) {
  const nodeArgs = mode === 'prepared' ? ['--import', AGENT] : [];
  const server = startServer(v, nodeArgs, env, SERVERS_CPU);
  // the control, loaded in the same windows and never attached: what the host does to both (a
  // neighbour, the clock) cancels in the ratio against it; what paranode does to its target does not
  const control = startServer(v, nodeArgs, env, SERVERS_CPU);
  const [port, cport] = await Promise.all([server, control].map(async (p) => Number((await p.waitFor(/listening (\d+)/))[1])));
  const both = (seconds: number) => Promise.all([load(port, seconds, server.pid), load(cport, seconds, control.pid)]);
  await both(2); // warm-up
  return { server, control, port, cport, both };
}

/** One run's ratios against its control (see Paired): the server's windows before, during and after (null: it died), its control's. */
function pairedRatios(before: Load, during: Load, after: Load | null, cBefore: Load, cDuring: Load, cAfter: Load): Omit<Paired, 'mode'> {
  const paired = (a: Load | null, b: Load, ca: Load, cb: Load) => (a ? (a.rps / b.rps) / (ca.rps / cb.rps) : NaN);
  const cpuPaired = (a: Load | null, b: Load, ca: Load, cb: Load) => (a ? (a.cpuPerRequest! / b.cpuPerRequest!) / (ca.cpuPerRequest! / cb.cpuPerRequest!) : NaN);
  // the search without the attach: from the STEADY_FROM-th second of the session to the end of the load's
  const sum = (xs: number[]) => xs.slice(STEADY_FROM).reduce((a, b) => a + b, 0);
  const steady = (sum(during.perSecond) / sum(cDuring.perSecond)) / (before.rps / cBefore.rps);
  return { steady, during: paired(during, before, cDuring, cBefore), after: paired(after, before, cAfter, cBefore), cpuDuring: cpuPaired(during, before, cDuring, cBefore), cpuAfter: cpuPaired(after, before, cAfter, cBefore) };
}

/**
 * A run of a new pair with no tool in its "during" window: the same windows, loads and core as a
 * run under diagnose. Its ratios are what a single run's move by on this host without paranode.
 */
async function shamRun(v: string, mode: 'unprepared' | 'prepared', env: NodeJS.ProcessEnv, window: number, seconds: number): Promise<Omit<Paired, 'mode'>> {
  progress(`http: Node ${v}: ${mode}, the same windows with no tool`);
  const { server, control, both } = await startPair(v, mode, env);
  try {
    const [before, cBefore] = await both(window);
    const [during, cDuring] = await both(seconds + 4);
    const [after, cAfter] = await both(window);
    return pairedRatios(before, during, after, cBefore, cDuring, cAfter);
  } finally {
    for (const p of [server, control]) p.child.kill('SIGTERM');
    await Promise.all([server.exited, control.exited]);
  }
}

export const loadCell = (l: Load) => `${fmt(l.rps, 0)} req/s, p99 ${fmt(l.p99, 0)} ms, slowest second ${l.slowestSecond}${l.errors || l.non2xx ? `, **${l.errors} errors, ${l.non2xx} non-2xx**` : ''}`;

export async function benchHttp(opts: BenchOptions & { nodes?: string[]; modes?: ('unprepared' | 'prepared')[]; reps?: number; noProfile?: boolean; noSham?: boolean }): Promise<Section> {
  const versions = opts.nodes ?? ['22', '24', '26'];
  const modes = opts.modes ?? ['unprepared', 'prepared'];
  const reps = opts.reps ?? (opts.quick ? 1 : 3);
  const window = opts.quick ? 6 : 10;
  const diagnoseSeconds = opts.quick ? 15 : 30;
  const rows: string[][] = [];
  const namedRows: string[][] = [];
  const profRows: string[][] = [];
  const pairedRows: string[][] = [];
  const latencyRows: string[][] = [];
  const costRows: string[][] = [];
  /** per mode: the search windows' observed and lost, time-weighted (sums, and their seconds) */
  const costSums = new Map<string, { observed: number; lost: number; s: number }>();
  const pairs: Paired[] = [];
  /** runs of the same windows with no tool, one beside each run under diagnose (not in --quick) */
  const sham = !opts.quick && !opts.noSham;
  const shams: (Paired & { v: string; rep: number })[] = [];
  const tops = new Map<string, ProfileTop[]>();
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-http-cache-'));
  // the load generators and paranode on one core, the server and its control sharing the other:
  // the scheduler splits that core between them, so each sees the same neighbours
  execFileSync('taskset', ['-a', '-cp', String(1 - SERVERS_CPU), String(process.pid)], { stdio: 'ignore' });
  try {
    for (const v of versions) {
      if (!opts.noProfile) {
        progress(`http: Node ${v}: --cpu-prof beside a plain server`);
        const cp = await cpuProfRun(v, window);
        tops.set(v, cp.top);
        profRows.push([v, loadCell(cp.plain), loadCell(cp.prof), fmt(cp.prof.rps / cp.plain.rps, 3),
          cp.top.map((t) => `${t.name} ${fmt(t.share * 100, 1)} %`).join('; ') + `; GC ${fmt(cp.gc * 100, 1)} %`]);
      }
      for (let rep = 1; rep <= reps; rep++) {
        for (const mode of modes) {
          progress(`http: Node ${v}: ${mode}, repetition ${rep} of ${reps}`);
          const env = { ...process.env, PARANODE_CACHE_DIR: cache };
          const { server, control, port, cport, both } = await startPair(v, mode, env);
          const [before, cBefore] = await both(window);
          const json = path.join(cache, `diagnose-${v}-${mode}-${rep}.json`);
          const [d, cDuring] = await Promise.all([diagnoseUnderLoad(server.pid, port, diagnoseSeconds, json), load(cport, diagnoseSeconds + 4, control.pid)]);
          const alive = server.exitCode === undefined;
          const [after, cAfter] = alive ? await both(window) : [null, await load(cport, window, control.pid)];
          const fate = alive ? 'alive' : `**died: ${server.exitSignal ?? `exit ${server.exitCode}`}**`;
          for (const p of [server, control]) p.child.kill('SIGTERM');
          await Promise.all([server.exited, control.exited]);
          const p = pairedRatios(before, d.load, after, cBefore, cDuring, cAfter);
          pairs.push({ mode, ...p });
          // the same pair of windows with no tool: what a single run's ratio moves by without paranode
          if (sham) shams.push({ mode, v, rep, ...await shamRun(v, mode, env, window, diagnoseSeconds) });
          // p99 by phase of the session: the attach (its first STEADY_FROM s), the search, the detach
          // (from the duration's end to a second after the tool ended), the control's in the same windows
          const detachEnd = Math.min((diagnoseSeconds + 4) * 1000, (Number.isFinite(d.exitedAt) ? d.exitedAt : Infinity) + 1000);
          const phases: [number, number][] = [[0, STEADY_FROM * 1000], [STEADY_FROM * 1000, diagnoseSeconds * 1000], [diagnoseSeconds * 1000, detachEnd]];
          const p99 = (l: Load | null) => (l ? fmt(p99Between(l, 0, Infinity), 0) : '–');
          latencyRows.push([v, mode, String(rep), `${p99(before)} (${p99(cBefore)})`,
            ...phases.map(([a, b]) => `${fmt(p99Between(d.load, a, b), 0)} (${fmt(p99Between(cDuring, a, b), 0)})`),
            `${p99(after)} (${p99(cAfter)})`, fmt(d.exitedAt / 1000, 1)]);
          const ca = costAgainstLoss(d, cDuring, before.rps / cBefore.rps);
          const pc = (x: number) => (Number.isFinite(x) ? fmt(x * 100, 1) : '–');
          if (ca) {
            const m = costSums.get(mode) ?? { observed: 0, lost: 0, s: 0 };
            for (const [o, l, sec] of [ca.early, ca.late]) if (sec) { m.observed += o * sec; m.lost += l * sec; m.s += sec; }
            costSums.set(mode, m);
          }
          const pre = d.beforeSearch;
          costRows.push(ca ? [v, mode, String(rep), `${fmt(ca.attachS, 1)} s: ${pc(ca.attachLost)} %`,
            pre ? `${fmt(pre.busiest * 1000, 0)} ms in ${fmt(pre.seconds * 1000, 0)} ms (${pc(pre.busiest / pre.seconds)} %)` : '–',
            `${pc(ca.early[0])} % / ${pc(ca.early[1])} % (${fmt(ca.early[2], 1)} s)`, `${pc(ca.late[0])} % / ${pc(ca.late[1])} % (${fmt(ca.late[2], 1)} s)`, `${fmt(ca.endS, 1)} s: ${pc(ca.endLost)} %`,
            d.afterSearch ? `${fmt(d.afterSearch.busiest * 1000, 0)} ms in ${fmt(d.afterSearch.seconds * 1000, 0)} ms (${pc(d.afterSearch.busiest / d.afterSearch.seconds)} %)` : '–',
            ...[[ca.reportS, ca.reportLost], [ca.detachS, ca.detachLost]].map(([sec, lost]) => `${fmt(sec * 1000, 0)} ms: ${pc(lost)} %`),
            d.detach ? `${fmt(d.detach.main * 1000, 0)} ms in ${fmt(d.detach.seconds * 1000, 0)} ms` : '–', `${fmt(ca.exitS * 1000, 0)} ms: ${pc(ca.exitLost)} %`]
            : [v, mode, String(rep), 'no report', ...Array<string>(10).fill('–')]);
          const ms = (l: Load | null) => (l?.cpuPerRequest === undefined || Number.isNaN(l.cpuPerRequest) ? '–' : fmt(l.cpuPerRequest, 2));
          pairedRows.push([v, mode, String(rep), `${fmt(cBefore.rps, 0)} / ${fmt(cDuring.rps, 0)} / ${fmt(cAfter.rps, 0)}`, fmt(d.load.rps / before.rps, 3),
            `**${fmt(p.during, 3)}**`, fmt(p.steady, 3), after ? fmt(p.after, 3) : '–', `${ms(before)} → ${ms(d.load)} → ${ms(after)}`, `${ms(cBefore)} → ${ms(cDuring)} → ${ms(cAfter)}`,
            fmt(p.cpuDuring, 3), after ? fmt(p.cpuAfter, 3) : '–', fmt(d.toolCpuMs / 1000, 1)]);
          rows.push([v, mode, String(rep), loadCell(before), loadCell(d.load), after ? loadCell(after) : '–', fmt(d.load.rps / before.rps, 3),
            d.observedAvg === null ? `no report (exit ${d.exitCode}): ${d.out.trim().split('\n').pop()}` : `${fmt(d.observedAvg * 100, 2)} % (max ${fmt((d.observedMax ?? 0) * 100, 1)} %)`, fate]);
          const top = tops.get(v)?.[0];
          const topName = top?.name.split(' ')[0] ?? '';
          const inHottest = topName ? (d.hottest.some((h) => h.split(' ')[0].endsWith(`/${topName}`)) ? 'yes' : 'no') : '–';
          namedRows.push([v, mode, String(rep), d.named.slice(0, 4).join('; ') || '(nothing)', topName ? (d.named.some((n) => n.includes(`/${topName}`)) ? `yes (${topName})` : `no (${topName})`) : '–',
            d.hottest.join('; ') || '(no stack samples)', inHottest]);
        }
      }
    }
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
    execFileSync('taskset', ['-a', '-cp', `0-${os.cpus().length - 1}`, String(process.pid)], { stdio: 'ignore' });
  }
  const md = [
    `\`${SERVER.slice(ROOT.length + 1)}\` (Fastify; its article route runs marked, sanitize-html and a Handlebars layout) under autocannon, ${CONNECTIONS} connections on loopback, ` +
    `GET /article/<1..50>. The server runs on the Node named; the load generator and paranode run on the Node running the suite (${process.version}), on the same ${os.cpus().length} cores. ` +
    `One server process per row: ${window} s of load plainly ("before"), then \`paranode diagnose -q --max-overhead 5% --duration ${diagnoseSeconds} attach <pid>\` under load ` +
    `(the load runs ${diagnoseSeconds + 4} s: attach, search and detach), then ${window} s again ("after"). "prepared": the server started with \`--import paranode/agent\` (dormant agent); ` +
    `"unprepared": started plainly, attached through the inspector. Ratio = during ÷ before. Observed cost: what diagnose reported (its average over windows). ` +
    'Beside each server a control: a second server of the same Node and mode, started with it, loaded the same way in the same windows (its own load generator of ' +
    `${CONNECTIONS} connections), never attached. The server and its control share core ${SERVERS_CPU} (\`taskset\`), so the scheduler splits that core between them; ` +
    `the load generators and paranode run on the other core (paranode's own CPU time is given).`,
    '',
    table(['Node', 'server', 'rep.', 'before', 'during diagnose', 'after', 'during ÷ before', 'observed cost (diagnose)', 'server'], rows),
    '',
    'Against the control (same windows): "over the control\'s" = (server during ÷ before) ÷ (control during ÷ before), so what the host did to both cancels; ' +
    `"from its ${STEADY_FROM}th second": the same over the session's seconds from the ${STEADY_FROM}th to the end of the load (the search without the attach); ` +
    'CPU per request = the server process\'s CPU time (every thread, user and system, from /proc) ÷ requests answered in the window, and its ratio over the control\'s likewise (above 1: paranode made a request dearer):',
    '',
    table(['Node', 'server', 'rep.', 'control req/s before / during / after', 'during ÷ before', 'throughput during, over the control\'s', `from its ${STEADY_FROM}th second`, 'after, over the control\'s',
      'CPU ms per request before → during → after', 'control\'s CPU ms per request', 'CPU per request during, over the control\'s', 'after, over the control\'s', 'paranode\'s CPU s'], pairedRows),
    '',
    ...pairedSummary(pairs),
    ...(shams.length ? ['', ...shamSummary(pairs, shams)] : []),
    '',
    `p99 latency (ms) of the server by phase, its control's in the same window in parentheses: before; the attach (the session's first ${STEADY_FROM} s); ` +
    `the search (from its ${STEADY_FROM}th second to the end of \`--duration\`); the detach (from the end of \`--duration\` to a second after the tool ended, ` +
    `or to the end of the load); after. The tool's end, in seconds from its start, is given:`,
    '',
    table(['Node', 'server', 'rep.', 'before', 'attach', 'search', 'detach', 'after', 'the tool ended (s)'], latencyRows),
    '',
    'The observed cost diagnose reported against what the server lost in the same time (a share of its requests, against the control\'s in the same stretch and the two ' +
    'servers\' ratio before): the attach, from the tool\'s start to its search\'s (no cost window covers it: its length and the loss), and what the report says of ' +
    'the session before its search (`beforeSearch`: the tool\'s work in it, of the main thread, at the calibration\'s high prices, in the session\'s time before the search, which starts after the handshake); the search\'s cost windows ' +
    `(about 0.6 s each, the first left out: its start is not reported) before the session's ${STEADY_FROM}th second and from it, observed / lost, each time-weighted over its windows; ` +
    'the search\'s end, from the last window\'s end for as long as the report says (its tests\' last running and their taking out: its length and the loss), and what the report says of it ' +
    '(`afterSearch`: the tool\'s work in it, of the busiest thread, at the high prices); then, each by its length and the loss, the report\'s making (to the detach\'s start), ' +
    'the detach, with what the report says of it (`detach`: the main thread\'s time in it as the tool times it, in the detach\'s own length), and the tool\'s exit (from the detach\'s end to the tool\'s):',
    '',
    table(['Node', 'server', 'rep.', 'attach: length, lost', 'reported before the search', `search to the ${STEADY_FROM}th s: observed / lost`, `from the ${STEADY_FROM}th s: observed / lost`, 'search\'s end: length, lost', 'reported of it', 'report: length, lost', 'detach: length, lost', 'reported of the detach', 'exit: length, lost'], costRows),
    '',
    ...[...costSums].map(([mode, m]) => `- ${mode}: over every run's search windows (${fmt(m.s, 0)} s), observed ${fmt(m.observed / m.s * 100, 2)} %, lost ${fmt(m.lost / m.s * 100, 2)} %`),
    '',
    'What diagnose named (its first four bottlenecks), and whether V8\'s top self-time function of the same load (below) is among them:',
    '',
    table(['Node', 'server', 'rep.', 'diagnose named', 'V8\'s top function named', 'diagnose\'s hottest functions (main thread, own code)', 'V8\'s top among them'], namedRows),
    '',
    `V8's sampling profiler (\`--cpu-prof\`) on the same server and load, ${window} s, against a plain server just before (separate processes); self time per function over all non-idle samples:`,
    '',
    table(['Node', 'plain', '--cpu-prof', 'ratio', 'top self time (V8)'], profRows),
  ];
  return { title: 'A loaded HTTP server: throughput and p99 under diagnose, against --cpu-prof', body: md };
}

/** One run's ratios against its control (see benchHttp). */
interface Paired { mode: string; during: number; steady: number; after: number; cpuDuring: number; cpuAfter: number }

/** Per mode: the range of the paired ratios and how many runs kept 0.95 of the control's throughput. */
function pairedSummary(pairs: Paired[]): string[] {
  const range = (xs: number[]) => {
    const ok = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
    return ok.length ? `${fmt(ok[0], 3)}-${fmt(ok[ok.length - 1], 3)} (median ${fmt(ok[ok.length >> 1], 3)})` : '–';
  };
  return [...new Set(pairs.map((p) => p.mode))].map((mode) => {
    const ps = pairs.filter((p) => p.mode === mode);
    const kept = ps.filter((p) => p.during >= 0.95).length;
    return `- ${mode}: throughput during, over the control's, ${range(ps.map((p) => p.during))}, ${kept} of ${ps.length} at 0.95 or more; ` +
      `from the session's ${STEADY_FROM}th second ${range(ps.map((p) => p.steady))}, ${ps.filter((p) => p.steady >= 0.95).length} at 0.95 or more; ` +
      `after ${range(ps.map((p) => p.after))}; CPU per request during, over the control's, ${range(ps.map((p) => p.cpuDuring))}, after ${range(ps.map((p) => p.cpuAfter))}`;
  });
}

/**
 * The runs with no tool against those under diagnose: each tool-free run's ratios (a table), the
 * widest fall under 1 of a tool-free run's ratio over the session (the tolerance a single run's
 * ratio is judged with: the host's own spread, measured in the same bench), and per mode how many
 * runs under diagnose kept 0.95 less that tolerance, with the two medians' difference (the tool's
 * effect by the median).
 */
function shamSummary(pairs: Paired[], shams: (Paired & { v: string; rep: number })[]): string[] {
  const tolerance = Math.max(0, ...shams.map((x) => 1 - x.during).filter(Number.isFinite));
  const lines = [
    `The same windows with no tool: beside each run above, a new server and control of the same Node and mode, loaded alike (warm-up, before, ` +
    'a "during" window as long as the diagnose run\'s load, after), nothing attached. Their ratios over the control\'s are what a single run\'s ratio moves by on this host without paranode:',
    '',
    table(['Node', 'server', 'rep.', 'throughput during, over the control\'s', `from its ${STEADY_FROM}th second`, 'after, over the control\'s', 'CPU per request during, over the control\'s'],
      shams.map((x) => [x.v, x.mode, String(x.rep), fmt(x.during, 3), fmt(x.steady, 3), fmt(x.after, 3), fmt(x.cpuDuring, 3)])),
    '',
    `- with no tool, the widest fall of a run's ratio under 1 over the session: **${fmt(tolerance * 100, 1)} points** (the tolerance a single run is judged with below)`,
  ];
  for (const mode of [...new Set(pairs.map((p) => p.mode))]) {
    const ps = pairs.filter((p) => p.mode === mode), ss = shams.filter((x) => x.mode === mode);
    if (!ss.length) continue;
    const md = median(ps.map((p) => p.during).filter(Number.isFinite)), ms = median(ss.map((x) => x.during).filter(Number.isFinite));
    lines.push(`- ${mode}: with no tool ${fmt(Math.min(...ss.map((x) => x.during)), 3)}-${fmt(Math.max(...ss.map((x) => x.during)), 3)} (median ${fmt(ms, 3)}); ` +
      `under diagnose median ${fmt(md, 3)}, **${ps.filter((p) => p.during >= 0.95 - tolerance).length} of ${ps.length} at 0.95 less the tolerance (${fmt(0.95 - tolerance, 3)}) or more**; ` +
      `the medians' difference ${fmt((ms - md) * 100, 1)} points (the limit: 5)`);
  }
  return lines;
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const value = (flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
  benchHttp({
    quick: args.includes('--quick'), noProfile: args.includes('--no-profile'), noSham: args.includes('--no-sham'), nodes: value('--nodes')?.split(','),
    modes: value('--modes')?.split(',') as ('unprepared' | 'prepared')[] | undefined, reps: value('--reps') ? Number(value('--reps')) : undefined,
  })
    .then((s) => process.stdout.write(`## ${s.title}\n\n${s.body.join('\n')}\n`))
    .catch((e) => { process.stderr.write(`${e.stack ?? e}\n`); process.exit(1); });
}
