// Shared helpers of the benchmark suite: target processes that speak line by
// line, statistics, and markdown tables.
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { InstructionParts, partsOfFile } from './callgrind-parts';

export const ROOT = path.resolve(__dirname, '..', '..');
export const TARGETS = path.join(ROOT, 'bench', 'targets');
export const FIXTURES = path.join(ROOT, 'test', 'fixtures');

export interface BenchOptions {
  quick: boolean;
  /** time limit (s) of LiveEdit planning on the large script */
  largeLimitS?: number;
}

/** Progress on stderr, so that stdout carries only the report. */
export function progress(msg: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A target process that answers commands on stdin with lines on stdout. */
export class Proc {
  out = '';
  err = '';
  private waiters: { re: RegExp; from: number; resolve: (m: RegExpMatchArray) => void; reject: (e: Error) => void }[] = [];
  readonly exited: Promise<number | null>;
  exitCode: number | null | undefined = undefined;
  exitSignal: NodeJS.Signals | null = null;

  constructor(readonly child: ChildProcess, readonly label: string) {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => { this.out += d; this.check(); });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => { this.err += d; });
    // 'close', not 'exit': by then stderr has been read to its end (a crash message included)
    this.exited = new Promise((r) => child.once('close', (c, sig) => {
      this.exitCode = c;
      this.exitSignal = sig;
      for (const w of this.waiters) w.reject(new Error(`${label} exited (${sig ?? `code ${c}`}) while waiting for ${w.re}; stderr: ${this.err.slice(-2000)}`));
      this.waiters = [];
      r(c);
    }));
  }

  static spawn(script: string, args: string[] = [], cwd = TARGETS, nodeArgs: string[] = []): Proc {
    const child = spawn(process.execPath, [...nodeArgs, script, ...args], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    return new Proc(child, path.basename(script));
  }

  get pid(): number { return this.child.pid!; }

  send(line: string): void { this.child.stdin!.write(line + '\n'); }

  /** Resolves when stdout after the current position matches `re`. */
  waitFor(re: RegExp, from = this.out.length, timeoutMs = 600000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      if (this.exitCode !== undefined) { reject(new Error(`${this.label} has exited (${this.exitSignal ?? `code ${this.exitCode}`}); stderr: ${this.err.slice(-2000)}`)); return; }
      const timer = setTimeout(() => reject(new Error(`${this.label}: no ${re} within ${timeoutMs} ms`)), timeoutMs);
      const w = { re, from, resolve: (m: RegExpMatchArray) => { clearTimeout(timer); resolve(m); }, reject: (e: Error) => { clearTimeout(timer); reject(e); } };
      this.waiters.push(w);
      this.check();
    });
  }

  request(line: string, re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray> {
    const p = this.waitFor(re, this.out.length, timeoutMs);
    this.send(line);
    return p;
  }

  private check(): void {
    this.waiters = this.waiters.filter((w) => {
      const m = this.out.slice(w.from).match(w.re);
      if (m) w.resolve(m);
      return !m;
    });
  }

  async stop(): Promise<void> {
    if (this.exitCode !== undefined) return;
    try { this.send('exit'); } catch { /* closed */ }
    const t = setTimeout(() => this.child.kill('SIGKILL'), 3000);
    await this.exited;
    clearTimeout(t);
  }
}

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))));
  return s[i];
}

export function fmt(x: number, digits = 2): string {
  if (!Number.isFinite(x)) return 'n/a';
  if (Math.abs(x) >= 1000) return x.toFixed(0);
  if (Math.abs(x) >= 100) return x.toFixed(Math.min(digits, 1));
  return x.toFixed(digits);
}

export function ratio(x: number, base: number): string {
  if (!Number.isFinite(x) || !Number.isFinite(base) || base === 0) return 'n/a';
  const r = x / base;
  return r >= 100 ? `${r.toFixed(0)}` : r >= 10 ? r.toFixed(1) : r.toFixed(2);
}

/**
 * Seconds into a search when a function (not a module) was first found true:
 * the end of the first test window that held (a focus may name a thread too).
 */
export function firstFunctionSeconds(history: { focus: string; state: string; tests: { to: number; verdict: boolean }[] }[]): number | null {
  const isFn = (focus: string) => {
    const code = focus.split(',').find((p) => p.startsWith('/Code/'));
    return !!code && /^\/Code\/.+\/[^/]+$/.test(code) && !/\.(c|m)?js$|\.ts$/.test(code);
  };
  const at = history.filter((n) => n.state === 'true' && isFn(n.focus)).map((n) => Math.min(...n.tests.filter((t) => t.verdict).map((t) => t.to)));
  return at.length ? Math.min(...at) : null;
}

export function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/** One section of the report: a title, free text and tables, in markdown. */
export interface Section {
  title: string;
  body: string[];
}

export function timeMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** What the busy loop of bench/targets/spin.js saw while the tool did something. */
export interface SpinWindow {
  /** tool-side wall time of the action, ms */
  toolMs: number;
  /** the largest stop of the target's main thread that overlaps the action, ms (0: none over 0.1 ms) */
  stop: number;
  /** the sum of the stops over 0.1 ms that overlap the action, ms */
  stopSum: number;
  /** the largest garbage collection that overlaps the action, ms (0: none) */
  gc: number;
  /** the largest stop in the whole window, including the 100 ms before and after the action */
  windowMax: number;
}

