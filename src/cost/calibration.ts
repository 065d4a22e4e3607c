// Calibration: what each instrumentation primitive and each way of reaching a
// point costs on this machine and Node version, measured once and kept in a
// configuration file (re-measured with `paranode calibrate`). Every cost is
// measured twice: in a host function V8 optimizes (the snippet is inlined into
// it: the least it can cost) and in one it never optimizes (the interpreter
// or baseline code: the most it costs). The observed cost brackets the real
// slowdown with these two.
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { PINNED_CLASS, RELAY_CLASS, SAMPLER_CLASS, STACK_SAMPLE_CLASS, SWITCH_CLASS, TOOL_CLASS } from '../agent/runtime';
import { calibrationFile, configDir, machineKey, readCalibrationEntry } from './calibration-file';
import { SAMPLE_INTERVAL_US } from '../agent/cpu-sampler';
import { mechanismNamed, Pair, ReachRates } from '../session/mechanisms/mechanism';
import { Session } from '../session/session';
import type { HandlerPrices } from '../agent/intrusion';

export type { Pair };

export interface Calibration {
  node: string;
  arch: string;
  cpu: string;
  host: string;
  measuredAt: string;
  /** reaching a handler: by slot, by wrapping a built-in, by breakpoint (priced by each Mechanism) */
  mechanism: ReachRates;
  /** counter ++, other counter update, predicate, wall and CPU timer start+stop, instance lookup ($file of a path) */
  primitive: { n: Pair; a: Pair; i: Pair; wallPair: Pair; cpuPair: Pair; v: Pair };
  /**
   * How many times slower a function's own code runs while it holds a
   * breakpoint (V8 never optimizes it then, even where the breakpoint is not
   * reached), [least, most] over the shapes of calibrate/pin.js.
   */
  pinned: Pair;
  /**
   * The same per shape: `arith` (a loop), `strings` (straight-line code calling
   * built-ins), `calls` (a loop calling a small helper). A function with no loop
   * runs each of its bytecodes once a call, as `strings` does, and is priced so.
   */
  pinnedShapes: Record<string, number>;
  /**
   * ns one switch of a slot guard costs when V8 had optimized code that read
   * it: the code is thrown away and runs slower until V8 optimizes it again
   * (calibrate/target.js's parser, its scanner switched), [low, high]: the
   * mean less and plus two standard errors.
   */
  switched: Pair;
  /**
   * ns a call-path profile's own work adds per call of a profiled function:
   * [inside the call's own time, inside its caller's] (the virtual times of
   * agent/call-paths subtract them), measured in this process in steady state.
   */
  pathOp: Pair;
  /**
   * ns of the sampled thread's own time one stack sample of V8's sampling profiler
   * takes (a signal, and a walk of its stack in the handler), [low, high]: the
   * mean less and plus two standard errors (calibrate/stack-sample.js).
   */
  stackSample: Pair;
  /**
   * The share of the time the calibration's targets could run that their threads waited for
   * a CPU instead (Linux schedstat; absent elsewhere and in calibrations made before it was
   * kept). Their loops are timed by the wall clock: a machine busy while they ran makes every
   * price read high (up to 2× seen on a shared 2-core machine), so over BUSY_SHARE it is said.
   */
  waited?: number;
}

/** a calibration whose targets waited for a CPU more than this share of their time is said to be measured on a busy machine */
export const BUSY_SHARE = 0.1;

/** What to tell of a calibration measured on a busy machine, or null. */
export function busyWarning(c: Calibration): string | null {
  if (c.waited === undefined || !(c.waited > BUSY_SHARE)) return null;
  return `the calibration of Node ${c.node} on this machine (${c.measuredAt}) was measured while the machine was busy: its targets waited for a CPU ` +
    `${(c.waited * 100).toFixed(0)} % of the time they could run, so its prices (and the observed cost they give) may read up to 2× high; ` +
    '`paranode calibrate` measures them again, best on a quiet machine';
}

/** [ns on a CPU, ns ready to run but waiting for one] of a process's main thread so far (Linux schedstat), or null where it cannot be read. */
export function threadWaits(pid: number): [number, number] | null {
  try {
    const f = fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ');
    const run = Number(f[0]), wait = Number(f[1]);
    return Number.isFinite(run) && Number.isFinite(wait) ? [run, wait] : null;
  } catch {
    return null;
  }
}