const epochNow = (): number => performance.timeOrigin + performance.now();

/**
 * Run `action` while the target spins: 100 ms of spinning first, the action,
 * 100 ms after. Stops are attributed to the action when they overlap its
 * interval (with 1 ms of slack for the two processes' clocks).
 */
export async function spinWindow(p: Proc, action: () => Promise<unknown>): Promise<SpinWindow> {
  await p.request('spin', /spinning/);
  await sleep(100);
  const a0 = epochNow();
  const t0 = timeMs();
  await action();
  const toolMs = timeMs() - t0;
  const a1 = epochNow();
  await sleep(100);
  const m = await p.request('stop', /gap (\{.*\})\n/, 3600000);
  const r = JSON.parse(m[1]) as { max: number; gaps: [number, number][]; gcs: [number, number][] };
  const overlaps = ([s, d]: [number, number]) => s + d >= a0 - 1 && s <= a1 + 1;
  const inside = r.gaps.filter(overlaps).map(([, g]) => g);
  const gcs = r.gcs.filter(overlaps).map(([, d]) => d);
  return {
    toolMs,
    stop: inside.length ? Math.max(...inside) : 0,
    stopSum: inside.reduce((a, b) => a + b, 0),
    gc: gcs.length ? Math.max(...gcs) : 0,
    windowMax: r.max,
  };
}

/** A stop in ms for a table: "<0.1" when the busy loop saw none over its threshold. */
export function fmtStop(ms: number, digits = 2): string {
  return ms === 0 ? '<0.1' : fmt(ms, digits);
}

/**
 * Many short actions in one continuous spin of the target, 20 ms apart: for
 * each, the largest stop that overlaps it (0: none over 0.1 ms). Used for
 * actions of a few ms, whose stops are comparable to the machine's noise, so
 * that they can be compared with a null action of similar length.
 */
export async function spinSeries(p: Proc, steps: { name: string; fn: () => Promise<unknown> }[]): Promise<Map<string, { stop: number; toolMs: number; gc: number }[]>> {
  await p.request('spin', /spinning/);
  await sleep(100);
  const marks: { name: string; a0: number; a1: number }[] = [];
  for (const st of steps) {
    const a0 = epochNow();
    await st.fn();
    marks.push({ name: st.name, a0, a1: epochNow() });
    await sleep(20);
  }
  await sleep(80);
  const m = await p.request('stop', /gap (\{.*\})\n/, 3600000);
  const r = JSON.parse(m[1]) as { gaps: [number, number][]; gcs: [number, number][] };
  const out = new Map<string, { stop: number; toolMs: number; gc: number }[]>();
  for (const { name, a0, a1 } of marks) {
    const overlaps = ([s, d]: [number, number]) => s + d >= a0 - 1 && s <= a1 + 1;
    const inside = r.gaps.filter(overlaps).map(([, g]) => g);
    const gcs = r.gcs.filter(overlaps).map(([, d]) => d);
    if (!out.has(name)) out.set(name, []);
    out.get(name)!.push({ stop: inside.length ? Math.max(...inside) : 0, toolMs: a1 - a0, gc: gcs.length ? Math.max(...gcs) : 0 });
  }
  return out;
}

/**
 * Instructions the whole process executes (callgrind) for `node --predictable
 * <nodeArgs> work.js <lib> <reps>` in bench/targets: sections 6 and dormant.
 * --predictable: V8 without concurrent compilation or parallel GC, so the count repeats (to 0.002 %).
 */
export async function callgrindWork(lib: string, reps: number, label: string, nodeArgs: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return callgrindRun(lib, reps, label, nodeArgs, env, (_, total) => total);
}

/** The same count split into the program's own instructions, V8's compilers' and the collector's (callgrind-parts.ts). */
export async function callgrindWorkParts(lib: string, reps: number, label: string, nodeArgs: string[], env: NodeJS.ProcessEnv = process.env): Promise<InstructionParts> {
  return callgrindRun(lib, reps, label, nodeArgs, env, (out) => partsOfFile(out));
}

/** Run the work under callgrind and read its output file (removed after) with `read`. */
async function callgrindRun<T>(lib: string, reps: number, label: string, nodeArgs: string[], env: NodeJS.ProcessEnv, read: (out: string, total: number) => T): Promise<T> {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-cg-')), 'cg.out');
  const child = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${out}`, '--smc-check=all-non-file',
    process.execPath, '--predictable', ...nodeArgs, 'work.js', lib, String(reps)], { cwd: TARGETS, stdio: ['ignore', 'ignore', 'pipe'], env });
  let err = '';
  child.stderr!.on('data', (d) => { err += d; });
  const code = await new Promise<number | null>((r) => child.once('close', r));
  const m = /Collected : (\d+)/.exec(err);
  try {
    if (code !== 0 || !m) throw new Error(`callgrind on work.js ${lib} ${reps} (${label}) failed (${code}): ${err.slice(-300)}`);
    return read(out, Number(m[1]));
  } finally {
    fs.rmSync(path.dirname(out), { recursive: true, force: true });
  }
}