/** Sums what the main threads of calibration targets ran and waited between two readings each (Calibration.waited). */
class Waits {
  private run = 0;
  private wait = 0;
  /** reads a target now; the function returned reads it again and adds the difference (before the target is killed) */
  from(pid: number): () => void {
    const a = threadWaits(pid);
    return () => {
      const b = a && threadWaits(pid);
      if (!a || !b) return;
      this.run += b[0] - a[0];
      this.wait += b[1] - a[1];
    };
  }

  /** the share of the time read that the targets waited (undefined: nothing read) */
  get share(): number | undefined {
    return this.run + this.wait > 0 ? this.wait / (this.run + this.wait) : undefined;
  }
}

/** The pinning factor of a function: its straight-line shape's where it has no loop, else the highest measured. */
export function pinningFactor(c: Calibration, hasLoop: boolean): number {
  return hasLoop ? c.pinned[1] : Math.max(1, c.pinnedShapes.strings ?? c.pinned[1]);
}

export const CALIBRATION_TARGET = path.join(__dirname, '..', '..', '..', 'calibrate', 'target.js');
const PIN_TARGET = path.join(path.dirname(CALIBRATION_TARGET), 'pin.js');
const STACK_SAMPLE_TARGET = path.join(path.dirname(CALIBRATION_TARGET), 'stack-sample.js');

export { configDir };
const file = calibrationFile;

/** The calibration of this machine and Node version, if it was measured. */
export function loadCalibration(): Calibration | null {
  const c = readCalibrationEntry() as Calibration | null;
  // one kept by an older paranode lacks what was added since: measured again
  return c && Array.isArray(c.pinned) && c.pinnedShapes && Array.isArray(c.switched) && Array.isArray(c.pathOp) && Array.isArray(c.stackSample) ? c : null;
}

function saveCalibration(c: Calibration): string {
  let all: Record<string, Calibration> = {};
  try { all = JSON.parse(fs.readFileSync(file(), 'utf8')); } catch { /* first one */ }
  all[machineKey()] = c;
  fs.mkdirSync(configDir(), { recursive: true });
  const tmp = `${file()}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(all, null, 2) + '\n');
  fs.renameSync(tmp, file());
  return file();
}

/** The calibration, measured now if there is none (or if `fresh`). */
export async function calibration(opts: { fresh?: boolean; progress?: (msg: string) => void } = {}): Promise<Calibration> {
  let c = opts.fresh ? null : loadCalibration();
  if (!c) {
    opts.progress?.('calibrating instrumentation costs on this machine (once per Node version; `paranode calibrate` measures again)');
    c = await measure(opts.progress);
    opts.progress?.(`calibration saved in ${saveCalibration(c)}`);
  }
  // measured now or kept: whoever prices by it hears that it may read high
  const busy = busyWarning(c);
  if (busy) opts.progress?.(busy);
  return c;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A calibration target driven line by line, with a session that places probes in it. */
class Driver {
  private out = '';
  s!: Session;
  constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => { this.out += d; });
  }

  async line(cmd: string, re: RegExp): Promise<RegExpMatchArray> {
    const from = this.out.length;
    if (cmd) this.child.stdin!.write(cmd + '\n');
    for (;;) {
      const m = this.out.slice(from).match(re);
      if (m) return m;
      await new Promise((r) => this.child.stdout!.once('data', r));
    }
  }

  async run(loop: string, n: number): Promise<number> {
    return Number((await this.line(`run ${loop} ${n}`, /ns (\d+)/))[1]);
  }

  /**
   * ns per call a probe adds to a loop: bare and probed runs alternate (each
   * after a run that lets V8 settle on the code), the median of the differences.
   */
  async cost(loop: string, resource: string, snippet: string, opts: { reps?: number; ms?: number; n?: number } = {}): Promise<number> {
    const probe = async () => this.s.place({ text: `${resource}.entry: ${snippet}`, resource, point: 'entry', where: 'preInsn', order: 'append', snippet }, { quiet: true });
    let n = opts.n ?? 0;
    if (!n) {
      // size the loop so that a probed run takes about `ms`
      const r = await probe();
      await this.run(loop, 2000);
      const t = await this.run(loop, 20000);
      await this.s.removeProbe(r.id);
      n = Math.max(2000, Math.round((opts.ms ?? 40) * 1e6 / Math.max(1, t / 20000)));
    }
    const diffs: number[] = [];
    for (let k = 0; k < (opts.reps ?? 5); k++) {
      await this.run(loop, n);
      const bare = await this.run(loop, n);
      const r = await probe();
      await this.run(loop, n);
      const probed = await this.run(loop, n);
      await this.s.removeProbe(r.id);
      diffs.push((probed - bare) / n);
    }
    return median(diffs);
  }

  /**
   * ns a call-path profile adds per call of the loop's function `fn`, in the
   * shape the program has it (slots, its handlers, the inlining it loses):
   * [inside the call's own time (the callee's exclusive time per call, less
   * nothing: its own code is a few ns), inside its caller's (the rest of the
   * loop's added time per call)], medians of runs bare and profiled in turns.
   */
  async pathCost(loop: string, functions: string[], fn: string, n = 200_000, turns = 5): Promise<Pair> {
    const own: number[] = [], perChild: number[] = [];
    for (let k = 0; k < turns; k++) {
      await this.run(loop, n);
      const bare = await this.run(loop, n);
      const { ids } = await this.s.profileCallPaths(functions);
      await this.run(loop, n);
      await this.s.sample();
      const before = this.s.callPaths(1).find((p) => p.functions[0] === fn);
      const probed = await this.run(loop, n);
      await this.s.sample();
      const after = this.s.callPaths(1).find((p) => p.functions[0] === fn);
      for (const id of ids) await this.s.removeProbe(id);
      if (!before || !after || after.calls - before.calls !== n) throw new Error(`calibration: the call-path profile of ${fn} counted ${after && before ? after.calls - before.calls : 'nothing'}, not ${n}`);
      const inside = (after.wall.exclusive - before.wall.exclusive) * 1e9 / n;
      own.push(inside);
      perChild.push((probed - bare) / n - inside);
    }
    return [Math.max(0, median(own)), Math.max(0, median(perChild))];
  }

  /**
   * ns one switch of `resource`'s guard costs the loop after it: runs right
   * after a switch against runs before it, in turns, mean ± 2 standard errors.
   * A probe in and out is one switch for V8: the first change throws the
   * optimized code away, the second finds none.
   */
  async switchCost(loop: string, resource: string, n: number, turns: number): Promise<Pair> {
    for (let k = 0; k < 10; k++) await this.run(loop, n);
    const bare: number[] = [], switched: number[] = [];
    for (let k = 0; k < turns; k++) {
      await this.run(loop, n);
      bare.push(await this.run(loop, n));
      const r = await this.s.place({ text: `${resource}.entry: x++;`, resource, point: 'entry', where: 'preInsn', order: 'append', snippet: 'x++;' }, { quiet: true });
      await this.s.removeProbe(r.id);
      switched.push(await this.run(loop, n));
    }
    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
    const variance = (xs: number[]) => xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1);
    const d = mean(switched) - mean(bare);
    const se = Math.sqrt((variance(switched) + variance(bare)) / turns);
    return [Math.max(0, d - 2 * se), Math.max(0, d + 2 * se)];
  }
}


async function measure(progress?: (msg: string) => void): Promise<Calibration> {
  const cwd = path.dirname(CALIBRATION_TARGET);
  const node = [process.execPath, '--allow-natives-syntax', CALIBRATION_TARGET];
  const at = (fn: string) => `/Code/target.js/${fn}`;
  const snippets = {
    A: 'x++;', B: 'x++; x++;', ADD: 'x += $arg[0];', I: 'if ($arg[0] >= 0) x++;',
    W: 'startWallTimer(tw); stopTimer(tw);', C: 'startProcessTimer(tc); stopTimer(tc);', V: 'x[$file($arg[1])]++;',
  };
  type Host = Record<keyof typeof snippets, number>;
  const hosts: Record<'f' | 'g', Host> = { f: {} as Host, g: {} as Host };
  let wrap = 0;
  let switched: Pair = [0, 0];
  let pathOp: Pair = [0, 0];
  const waits = new Waits();
  // slots and wrapping: launched, so the target's code is prepared as it loads
  const launched = await Session.launch(node, [], { stdio: 'pipe', cwd });
  const launchedWaits = waits.from(launched.pid);
  try {
    const d = new Driver(launched.child!);
    d.s = launched;
    await d.line('', /ready/);
    for (const h of ['f', 'g'] as const) {
      for (const [k, snippet] of Object.entries(snippets) as [keyof typeof snippets, string][]) {
        progress?.(`  ${h === 'f' ? 'optimized' : 'unoptimized'} host: ${snippet}`);
        hosts[h][k] = await d.cost(h, at(h), snippet);
      }
    }
    progress?.('  wrapped built-in: x++;');
    wrap = await d.cost('w', '/Code/node:path/extname', 'x++;');
    progress?.('  switching a slot of optimized code');
    switched = await d.switchCost('p', at('next'), 20, 40);
    progress?.('  a call-path profile of a call');
    pathOp = await d.pathCost('f', [at('loopF'), at('f')], 'target.js/f');
    launchedWaits();
  } finally {
    await launched.detach().catch(() => undefined);
    launched.child?.kill();
  }
  // breakpoints: attached, a LiveEdit that may not be planned falls back to them
  progress?.('  breakpoint: x++;');
  const child = spawn(process.execPath, [CALIBRATION_TARGET], { cwd, stdio: ['pipe', 'pipe', 'ignore'] });
  let breakpoint = 0;
  try {
    const d = new Driver(child);
    await d.line('', /ready/);
    d.s = await Session.attach(child.pid!, { planLimitMs: 0 });
    const attachedWaits = waits.from(child.pid!);
    try {
      breakpoint = await d.cost('f', at('f'), 'x++;', { n: 200, reps: 3 });
      attachedWaits();
    } finally {
      await d.s.detach().catch(() => undefined);
    }
  } finally {
    child.kill();
  }
  progress?.('  a function pinned in the interpreter by a breakpoint');
  const pinnedShapes = await measurePinning();
  progress?.('  a stack sample of the program\'s thread');
  const stackSample = await measureStackSample();
  const factors = Object.values(pinnedShapes);
  const pinned: Pair = [Math.min(...factors), Math.max(...factors)];
  const pair = (pick: (h: Host) => number): Pair => [Math.max(0, pick(hosts.f)), Math.max(0, pick(hosts.g))];
  const n = pair((h) => h.B - h.A);
  const mech = pair((h) => h.A - (h.B - h.A));
  return {
    node: process.version, arch: process.arch, cpu: os.cpus()[0]?.model ?? '?', host: os.hostname(), measuredAt: new Date().toISOString(),
    mechanism: { slot: mech, wrap: [Math.max(0, wrap - n[0]), Math.max(0, wrap - n[0])], breakpoint: [breakpoint, breakpoint] },
    primitive: {
      n,
      a: pair((h) => h.ADD - (h.A - (h.B - h.A))),
      i: pair((h) => h.I - h.A),
      wallPair: pair((h) => h.W - (h.A - (h.B - h.A))),
      cpuPair: pair((h) => h.C - (h.A - (h.B - h.A))),
      v: pair((h) => h.V - h.A),
    },
    pinned,
    pinnedShapes,
    switched,
    pathOp,
    stackSample,
    ...(waits.share === undefined ? {} : { waited: waits.share }),
  };
}

/** One line of JSON a calibration program prints, run in a plain process of this Node. */
async function childJson(file: string): Promise<unknown> {
  const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '', err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { err += d; });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  let got: unknown = null;
  try { got = JSON.parse(out); } catch { /* reported below */ }
  if (code !== 0 || got === null || typeof got !== 'object') throw new Error(`calibration: ${file} failed (exit ${code}): ${(err || out).trim().slice(0, 400)}`);
  return got;
}

/** Interpreter pinning, the slowdown factor of each shape: calibrate/pin.js in a plain process of this Node. */
async function measurePinning(): Promise<Record<string, number>> {
  const shapes = await childJson(PIN_TARGET) as Record<string, number>;
  const factors = Object.values(shapes);
  if (!factors.length || !factors.every((f) => Number.isFinite(f) && f > 0)) throw new Error(`calibration: ${PIN_TARGET} printed ${JSON.stringify(shapes)}`);
  // pinning never makes code faster: a factor under 1 is noise
  return Object.fromEntries(Object.entries(shapes).map(([k, f]) => [k, Math.max(1, f)]));
}

/** A stack sample's ns of the sampled thread: calibrate/stack-sample.js in a plain process of this Node. */
async function measureStackSample(): Promise<Pair> {
  const got = await childJson(STACK_SAMPLE_TARGET) as { ns?: unknown };
  const ns = got.ns;
  if (!Array.isArray(ns) || ns.length !== 2 || !ns.every((x) => typeof x === 'number' && Number.isFinite(x) && x >= 0)) {
    throw new Error(`calibration: ${STACK_SAMPLE_TARGET} printed ${JSON.stringify(got)}`);
  }
  return [ns[0], Math.max(ns[0], ns[1])];
}

/**
 * The prices a runtime compensates its timers with (agent/intrusion): per way
 * a handler is reached and per primitive, [low, high] ns, read off classCost
 * (a class's price is its way's plus its primitives', so these give it back).
 */
export function handlerPrices(c: Calibration): HandlerPrices {
  const base = (how: string) => classCost(c, `${how}:`);
  const mechanism: Record<string, Pair> = {};
  for (const how of ['slot', 'wrap', 'breakpoint']) mechanism[how] = base(how);
  const primitive: Record<string, Pair> = {};
  const slot = base('slot');
  for (const x of ['n', 'a', 'i', 'w', 'c', 'p', 'v', 'k']) {
    const one = classCost(c, `slot:${x}1`);
    primitive[x] = [one[0] - slot[0], one[1] - slot[1]];
  }
  return { mechanism, primitive };
}

/**
 * What one run of a handler of a cost class ("slot:n1w1p1", see costClass in
 * the runtime) costs, in ns: [low, high]: the price of the way that reaches it
 * (its Mechanism, named by the class) plus its primitives. Low: every primitive
 * as in optimized code; high: as in code V8 did not optimize. A stop is priced
 * as the cheaper (low) or dearer (high) of the two timer kinds.
 */
export function classCost(c: Calibration, cls: string): Pair {
  // the runtime's own work for the tool, counted in microseconds
  if (cls === TOOL_CLASS) return [1000, 1000];
  // V8's profiler thread sampling for the tool, and the agent's relay thread: their CPU time in microseconds
  if (cls === SAMPLER_CLASS || cls === RELAY_CLASS) return [1000, 1000];
  // a stack sample V8 took of the thread: what one takes of the thread's own time, as calibrated
  if (cls === STACK_SAMPLE_CLASS) return [c.stackSample[0], c.stackSample[1]];
  // a sample of a pinned function's own code: of its interval, the part pinning added (it runs F times slower)
  if (cls === PINNED_CLASS) return [SAMPLE_INTERVAL_US * 1000 * (1 - 1 / Math.min(...c.pinned)), SAMPLE_INTERVAL_US * 1000 * (1 - 1 / Math.max(...c.pinned))];
  // a switch of a guard: of a function V8's samples saw running, as calibrated; else at most that
  if (cls === SWITCH_CLASS.seen) return [c.switched[0], c.switched[1]];
  if (cls === SWITCH_CLASS.unseen) return [0, c.switched[1]];
  const [how, prims] = cls.split(':');
  const p = c.primitive;
  const out: Pair = mechanismNamed(how).price(c.mechanism);
  for (const m of (prims ?? '').matchAll(/([a-z])(\d+)/g)) {
    const k = Number(m[2]);
    for (const side of [0, 1] as const) {
      const lo = side === 0;
      const pick = (x: Pair) => (lo ? Math.min(x[0], x[1]) : Math.max(x[0], x[1]));
      let each = 0;
      switch (m[1]) {
        case 'n': each = pick(p.n); break;
        case 'a': each = pick(p.a); break;
        case 'i': each = pick(p.i); break;
        case 'w': each = pick(p.wallPair) / 2; break;
        case 'c': each = pick(p.cpuPair) / 2; break;
        case 'p': each = (lo ? Math.min : Math.max)(pick(p.wallPair), pick(p.cpuPair)) / 2; break;
        case 'v': each = pick(p.v); break;
        // a call-path operation: half of what a profiled call adds (its entry and its exit), as calibrated
        case 'k': each = (c.pathOp[0] + c.pathOp[1]) / 2; break;
      }
      out[side] += k * each;
    }
  }
  return out;
}
