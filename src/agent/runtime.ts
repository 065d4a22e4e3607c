// The in-target runtime. Loaded into every instrumented thread (by the preload
// at launch, or by Runtime.evaluate on attach). It owns the counters and
// timers, the per-function slot globals and the handlers behind them, and the
// standing probe requests that are matched against every prepared script,
// including scripts loaded later. It never throws into the program: every
// handler body is wrapped, and every entry point here catches.
import * as path from 'path';
import type { PerformanceObserver } from 'perf_hooks';
import { isMainThread } from './thread-kind';
import { fileURLToPath } from 'url';
import { pointMatches, slotOf } from '../analysis/point-select';
import { describePoint, sampleKey } from '../analysis/describe';
import type { PointInfo, ScriptAnalysis } from '../analysis/functions';
import { Instances } from './instances';
import { monotonicMs } from './monotonic-clock';
import { asOwnWork } from './own-work';
import { Intrusion, type HandlerPrices } from './intrusion';
import { Disguise } from './disguise';
import { forgetDecoded, readOnce } from './prepared-codec';
import type { CpuSampler, StackRecord, ThreadClock, Window } from './cpu-sampler';
import type { CallPaths, Overhead, PathFunction, PathRecord, SuspendKind } from './call-paths';
import { moduleNameOf } from '../analysis/module-name';
import { lastPart, nameTester } from './no-regexp';
import { ownPackageDirs } from './own-code';
import { procText } from './unpooled';
import { StackPacker } from './stack-packing';
import type { ScriptLayout } from '../instrument/layout';

// What only a tool's session uses (stack samples, call paths, handlers' safe reads, the
// calibration, built-in wrappers, the collector's observer): loaded when a session starts (bootstrap's start, which
// then forgets our modules from require.cache) or a request first needs one, not at each
// dormant start, which is about 3 ms shorter for it (docs/BENCHMARKS.md section 58).
interface SessionModules {
  sampler: typeof import('./cpu-sampler');
  paths: typeof import('./call-paths');
  safe: typeof import('./safe-read');
  calibration: typeof import('../cost/calibration-file');
  builtins: typeof import('./builtins');
  perfHooks: typeof import('perf_hooks');
}
let session: SessionModules | undefined;
export function sessionModules(): SessionModules {
  return (session ??= {
    sampler: require('./cpu-sampler'), paths: require('./call-paths'), safe: require('./safe-read'),
    calibration: require('../cost/calibration-file'), builtins: require('./builtins'), perfHooks: require('perf_hooks'),
  });
}

type Handler = (...args: unknown[]) => void;

export const RUNTIME_KEY = Symbol.for('paranode.runtime');

export interface CompiledSnippet {
  /** JS statement text; counters as C/U/F/L[__c_NAME], timers via __ts_w/__ts_c/__tp(__t_NAME) */
  body: string;
  counters: string[];
  timers: string[];
  /** counters and timers indexed by instance (name[$file(x)]): cells named "<name>@/SyncObject/..." as instances appear */
  instances?: string[];
}

export interface ProbeSpec {
  id: number;
  /** regular expression source matched against "<module>/<function>" */
  match: string;
  /** the "<module>/<function>" when the resource has no wildcard (looked up, not matched) */
  exact?: string;
  /** regular expression source over "node:<name>" when the resource names built-in modules */
  builtins?: string;
  /** entry | exit | throw | calls | call:<callee> | await | resume */
  point: string;
  where: 'preInsn' | 'postInsn';
  order: 'append' | 'prepend';
  snippet: CompiledSnippet;
}

/** how a script's points are reached: slots prepared at load or by LiveEdit, or a fallback for every point */
export type Mechanism = 'load' | 'liveedit' | 'breakpoint' | 'wrap';

interface ScriptRecord {
  no: number;
  module: string;
  filename: string;
  how: Mechanism;
  analysis: ScriptAnalysis;
  /** "<module>/<function>" per function, what probes match */
  names: string[];
  /** points (fn:point) that have no slot: a probe placed there needs a fallback */
  noSlot: Set<string> | null;
  /** sets the slot guard of function F (globals for CJS/LiveEdit, module vars for ESM) */
  setGuard: (fn: number, value: unknown) => void;
  handlers: Map<number, Handler[]>;
  /** scriptsVersion when registered (see scriptIndexSince) */
  at: number;
}

/**
 * One part of scriptIndexSince's answer: the scripts registered since a version
 * with their functions' names (what the tool needs to name resources and to
 * choose the scripts a glob may reach), without their points; `version` only
 * on the last part.
 */
export interface ScriptIndexPart {
  /** names: "<module>/<function>" per function; modules: the modules of its functions (a source-mapped script's are its sources) */
  added: { no: number; module: string; filename: string; how: Mechanism; names: string[]; modules: string[] }[];
  dropped: number[];
  /** the next part starts after the script registered at `last` */
  last: number;
  version?: number;
}

/** One part of functionsOf's answer; `next` (script index, functions into it) where another part follows. */
export interface FunctionsPart {
  scripts: { no: number; from: number; functions: ScriptAnalysis['functions'] }[];
  next?: [number, number];
}
/** functions per part of functionsOf's answer (~0.9 MB with their points on the loaded server's libraries), a quarter of the names per part of scriptIndexSince's */
const SCRIPTS_PART = 1000;

/** A probe's point that has no slot: the tool reaches it by a breakpoint, or reports it. */
/** where: the point's name, for a script prepared at load (the tool does not know it: its debugger may be off) */
export interface FallbackPoint { no: number; fn: number; point: number; slot: number; where?: string }

interface SnippetAt {
  probe: number;
  order: 'append' | 'prepend';
  seq: number;
  body: string;
}

// fixed so that compiled handlers can hold the arrays; untouched pages cost no memory
// (a timer per function of the 9 MB TypeScript compiler needs 21,688 of them)
const MAX_COUNTERS = 1 << 17;
const MAX_TIMERS = 1 << 16;

/** a counter or timer name with one cell per function ($fn) or module ($mod): see resolve() */
/** a vector variable's name ($fn, $mod: a cell per function or module) */
const isVector = (name: string) => name.endsWith('$fn') || name.endsWith('$mod');

function noop(): void { /* disabled point */ }

/**
 * A function whose exit by exception no handler sees: reached by LiveEdit with no try
 * wrapper (a body that declares let/const/class/function at top level: V8 would drop
 * the function), or by breakpoints (none stops at a throw). An exception leaving it ran
 * no exit handler and left its timers started for good (count-nested: every later
 * second read as its time). While its throw point has snippets, its entry and resume
 * handlers count its activations up and its other exits and awaits down; at the end of
 * the job (a microtask: no synchronous frame of the program is left, and a suspended
 * one has counted down) each activation still counted left by an exception, and the
 * throw handler runs for it there: its timers stop at the end of that job, not at the throw.
 */
interface Unwinding { no: number; fn: number; throwSlot: number; open: number; listed: boolean }

/** Run the pre-call snippets, then hand $pnC the post-call handler. */
function preThenPost(pre: Handler, post: Handler): Handler {
  return function ($0?: unknown, $1?: unknown, $2?: unknown, $3?: unknown, $4?: unknown, $5?: unknown, $6?: unknown, $7?: unknown) {
    pre($0, $1, $2, $3, $4, $5, $6, $7);
    return post;
  } as Handler;
}

/** paranode's own files (dist/src): left out of stack samples */
const OWN_CODE = path.resolve(__dirname, '..');
/** the agent's files and directories that prepare code as it loads (see isPreparing) */
const PREPARING = [
  ...['hooks', 'esm-hooks', 'prepared-cache', 'prepared-codec', 'typescript-strip'].map((f) => path.join(OWN_CODE, 'agent', `${f}.js`)),
  ...['instrument', 'analysis'].map((d) => path.join(OWN_CODE, d) + path.sep),
];
/**
 * The packages paranode itself runs in the target's threads (the parser of its load
 * hook): left out of stack samples too, or its preparation of a module shows as the
 * program's own hot code. A program using the very same installed file loses it too.
 */
const OWN_DEPS = ownPackageDirs();

/** counters named so count handler runs per cost class (see costClass) */
export const COST_SERIES = '_pnx:';
/** the series of a timer's virtual time (less the handlers' work inside), its low and high bound: prefixes of the timer's name */
export const VIRTUAL_SERIES = { low: '_pnvl:', high: '_pnvh:' } as const;
/**
 * The cost class of the runtime's own work for the tool (samples, placing and
 * removing probes, listing scripts): counted in microseconds of the thread's
 * time, since it runs on the program's thread as handlers do.
 */
export const TOOL_CLASS = 'tool';
/**
 * The cost class of interpreter pinning, counted by the tool (never by the
 * runtime): V8 stack samples in which a function holding a breakpoint ran its
 * own code, each a sampling interval of the thread's time run that much slower.
 */
export const PINNED_CLASS = 'pinned';
/**
 * The cost classes of switching a function's slot guard (counted by the
 * runtime, once per function a request of the tool switched): V8 throws away
 * the optimized code that read the guard (the function's and that of the
 * functions it was inlined into) and runs it slower until it has optimized it
 * again. `seen`: V8's latest RECENT_SAMPLES stack samples saw the function
 * running its own code (innermost), priced as calibrated; `unseen`: they did
 * not, or there are none. A function V8 inlines is not in its samples (its
 * ticks are its inliner's), so an unseen switch may still cost that much (see
 * countSwitches for how many are counted).
 */
export const SWITCH_CLASS = { seen: 'switch', unseen: 'switch-unseen' } as const;
/**
 * The cost class of V8's profiler thread while it samples this thread for the tool: its
 * CPU time, in microseconds. Another thread's, but the process's and on its cores: a
 * server sharing its core, or under a CPU quota, pays for it (cpu-sampler.ts).
 */
export const SAMPLER_CLASS = 'sampler';
/**
 * The cost class of the agent's relay (a worker thread of the main thread's, for the
 * tool's session): its CPU time, in microseconds, from its start. Like the sampler's,
 * another thread's time on the process's cores: 0.8-1.6 % of a core under a diagnose of a
 * loaded server, not counted before (docs/BENCHMARKS.md section 54).
 */
export const RELAY_CLASS = 'relay';
/**
 * The cost class of the stack samples V8's profiler takes of this thread for the tool: each
 * stops the thread for a signal and a walk of its stack in the handler, on the thread's own
 * time (the profiler thread's is SAMPLER_CLASS's). Counted per sample, priced as calibrated
 * (calibrate/stack-sample.js: 0-61 µs a sample on this project's 2-core machine, docs/BENCHMARKS.md section 55).
 */
export const STACK_SAMPLE_CLASS = 'stack-sample';
/** the stack samples a switch is judged by: a second of the thread's time */
const RECENT_SAMPLES = 100;
/**
 * Switches of one function closer than this to the last one counted count
 * with it: V8 throws its code away at the first, and a burst of requests (a
 * metric's placements, ~1-5 ms apart) leaves it little time to optimize it
 * again between them (bench section 18 measures such in-and-out pairs).
 */
export const SWITCH_GAP_MS = 50;

/**
 * A handler's cost class: how its point is reached and how many primitives of
 * each kind it runs, e.g. "slot:n1" (one counter by slot) or "wrap:w1p1".
 * n counter ++, a other counter update, i predicate, w/c start of a wall/CPU
 * timer, p stop, v instance lookup, k call-path operation.
 */
export function costClass(how: Mechanism, body: string): string {
  // counted by hand, not by regexp: it runs as a probe is placed, by interrupt (no-regexp.ts);
  // as a global regexp counts: left to right, a match's text taken by it
  const o = (needle: string) => matches(body, [literal(needle)]);
  const kinds: [string, number][] = [
    ['n', matches(body, [cell('U[', ['++'])])],
    ['a', matches(body, [cell('C[', ['+=', '-=', '--']), literal('const v_=')])],
    ['i', matches(body, [literal('if(', true)]) - o('if(i_>=0)')],
    // a queue's change reads a clock, as a wall timer's start does
    ['w', o('__ts_w(') + matches(body, [vsCall(',0);')]) + o('__vq(')],
    ['c', o('__ts_c(') + matches(body, [vsCall(',1);')])],
    ['p', matches(body, [literal('__tp('), literal('__vp(')])],
    ['v', o('__iv(') + o('__in(')],
    ['k', o('__cp(')],
  ];
  return `${how === 'load' || how === 'liveedit' ? 'slot' : how}:${kinds.filter(([, k]) => k > 0).map(([c, k]) => c + k).join('')}`;
}

/** A pattern by hand: the text it starts with, and where its match at `i` ends (-1: none there). */
interface Pattern { start: string; end: (body: string, i: number) => number }

/** How many matches of the alternatives, taken left to right without overlap (as body.match(/a|b/g).length). */
function matches(body: string, alts: Pattern[]): number {
  let n = 0;
  for (let i = 0; ;) {
    let at = -1, end = -1;
    for (const a of alts) {
      for (let p = body.indexOf(a.start, i); p >= 0 && (at < 0 || p < at); p = body.indexOf(a.start, p + 1)) {
        const e = a.end(body, p);
        if (e >= 0) { at = p; end = e; break; }
      }
    }
    if (at < 0) return n;
    n++;
    i = end;
  }
}

const isWordChar = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

/** `text` itself; `word`: not after a word character (as /\btext/). */
function literal(text: string, word = false): Pattern {
  return { start: text, end: (b, i) => (word && i > 0 && isWordChar(b.charCodeAt(i - 1)) ? -1 : i + text.length) };
}

/** `X[…]` with a non-empty index holding no `]`, then one of `after` (as /X\[[^\]]+\](?:…)/). */
function cell(open: string, after: string[]): Pattern {
  return {
    start: open,
    end: (b, i) => {
      const close = b.indexOf(']', i + open.length);
      if (close <= i + open.length) return -1;
      const a = after.find((x) => b.startsWith(x, close + 1));
      return a === undefined ? -1 : close + 1 + a.length;
    },
  };
}

/** `__vs(` and text with no `;` up to one ending in `tail` (as /__vs\([^;]*,0\);/). */
function vsCall(tail: string): Pattern {
  return {
    start: '__vs(',
    end: (b, i) => {
      const semi = b.indexOf(';', i + 5);
      return semi >= 0 && b.slice(i + 5, semi + 1).endsWith(tail) && semi + 1 - tail.length >= i + 5 ? semi + 1 : -1;
    },
  };
}

export class Runtime {
  /**
   * Counter i reads C[i] + F[i] + (U[i] - L[i]) mod 2^32. `c++` and `c += 1`
   * go to the 32-bit U (cheapest), anything else to C; counterValue() moves
   * U's progress into F at every sample, before U can wrap twice: the tool
   * samples at least once a second and a slot cannot run 2^32 times in that.
   */
  get C(): Float64Array { return this.cells.C; }
  get U(): Uint32Array { return this.cells.U; }
  private get F(): Float64Array { return this.cells.F; }
  private get L(): Uint32Array { return this.cells.L; }
  /** per timer: total ms, start ms, depth, kind (0 wall, 1 cpu) */
  get T(): Float64Array { return this.cells.T; }
  /**
   * The cells (5 MB of ArrayBuffers), made when first used (a session's): V8 counts
   * buffers toward its heap limits, and held from a dormant start they brought short
   * programs a full collection they do not have plainly (docs/BENCHMARKS.md section 59).
   */
  private cellArrays: { C: Float64Array; U: Uint32Array; F: Float64Array; L: Uint32Array; T: Float64Array } | undefined;
  private get cells(): { C: Float64Array; U: Uint32Array; F: Float64Array; L: Uint32Array; T: Float64Array } {
    return (this.cellArrays ??= {
      C: new Float64Array(MAX_COUNTERS), U: new Uint32Array(MAX_COUNTERS), F: new Float64Array(MAX_COUNTERS), L: new Uint32Array(MAX_COUNTERS),
      T: new Float64Array(MAX_TIMERS * 4),
    });
  }
  /** the handlers' own work inside each timer (virtual time), once the tool has priced the cost classes */
  readonly intrusion = new Intrusion(MAX_TIMERS * 4, TOOL_CLASS, [PINNED_CLASS, SWITCH_CLASS.seen, SWITCH_CLASS.unseen, SAMPLER_CLASS, RELAY_CLASS, STACK_SAMPLE_CLASS]);
  readonly counterIndex = new Map<string, number>();
  readonly timerIndex = new Map<string, number>();
  readonly scripts = new Map<number, ScriptRecord>();
  readonly probes = new Map<number, ProbeSpec>();
  /** probe id -> number of points it is placed at by slots, and by wrapping */
  readonly placed = new Map<number, number>();
  readonly wrapped = new Map<number, number>();
  private readonly builtinModules = new Set<string>();
  /** modules the load hook could not prepare, with the reason */
  readonly unprepared: { file: string; reason: string }[] = [];
  /**
   * The load hook was in before any of the program's code loaded in this thread
   * (the dormant agent, when nothing else preloads before it): see everyScriptPrepared.
   */
  preparedFromFirstLine = false;
  /** what the tool should tell the user, handed over with the next sample */
  private notes: string[] = [];
  /** every script's "<module>/<function>" -> where, for exact (glob-free) probes */
  private readonly nameIndex = new Map<string, [number, number][]>();
  /** ES modules prepared at load whose preamble has not run yet (see expectModule) */
  private readonly expected = new Map<number, { analysis: ScriptAnalysis; noSlot: [number, number][] }>();
  /** scripts registered since the index was last read: indexed when it next is */
  private unindexed: ScriptRecord[] = [];
  /** "<module>/<function>" → [script, function] */
  private get byName(): Map<string, [number, number][]> {
    const recs = this.unindexed;
    if (recs.length) {
      this.unindexed = [];
      for (const rec of recs) {
        if (this.scripts.get(rec.no) !== rec) continue;
        rec.names.forEach((n, f) => { const l = this.nameIndex.get(n); if (l) l.push([rec.no, f]); else this.nameIndex.set(n, [[rec.no, f]]); });
      }
    }
    return this.nameIndex;
  }
  /** handlers compiled once per snippet text */
  private readonly compiled = new Map<string, Handler>();
  private fallback: FallbackPoint[] = [];
  private nextScript = 1;
  private seq = 0;
  /** snippets by "script:fn:slot" */
  private readonly at = new Map<string, SnippetAt[]>();
  /** the compiled handler of each "script:fn:slot" that has snippets */
  private readonly own = new Map<string, Handler>();
  /** functions whose exits by exception no handler sees, by "script:fn" (see Unwinding) */
  private readonly unwinding = new Map<string, Unwinding>();
  /** of those, the ones entered since the last end of a job */
  private readonly entered: Unwinding[] = [];
  private unwindQueued = false;
  private unwindNoted = false;
  // node:perf_hooks' clock, taken when first read (a session's): loading it is ~1 ms of a dormant start
  private perfClock: typeof import('perf_hooks').performance | undefined;
  private get perf(): typeof import('perf_hooks').performance { return (this.perfClock ??= sessionModules().perfHooks.performance); }
  /** the turns of this thread's event loop so far (libuv's count; Node 22.8 and later), -1 where not known */
  private loopCount(): number {
    try { return (this.perf.nodeTiming as { uvMetricsInfo?: { loopCount: number } }).uvMetricsInfo?.loopCount ?? -1; } catch { return -1; }
  }
  readonly now = (): number => this.perf.now();
  /** process-time clock in ms: the thread's own (native, see native/thread_cpu.c) once a CPU timer is used */
  cpu = (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
  cpuClock: 'thread' | 'process' | null = null;
  cwd = process.cwd();
  active = true;
  /** thread values (whole-thread metrics) are in each sample once asked for */
  private watching = false;
  /** ... since before the thread's first line (see watchThread) */
  private watchedFromStart = false;
  private gcMs = 0;
  /** each sample also lists the program's functions on the stack it interrupted */
  /** bumped whenever a script is registered or dropped (see scriptIndexSince) */
  private scriptsVersion = 0;
  /** scripts dropped, with the version that dropped them */
  private readonly droppedAt = new Map<number, number>();
  private stacks = false;
  /** V8's sampling profiler for the stack samples (null: interrupt samples, one per sample) */
  private sampler: CpuSampler | null = null;
  /** the relay of this session (main thread): the cell its thread's id comes in, and its clock once that has come */
  private relay: { cell: Int32Array; clock?: ThreadClock } | null = null;
  /** frame keys innermost in the latest windows of V8's samples, RECENT_SAMPLES of them at least (see SWITCH_CLASS) */
  private ranInner: { keys: Set<string>; samples: number }[] = [];
  /** functions ("no:fn") whose guard the tool's current request switched */
  private switched = new Set<string>();
  /** when each function's last counted switch was (ms, the runtime's clock) */
  private lastSwitch = new Map<string, number>();
  /** the event loop's idle time as reported, less libuv's own (see threadValues) */
  private eluIdleFix = 0;
  private eluLast: { active: number; idle: number } | null = null;
  /** event-loop blocking: ms between samples with no turn of the event loop */
  private blockedMs = 0;
  private lastBusyCheck = 0;
  /**
   * libuv's count of the event loop's turns at the last sample: the same at the next one, the loop
   * has not turned (-1: not read yet). Read, never a timer armed: samples run by inspector interrupt,
   * anywhere in the program's JavaScript, also inside Node's own timer lists (an unref'd 0-ms timer
   * armed there once left a list that its map no longer held at the head of the queue: a loaded
   * server's processTimers looped on it for good, 100 % CPU, no request answered; Node 22, 2026-12-02)
   */
  private loops = -1;
  private gcObserver: PerformanceObserver | null = null;
  /** files and message channels seen, for counters and timers indexed by them */
  readonly instances = new Instances(this);
  /** shows the program its own text and positions in scripts prepared at load */
  readonly disguise = new Disguise();
  /** undo steps registered by whoever hooked into the thread (the load hook) */
  readonly onDeactivate: (() => void)[] = [];
  /**
   * filename -> scriptId of each script a session LiveEdited or tried to. The
   * script keeps its id; V8 keeps a hidden copy under the same name at each
   * attempt (a refused one too: 47 after 5 s of retries on a busy program),
   * which a later session's Debugger.enable announces: those copies are not the
   * program's and must not be prepared again. Kept across sessions.
   */
  private readonly liveEdited = new Map<string, string>();

  /** a remark for the tool's session */
  note(text: string): void {
    this.notes.push(text);
  }

  noteLiveEdit(filename: string, scriptId: string): void {
    this.liveEdited.set(filename, scriptId);
  }

  /**
   * Every module of the program in this thread has slots: the tool needs no
   * debugger here (no LiveEdit, no breakpoint), and does not switch it on, for
   * Debugger.enable stops the thread while V8 announces every script.
   */
  everyScriptPrepared(): boolean {
    return this.preparedFromFirstLine && this.unprepared.length === 0;
  }

  liveEditedScripts(): [string, string][] {
    return [...this.liveEdited];
  }

  /**
   * A quiet point for a LiveEdit that a function of the script kept refusing
   * (BlockedByActiveFunction): a program busy in its callbacks has one of them
   * on the stack whenever the debugger's command lands in an interrupt. Here
   * the thread waits in a callback of its own, between the program's, where
   * the inspector's commands still run (V8 serves interrupts in Atomics.wait)
   * with no function of the program active. Held until releaseQuiet(), for
   * at most `ms` (a tool that vanishes leaves it after that).
   */
  holdQuiet(ms: number): void {
    const hold = { cell: new Int32Array(new SharedArrayBuffer(4)), held: false };
    this.quiet = hold;
    setImmediate(() => {
      // released (or replaced) before the thread got here: no stop at all
      if (this.quiet !== hold) return;
      hold.held = true;
      const t0 = this.now();
      Atomics.wait(hold.cell, 0, 0, ms);
      hold.held = false;
      if (this.quiet === hold) this.quiet = null;
      this.chargeTool(Math.round((this.now() - t0) * 1000));
    });
  }

  /** Is the thread waiting at the quiet point now (asked from inside it, it is)? */
  quietHeld(): boolean {
    return this.quiet?.held === true;
  }

  /** Let the thread go on from its quiet point, or not stop there at all. */
  releaseQuiet(): void {
    const hold = this.quiet;
    if (!hold) return;
    this.quiet = null;
    Atomics.store(hold.cell, 0, 1);
    Atomics.notify(hold.cell, 0);
  }

  private quiet: { cell: Int32Array; held: boolean } | null = null;

  /** script numbers by key, kept across sessions (see allocScript) */
  private readonly numbered = new Map<string, number>();

  /**
   * A number for a script's slots. With a key (a LiveEdited script), the same key
   * gets the same number in every session: its slot globals are defined once,
   * not once per session (they stay, inert, after detach: code prepared by an
   * earlier session may still run through closures made while it was edited).
   */
  allocScript(key?: string): number {
    if (key === undefined) return this.nextScript++;
    let no = this.numbered.get(key);
    if (no === undefined) this.numbered.set(key, (no = this.nextScript++));
    return no;
  }

  /**
   * Define the slot globals of a script before its prepared code runs. A `fresh` number (the load
   * hook's, never given before) has none yet: they are defined without looking first, which took a
   * third of the time (the TypeScript compiler's 21,688, by hand: 42-52 -> 25-30 ms); a global of that name the
   * program made itself and froze stops that, and the names are then defined one by one where free.
   * A LiveEdited script's number comes back in later sessions: its switched guards are kept.
   */
  defineGlobals(no: number, fnCount: number, fresh = false): void {
    if (fresh) {
      const off = { value: 0, writable: true, configurable: true, enumerable: false };
      try {
        for (let f = 0; f < fnCount; f++) Object.defineProperty(globalThis, `$pn${no}_${f}`, off);
        return;
      } catch { /* one the program defined, not configurable: below */ }
    }
    for (let f = 0; f < fnCount; f++) {
      const name = `$pn${no}_${f}`;
      if (!Object.prototype.hasOwnProperty.call(globalThis, name)) {
        Object.defineProperty(globalThis, name, { value: 0, writable: true, configurable: true, enumerable: false });
      }
    }
  }

  registerScript(no: number, module: string, analysis: ScriptAnalysis, setGuard?: (fn: number, v: unknown) => void,
    filename = module, how: Mechanism = 'liveedit', noSlot?: [number, number][], layout?: ScriptLayout): void {
    if (layout) this.disguise.add(no, filename, layout);
    const rec = {
      no, module, analysis, filename, how,
      noSlot: noSlot?.length ? new Set(noSlot.map(([f, p]) => `${f}:${p}`)) : null,
      setGuard: setGuard ?? ((fn, v) => setConstGlobal(`$pn${no}_${fn}`, v)),
      handlers: new Map(),
      at: ++this.scriptsVersion,
    } as Omit<ScriptRecord, 'names'> as ScriptRecord;
    lazyNames(rec);
    this.scripts.set(no, rec);
    // its functions are named by a source map: so are its frames in stack samples (frameKey)
    if (analysis.mapped && filename.startsWith('/')) this.mappedFiles.add(filename);
    if (how === 'breakpoint' || (how === 'liveedit' && rec.noSlot)) this.findUnwinding(rec);
    this.droppedAt.delete(no);
    this.unindexed.push(rec);
    // a probe that cannot be placed here (too many counters, ...) costs that probe in this
    // script, never the script: it is registered now, and its prepared code is what runs
    for (const p of this.probes.values()) {
      try { this.place(p, rec); } catch (e) { this.notes.push(`probe ${p.id} not placed in ${module}: ${(e as Error)?.message ?? e}`); }
    }
    // a script just loaded has no optimized code to throw away
    for (const k of this.switched) if (k.startsWith(`${no}:`)) this.switched.delete(k);
    // a script the tool reaches by breakpoints: the next addProbe hands its points to the tool
    // (a worker started after attach gets its standing probes so); elsewhere a point without a slot is only reported
    if (how !== 'breakpoint') this.reportFallback();
  }

  /**
   * Called by an ES module's preamble (see prepareModuleForLoad) when it first
   * runs; `analysis` null: the load hook handed it over (expectModule).
   */
  registerModule(no: number, url: string, analysis: ScriptAnalysis | null, setGuard: (fn: number, v: unknown) => void, noSlot?: [number, number][]): void {
    try {
      if (!analysis) {
        const expected = this.expected.get(no);
        this.expected.delete(no);
        if (!expected) return;
        ({ analysis, noSlot } = expected);
      }
      this.registerScript(no, this.moduleName(url), analysis, setGuard, url.startsWith('file:') ? fileURLToPath(url) : url, 'load', noSlot);
    } catch {
      /* never throw into the program */
    }
  }

  /** The analysis of an ES module the load hook prepared, for its preamble's registerModule. */
  expectModule(no: number, analysis: ScriptAnalysis, noSlot: [number, number][]): void {
    this.expected.set(no, { analysis, noSlot });
  }

  /** A script the load hook left as it was (its preparation failed): the tool hears why. */
  leftUnprepared(filename: string, e: unknown): void {
    const reason = String((e as Error)?.message ?? e);
    this.unprepared.push({ file: filename, reason });
    this.notes.push(`${this.moduleName(filename)}: left unprepared at load (${reason}); the tool reaches its functions by LiveEdit or breakpoints`);
  }

  moduleName(filename: string): string {
    if (filename.startsWith('file://')) {
      try { filename = fileURLToPath(filename); } catch { return filename; }
    }
    return moduleNameOf(filename, this.cwd);
  }

  counter(name: string): number {
    let i = this.counterIndex.get(name);
    if (i === undefined) {
      i = this.counterIndex.size;
      if (i >= MAX_COUNTERS) throw new Error(`too many counters (${MAX_COUNTERS} in this thread)`);
      this.counterIndex.set(name, i);
    }
    return i;
  }

  timer(name: string): number {
    let i = this.timerIndex.get(name);
    if (i === undefined) {
      i = this.timerIndex.size;
      if (i >= MAX_TIMERS) throw new Error(`too many timers (${MAX_TIMERS} in this thread)`);
      this.timerIndex.set(name, i);
    }
    return i;
  }

  /**
   * Place a standing probe in every script registered so far (and, by
   * registerScript, in every later one). Returns the points placed with slots,
   * whether any function matched, and the matched points that have no slot.
   */
  addProbe(spec: ProbeSpec): { placed: number; wrapped: number; matched: boolean; fallback: FallbackPoint[] } {
    return this.servingTool(() => this.addProbeNow(spec));
  }

  private addProbeNow(spec: ProbeSpec): { placed: number; wrapped: number; matched: boolean; fallback: FallbackPoint[] } {
    // standing probes already reach every script registered since: placing twice would count twice
    if (!this.probes.has(spec.id)) {
      if (spec.builtins) this.builtins(spec.builtins);
      this.probes.set(spec.id, spec);
      this.placed.set(spec.id, 0);
      this.wrapped.set(spec.id, 0);
      // (vectors get their cells as functions are placed)
      for (const name of spec.snippet.counters) if (!isVector(name)) this.counter(name);
      for (const name of spec.snippet.timers) if (!isVector(name)) this.timer(name);
      this.fallback = [];
      for (const rec of this.scripts.values()) this.place(spec, rec);
    }
    const fallback = this.fallback;
    this.fallback = [];
    return { placed: this.placed.get(spec.id) ?? 0, wrapped: this.wrapped.get(spec.id) ?? 0, matched: this.matches(spec), fallback };
  }

  /** Make the loaded built-in modules matching a regex over "node:<name>" resources (by wrapping). */
  builtins(match: string): void {
    sessionModules().builtins.registerBuiltins(this, match, this.builtinModules);
  }

  /** Does any registered function match the probe's resource? */
  matches(spec: ProbeSpec): boolean {
    if (spec.exact !== undefined) return this.byName.has(spec.exact);
    const test = nameTester(spec.match);
    for (const rec of this.scripts.values()) if (rec.names.some(test)) return true;
    return false;
  }

  /** Points with no slot that probes reached as scripts registered: only reported. */
  private reportFallback(): void {
    for (const f of this.fallback) {
      const rec = this.scripts.get(f.no);
      const fn = rec?.analysis.functions[f.fn];
      if (rec && fn) this.notes.push(`/Code/${rec.names[f.fn]} ${describePoint(fn.points[f.point])}: no slot in code prepared at load; not counted`);
    }
    this.fallback = [];
  }

  /**
   * Time the tool stopped this thread from outside (a LiveEdit, the deoptimization
   * before the first one), as the tool measured it: into the observed cost too.
   */
  chargeTool(us: number): void {
    if (us > 0 && this.active) {
      this.U[this.counter(COST_SERIES + TOOL_CLASS)] += Math.round(us);
      this.intrusion.tool(Math.round(us));
    }
  }

  /**
   * Run work for the tool, counting its microseconds into the observed cost: the
   * time the thread could run meanwhile, as the limit's denominator counts it
   * (runnable-time.ts). Its wall time counted the waits of a thread sharing its
   * core, which the observed cost then judged against the time it could run.
   */
  private servingTool<T>(work: () => T): T {
    // the whole of it the runtime's own, its clock reads and switch counting included
    return asOwnWork(() => {
      const t0 = this.now();
      const waited0 = schedMs()[1];
      try {
        return work();
      } finally {
        const ran = this.now() - t0 - Math.max(0, schedMs()[1] - waited0);
        this.chargeTool(Math.round(Math.max(0, ran) * 1000));
        if (this.switched.size) this.countSwitches();
      }
    });
  }

  /**
   * Count the request's guard switches by SWITCH_CLASS, once per function. An
   * unseen function's switch costs only where it was inlined into code that
   * runs, and V8 throws away each optimized function once whatever it inlined:
   * with samples, unseen switches count at most one per function they saw
   * running that this request has not switched itself.
   */
  private countSwitches(): void {
    const switched = this.switched;
    this.switched = new Set();
    if (!this.active) return;
    const running = new Set(this.ranInner.flatMap((w) => [...w.keys]));
    const now = this.now();
    let seen = 0, unseen = 0;
    for (const key of switched) {
      if (now - (this.lastSwitch.get(key) ?? -Infinity) < SWITCH_GAP_MS) continue;
      this.lastSwitch.set(key, now);
      const [no, fn] = key.split(':').map(Number);
      const rec = this.scripts.get(no);
      const name = rec?.analysis.functions[fn]?.name;
      if (!rec || name === undefined) continue;
      if (running.has(sampleKey(`${rec.module}/${name}`))) seen++; else unseen++;
    }
    if (this.ranInner.some((w) => w.samples)) unseen = Math.min(unseen, Math.max(0, running.size - seen));
    if (seen) this.U[this.counter(COST_SERIES + SWITCH_CLASS.seen)] += seen;
    if (unseen) this.U[this.counter(COST_SERIES + SWITCH_CLASS.unseen)] += unseen;
  }

  /** Note which functions a window of V8's samples saw (see SWITCH_CLASS). */
  private noteRunning(w: Window): void {
    const keys = new Set<string>();
    for (const [stack] of w.stacks) if (stack.length) keys.add(stack[0]);
    // a window is as long as the time between two samples of the tool: keep enough of them
    this.ranInner.push({ keys, samples: w.samples });
    let total = this.ranInner.reduce((a, x) => a + x.samples, 0);
    while (this.ranInner.length > 1 && total - this.ranInner[0].samples >= RECENT_SAMPLES) total -= this.ranInner.shift()!.samples;
  }

  removeProbe(id: number): void {
    this.servingTool(() => this.removeProbeNow(id));
  }

  private removeProbeNow(id: number): void {
    if (!this.probes.delete(id)) return;
    this.placed.delete(id);
    this.wrapped.delete(id);
    const touched = new Set<string>();
    for (const [key, list] of this.at) {
      const kept = list.filter((s) => s.probe !== id);
      if (kept.length !== list.length) {
        this.at.set(key, kept);
        touched.add(key);
      }
    }
    for (const key of touched) this.rebuild(key);
  }

  private place(spec: ProbeSpec, rec: ScriptRecord): void {
    let fns: number[];
    if (spec.exact !== undefined) fns = (this.byName.get(spec.exact) ?? []).filter(([no]) => no === rec.no).map(([, f]) => f);
    else {
      const test = nameTester(spec.match);
      fns = [];
      rec.names.forEach((n, f) => { if (test(n)) fns.push(f); });
    }
    for (const f of fns) {
      const fn = rec.analysis.functions[f];
      for (const p of fn.points) {
        if (!pointMatches(spec.point, p, fn.points)) continue;
        const slot = slotOf(spec.point, spec.where, p);
        const key = `${rec.no}:${f}:${slot}`;
        const list = this.at.get(key) ?? [];
        const entry: SnippetAt = { probe: spec.id, order: spec.order, seq: ++this.seq, body: this.resolve(spec.snippet, rec, f) };
        if (spec.order === 'prepend') list.unshift(entry); else list.push(entry);
        this.at.set(key, list);
        // (no slot and no breakpoint: counted by neither, and no fallback to report)
        if (p.exit === 'throw' && this.unwinding.has(`${rec.no}:${f}`)) {
          if (!this.unwindNoted) {
            this.unwindNoted = true;
            this.notes.push('exits by exception of functions reached by LiveEdit without a try wrapper, or by breakpoints, run their handlers at the end of the job they happened in ' +
              '(a microtask): a timer an exception left started stops there, not at the throw');
          }
        }
        else if (rec.noSlot?.has(`${f}:${p.index}`) || rec.how === 'breakpoint') {
          this.fallback.push({ no: rec.no, fn: f, point: p.index, slot, ...(rec.how === 'load' ? { where: `/Code/${rec.names[f]} ${describePoint(p)}` } : {}) });
        }
        else if (rec.how === 'wrap') this.wrapped.set(spec.id, (this.wrapped.get(spec.id) ?? 0) + 1);
        else this.placed.set(spec.id, (this.placed.get(spec.id) ?? 0) + 1);
        this.rebuild(key);
      }
    }
  }

  /**
   * Replace counter and timer names by their indices. A name ending in $fn
   * ($mod) is a vector with one cell per function (module): here the cell of
   * function f, named "<name>@/Code/<module>/<function>" ("<name>@/Code/<module>").
   * One standing probe so counts every function of a glob, including
   * functions loaded later (Paradyn's vectorization).
   */
  private resolve(s: CompiledSnippet, rec: ScriptRecord, f: number): string {
    const cell = (n: string) => {
      if (n.endsWith('$fn')) return `${n.slice(0, -3)}@/Code/${rec.names[f]}`;
      if (n.endsWith('$mod')) return `${n.slice(0, -4)}@/Code/${rec.analysis.functions[f].module ?? rec.module}`;
      return n;
    };
    return resolveNames(s.body, (n) => this.counter(cell(n)), (n) => this.timer(cell(n)), () => this.pathFn(rec, f));
  }

  /** "<module>/<function>" and how it suspends, per function id of the call-path profile */
  private readonly pathFns: { name: string; kind: SuspendKind; file: string; line: number; column: number }[] = [];
  private readonly pathFnIds = new Map<string, number>();
  private pathProfile: CallPaths | null = null;
  /** this session was told the profile's price (see callPaths) */
  private pathNoted = false;
  private pathMeasuredNoted = false;

  /** The id a call-path primitive placed in function f of rec names it by. */
  private pathFn(rec: ScriptRecord, f: number): number {
    const key = `${rec.no}:${f}`;
    let id = this.pathFnIds.get(key);
    if (id === undefined) {
      const info = rec.analysis.functions[f];
      const kind: SuspendKind = info.isAsync ? (info.isGenerator ? 'both' : 'await') : info.isGenerator ? 'yield' : 'none';
      this.pathFnIds.set(key, (id = this.pathFns.push({ name: rec.names[f], kind, file: rec.filename, line: info.line, column: info.column }) - 1));
    }
    return id;
  }

  /** The call-path profile the primitives enterPath() ... resumePath() feed (made at first use). */
  callPaths(): CallPaths {
    if (!this.pathProfile) {
      this.useCpuClock();
      this.pathProfile = new (sessionModules().paths.CallPaths)((id) => this.pathFns[id]?.name ?? '?', (id) => this.pathFns[id]?.kind ?? 'none', () => this.now(), () => this.cpu());
    }
    if (!this.pathNoted) {
      this.pathNoted = true;
      // its own cost per call, as `paranode calibrate` measured it in steady state; else
      // measured here and now, briefly (code V8 has not optimized yet: an overestimate)
      const known = sessionModules().calibration.readCalibrationEntry()?.pathOp;
      const calibrated = Array.isArray(known) && known.length === 2 && known.every((x) => typeof x === 'number' && x >= 0);
      const o = calibrated ? { own: known[0] / 1e6, perChild: known[1] / 1e6 } : measurePathOverhead(4000, 5, this.now, this.cpu);
      this.pathProfile.startFrom(o, calibrated);
      // the calibrated price is the same in every thread: said once, by the main thread
      if (!calibrated || isMainThread()) this.notes.push(`call-path profile: its own work adds ${(o.own * 1e6).toFixed(0)} ns to a call's time and ${(o.perChild * 1e6).toFixed(0)} ns to its caller's ` +
        `(${calibrated ? 'calibrated' : 'measured in the thread as the profile started, before V8 optimized it: `paranode calibrate` measures it in steady state'}); ` +
        `the virtual (compensated) times leave it out, at what one operation in ${sessionModules().paths.TIMED_EVERY} timed where it runs measures once ${sessionModules().paths.TIMED_WINDOW} are` +
        (calibrated ? ' (never under the calibrated price)' : ''));
    }
    return this.pathProfile;
  }

  private rebuild(key: string): void {
    const [no, fn, slot] = key.split(':').map(Number);
    const rec = this.scripts.get(no);
    if (!rec) return;
    const fnInfo = rec.analysis.functions[fn];
    // a new frozen array per change: V8 folds element loads from a frozen constant,
    // so with the constant guard cell the handler call is as good as written inline
    const list = this.at.get(key) ?? [];
    const h = list.length ? this.compile(list, rec.how) : noop;
    if (h === noop) this.own.delete(key); else this.own.set(key, h);
    const before = rec.handlers.get(fn);
    const arr = [...(before ?? new Array(2 * fnInfo.points.length).fill(noop))];
    arr[slot] = h;
    // a call point's pre-call slot hands back its post-call handler (a function, or nothing: the
    // prepared code calls what it gets if truthy, see instrument/transform.ts)
    const k = slot >> 1;
    if (fnInfo.points[k]?.kind === 'call') {
      const pre = this.own.get(`${no}:${fn}:${2 * k}`) ?? noop;
      const post = this.own.get(`${no}:${fn}:${2 * k + 1}`) ?? noop;
      arr[2 * k] = post === noop ? pre : pre === noop ? () => post : preThenPost(pre, post);
      arr[2 * k + 1] = post;
    }
    const u = this.unwinding.get(`${no}:${fn}`);
    if (u) this.countActivations(arr, fnInfo, u);
    Object.freeze(arr);
    rec.handlers.set(fn, arr);
    const any = arr.some((x) => x !== noop);
    // every change of a guard that is or was on is a new value for V8 (a new array)
    if ((rec.how === 'load' || rec.how === 'liveedit') && (any || before?.some((x) => x !== noop))) this.switched.add(`${no}:${fn}`);
    rec.setGuard(fn, any && this.active ? arr : 0);
  }

  /**
   * The functions of a script reached by LiveEdit or breakpoints whose exit by exception
   * no handler sees (see Unwinding): those whose suspensions are seen (LiveEdit slots,
   * or none: a breakpoint cannot mark them); entries and other exits by slot or breakpoint.
   */
  private findUnwinding(rec: ScriptRecord): void {
    const bp = rec.how === 'breakpoint';
    const unslotted = (fn: number, p: PointInfo) => bp || !!rec.noSlot?.has(`${fn}:${p.index}`);
    rec.analysis.functions.forEach((f, fn) => {
      const t = f.points.find((p) => p.exit === 'throw');
      if (!t || !unslotted(fn, t)) return;
      if (f.points.some((p) => (p.kind === 'await' || p.kind === 'resume') && unslotted(fn, p))) return;
      this.unwinding.set(`${rec.no}:${fn}`, { no: rec.no, fn, throwSlot: 2 * t.index, open: 0, listed: false });
    });
  }

  /** While the throw point has snippets: the entry/resume handlers count up, the other exits and awaits down (from the unwrapped handlers). */
  private countActivations(arr: Handler[], fnInfo: ScriptAnalysis['functions'][number], u: Unwinding): void {
    const own = (slot: number) => this.own.get(`${u.no}:${u.fn}:${slot}`) ?? noop;
    const on = own(u.throwSlot) !== noop;
    if (!on) u.open = 0;
    for (const p of fnInfo.points) {
      const up = p.kind === 'entry' || p.kind === 'resume';
      if (!up && p.kind !== 'await' && !(p.kind === 'exit' && p.exit !== 'throw')) continue;
      const h = own(2 * p.index);
      arr[2 * p.index] = !on ? h : up
        ? (...a: unknown[]) => { if (u.open++ === 0 && !u.listed) this.enteredOne(u); return h(...a); }
        : (v?: unknown) => { if (u.open > 0) u.open--; return h(v); };
    }
  }

  private enteredOne(u: Unwinding): void {
    u.listed = true;
    this.entered.push(u);
    if (!this.unwindQueued) {
      this.unwindQueued = true;
      queueMicrotask(this.jobEnd);
    }
  }

  /** The end of a job that entered an unwinding function: what is still counted left by an exception. */
  private readonly jobEnd = (): void => {
    this.unwindQueued = false;
    for (const u of this.entered.splice(0)) {
      u.listed = false;
      // (switched off since: nothing runs)
      const h = this.active ? this.own.get(`${u.no}:${u.fn}:${u.throwSlot}`) : undefined;
      for (; u.open > 0; u.open--) if (h) { try { h(); } catch { /* never into the program */ } }
    }
  };

  private compile(list: SnippetAt[], how: Mechanism): Handler {
    // two call-path profiles over one function (overlapping globs) are one: its calls count once
    const seen = new Set<string>();
    const inner = list.filter((s) => !s.body.startsWith('__cp(') || (!seen.has(s.body) && !!seen.add(s.body))).map((s) => `try{${s.body}}catch(e){}`).join('');
    // every run of a handler is counted by its cost class (the observed cost multiplies
    // the counts by the calibrated cost of each class): one 32-bit add per run
    const cls = costClass(how, inner);
    // and, once the tool has priced the classes, its price added to the handlers' running sum (virtual time of timers)
    const price = this.intrusion.priceOf(cls);
    const body = `U[${this.counter(COST_SERIES + cls)}]++;${price ? `S[0]+=${price[0]};S[1]+=${price[1]};` : ''}${inner}`;
    // a session's first call-path handler makes the profile (or says its price again): cached handlers too
    const paths = body.includes('__cp(') ? this.callPaths() : null;
    const known = this.compiled.get(body);
    if (known) return known;
    // the clock is bound into the handler: a stop compiled before its start (a
    // request's stops go in first) must read the same CPU clock the start does
    if (['__ts_c(', '__tp(', '__vs(', '__vp('].some((c) => body.includes(c))) this.useCpuClock();
    const inst = this.instances;
    const h = buildHandler(body, {
      C: this.C, U: this.U, F: this.F, L: this.L, T: this.T, X: this.intrusion, now: this.now, cpu: this.cpu,
      path: paths,
      cell: (name, timer, kind, x) => inst.cell(name, timer, kind, x),
      start: (name, i, cpuTimer) => inst.start(name, i, cpuTimer),
      stop: (name) => inst.stop(name),
      queue: (i, d) => inst.queue(i, d),
      name: (kind, x) => (kind === 'file' ? inst.fileOf(x) : inst.channelOf(x)),
    });
    this.compiled.set(body, h);
    return h;
  }

  /**
   * Load the per-thread CPU clock at the first process-time timer (so a target
   * that never uses one never loads it). Without it, process.cpuUsage() counts
   * every thread of the process.
   */
  useCpuClock(): void {
    if (this.cpuClock) return;
    this.cpuClock = 'process';
    // PARANODE_CPU_CLOCK=process: the process-wide clock even where the per-thread one is built
    if (process.env.PARANODE_CPU_CLOCK === 'process') return;
    try {
      const file = path.join(__dirname, '..', '..', '..', 'build', 'Release', 'thread_cpu.node');
      const m = require(file) as { threadCpuMs: () => number };
      delete require.cache[file];
      if (m.threadCpuMs() >= 0) { this.cpu = m.threadCpuMs; this.cpuClock = 'thread'; return; }
    } catch { /* not built */ }
    this.notes.push(`process-time timers read the whole process's CPU time (process.cpuUsage()): the per-thread clock ` +
      `(native/thread_cpu.c) is not built here (npm run install); with busy worker threads they count the other threads' time too`);
  }

  /** A breakpoint's condition calls this: run handler `slot` of function `fn` of script `no`. */
  hit(no: number, fn: number, slot: number, ...args: unknown[]): false {
    try {
      const arr = this.active ? this.scripts.get(no)?.handlers.get(fn) : undefined;
      if (arr) arr[slot](...args);
    } catch {
      /* never throw into the program */
    }
    return false;
  }

  /**
   * Start measuring the thread's own values (CPU and wall time, garbage
   * collection, event-loop activity): each sample carries them from now on.
   * @param fromStart called before the thread's first line (launch): its values count from
   * the thread's start, so a program that ends before the tool's first sample still has them
   * @param samplesForMs how long the session will sample from now (a duration's end; -1: not known), see CpuSampler.samplesFor
   * @param longFirst V8 samples at the longest interval first (see CpuSampler.shorter)
   */
  watchThread(stacks = false, fromStart = false, samplingBudget = sessionModules().sampler.DEFAULT_SAMPLING_BUDGET, samplePriceNs = 0, samplesForMs = -1, longFirst = false): void {
    if (fromStart && !this.watching) this.watchedFromStart = true;
    if (stacks && !this.stacks) {
      this.stacks = true;
      const sampler = sessionModules().sampler;
      // asked, the samples start at the longest interval: each restart of V8's profiler costs the thread (see CpuSampler.shorter)
      this.sampler = new sampler.CpuSampler((url, name, line, column) => this.frameKey(url, name, line, column), (url) => this.isPreparing(url), (text) => this.notes.push(text), samplingBudget, () => this.cpu(), () => schedMs()[1],
        longFirst ? sampler.MAX_INTERVAL_US : sampler.SAMPLE_INTERVAL_US);
      this.sampler.priceSamples(samplePriceNs);
      // the profiler's start logs every code object of the heap, the thread stopped (0.03-0.18 s
      // on the loaded server): the observed cost counts it
      if (!this.servingTool(() => this.sampler!.start())) {
        this.sampler = null;
        this.notes.push(`stack samples by inspector interrupt, not by V8's sampling profiler (${sessionModules().sampler.cpuProfWanted() ? 'the program runs with --cpu-prof' : 'no inspector session in this thread'}): ` +
          'they land only at function entries and loop back edges, so functions are tested by timers');
      }
    }
    this.sampler?.samplesFor(samplesForMs);
    if (this.watching) return;
    this.watching = true;
    this.useCpuClock();
    try {
      this.gcObserver = new (sessionModules().perfHooks.PerformanceObserver)((list) => { for (const e of list.getEntries()) this.gcMs += e.duration; });
      this.gcObserver.observe({ entryTypes: ['gc'] });
    } catch { /* no GC data */ }
  }

  /**
   * [cpu, wall, gc, event loop active, event loop idle, event loop blocked,
   * ready, ran (the kernel's count; -1: unknown)], in ms since the thread started. While V8's profiler samples (window `w`), the
   * event loop's idle time is the share of its samples that found the loop
   * idle: libuv loses the idle time of every wait a profiler signal
   * interrupts (epoll_wait returns EINTR and the wait's start is taken anew),
   * so its own figure reads a waiting loop as busy.
   */
  private threadValues(w?: Window): number[] {
    const raw = this.perf.eventLoopUtilization();
    const total = raw.active + raw.idle;
    if (w && w.samples > 0 && this.eluLast) {
      const span = total - (this.eluLast.active + this.eluLast.idle);
      this.eluIdleFix += (w.idle / w.samples) * span - (raw.idle - this.eluLast.idle);
    }
    this.eluLast = raw;
    const idle = Math.max(0, Math.min(total, raw.idle + this.eluIdleFix));
    const elu = { idle, active: total - idle };
    // entries not yet delivered to the callback (it runs on a later turn of the event loop)
    try { for (const e of this.gcObserver?.takeRecords() ?? []) this.gcMs += e.duration; } catch { /* older Node */ }
    // Samples arrive by inspector interrupt even in the middle of a task: if the
    // loop has not reached its timers since the last sample, one task held it.
    const now = this.now();
    const loops = this.loopCount();
    if (loops >= 0 && loops === this.loops) this.blockedMs += now - this.lastBusyCheck;
    this.loops = loops;
    this.lastBusyCheck = now;
    const [ran, ready] = schedMs();
    return [this.cpu(), now, this.gcMs, elu.active, elu.idle, this.blockedMs, ready, ran];
  }

  /**
   * Where V8's profiler cannot be had (see CpuSampler): the program's
   * functions on the stack this sample interrupted, as "<module>/<name>".
   * Samples arrive by inspector interrupt, on top of whatever runs. The
   * frames are read as call sites, not as text: formatting a deep stack
   * (with line and column of each frame) took milliseconds per sample.
   */
  private stackNow(): string[] {
    const limit = Error.stackTraceLimit;
    const prepare = Error.prepareStackTrace;
    const holder: { stack?: NodeJS.CallSite[] } = {};
    let sites: NodeJS.CallSite[] = [];
    try {
      Error.stackTraceLimit = 200;
      Error.prepareStackTrace = (_e, cs) => cs;
      Error.captureStackTrace(holder);
      // formatted on first read, with the hook in place
      sites = holder.stack ?? [];
    } finally {
      Error.stackTraceLimit = limit;
      Error.prepareStackTrace = prepare;
    }
    const out = new Set<string>();
    for (const c of sites) {
      const file = c.getFileName();
      const key = file && !c.isEval() ? this.frameKey(file, c.getFunctionName() ?? c.getMethodName() ?? '', c.getEnclosingLineNumber() ?? 0, (c.getEnclosingColumnNumber() ?? 1) - 1) : null;
      if (key !== null) out.add(key);
    }
    return [...out];
  }

  /**
   * A stack frame as "<module>/<name>", or null for Node's own code, ours and
   * our dependencies'. A method by its own name: a stack trace names
   * Parser.prototype.nextToken "Parser.nextToken", the profiler by its inferred
   * name; the method's own name is what both agree on with the analysis.
   */
  private frameKey(file: string, functionName: string, line: number, column: number): string | null {
    if (file.startsWith('node:') || this.isTool(file)) return null;
    const name = lastPart(functionName);
    // an anonymous function by the line it starts at, as the analysis names it (sampleKey)
    const key = `${this.moduleOf(file)}/${name || `<anonymous>@${line}`}`;
    if (!this.mappedFiles.size) return key;
    // a script with a source map: the tool names the frame by the map, from its position
    const abs = this.scriptPath(file);
    if (abs === null || !this.mappedFiles.has(abs)) return key;
    // the position in the script's own text (a prepared script runs our text beside its own: columns move)
    const col = (this.disguise.column(abs, line, column + 1) ?? column + 1) - 1;
    return `${key}\u0001${abs}\u0001${line}:${col}`;
  }

  /** files whose functions are named by source maps (their prepared analysis, or the tool's mapFrames): kept, a later session's samples need them too */
  private readonly mappedFiles = new Set<string>();

  /** The tool's: these files have source maps; their frames in stack samples carry their file and position (see the tool's session/frame-names). */
  mapFrames(files: string): void {
    this.servingTool(() => { for (const f of JSON.parse(files) as string[]) this.mappedFiles.add(f); });
  }

  /** paranode's own code or its dependencies' (the load hook's parser, source maps) */
  private isTool(file: string): boolean {
    const abs = this.scriptPath(file);
    return abs !== null && (abs.startsWith(OWN_CODE) || OWN_DEPS.some((d) => abs.startsWith(d)));
  }

  /**
   * Code that prepares modules as they load (the load hooks, the rewrite, the
   * prepared-code cache, the parser): time below a program frame in it is the
   * tool's. Not the pass-throughs and handlers the slots call, nor the wrappers
   * of built-ins: what runs below those is the program's own work, and V8's
   * profiler gives inlined pass-throughs the samples of their arguments' calls.
   */
  private isPreparing(file: string): boolean {
    const abs = this.scriptPath(file);
    return abs !== null && (OWN_DEPS.some((d) => abs.startsWith(d)) || PREPARING.some((d) => abs.startsWith(d)));
  }

  /** A script's file path (file: URLs decoded), or null for Node's own. */
  private scriptPath(file: string): string | null {
    if (file.startsWith('node:')) return null;
    return file.startsWith('file://') ? this.pathOf(file) : file;
  }

  private readonly paths = new Map<string, string>();
  private pathOf(url: string): string {
    let p = this.paths.get(url);
    if (p === undefined) {
      try { p = fileURLToPath(url); } catch { p = url; }
      this.paths.set(url, p);
    }
    return p;
  }

  private readonly modules = new Map<string, string>();
  private moduleOf(file: string): string {
    let m = this.modules.get(file);
    if (m === undefined) this.modules.set(file, (m = this.moduleName(file)));
    return m;
  }

  /**
   * A consistent snapshot: running timers include the time since their start.
   * final: the values written at exit, whole (call paths too, not what changed)
   */
  sample(final = false): ReturnType<Runtime['sampleNow']> {
    return this.servingTool(() => this.sampleNow(final));
  }

  /**
   * The sample as JSON text, for the tool. V8's inspector converts an object returned by value
   * one value at a time on this thread, after the request's counted work (0.25-0.3 ms for a 3-KB
   * sample, a loaded server's being 10-15 KB five times a second: about 1 % of the thread that no
   * window counted); a string it copies whole, and the stringifying is counted here (20-25 µs).
   * `fresh`: the session's first read (the stacks' tables start anew, see stack-packing.ts).
   */
  sampleText(fresh = false): string {
    return this.servingTool(() => {
      if (fresh) this.packer.reset();
      const { stacks, ...out } = this.sampleNow();
      // each string and each distinct stack once a session (stack-packing.ts)
      return JSON.stringify(stacks ? { ...out, packed: this.packer.pack(stacks) } : out);
    });
  }

  /** what the tool has been sent of the stacks' strings and records this session (sampleText) */
  private readonly packer = new StackPacker();

  /** The relay started for this session (main thread): its CPU time goes into the observed cost from its start. */
  relayThread(cell: Int32Array): void {
    this.relay = { cell };
  }

  /** Charge the relay's CPU time since the last sample to the observed cost (its own thread's: no intrusion in timers). */
  private chargeRelay(): void {
    const r = this.relay;
    if (!r) return;
    if (!r.clock) {
      const tid = Atomics.load(r.cell, 0);
      if (!tid) return;
      r.clock = { tid: String(tid), cpuMs: 0 };
    }
    const spent = sessionModules().sampler.cpuSince(r.clock);
    // it ended with its session: what it ran after the last sample is not counted
    if (Number.isNaN(spent)) { this.relay = null; return; }
    if (spent > 0) this.U[this.counter(COST_SERIES + RELAY_CLASS)] += Math.round(spent * 1000);
  }

  private sampleNow(final = false): { t: number; counters: [string, number][]; timers: [string, number, boolean][]; queues?: [string, number, number, number, number, number, number][]; mono: number; notes?: string[]; thread?: number[]; fromStart?: boolean; scripts: number; objects?: string[]; stacks?: StackRecord[]; idle?: number; tool?: number; sampleUs?: number; placed?: [number, number][]; paths?: PathRecord[]; pathFunctions?: PathFunction[] } {
    // the stack samples' window first, and what it cost (another thread's time, and each sample's on
    // this thread: no intrusion in this thread's timers, only in the observed cost), so that this
    // sample's counters hold them up to now
    const w = this.sampler?.take();
    if (w && this.active) {
      if (w.profilerUs) this.U[this.counter(COST_SERIES + SAMPLER_CLASS)] += w.profilerUs;
      if (w.samples) this.U[this.counter(COST_SERIES + STACK_SAMPLE_CLASS)] += w.samples;
    }
    const now = this.now();
    // before the counters are read: this sample holds the relay's time up to now
    if (this.active) this.chargeRelay();
    let cpuNow = -1;
    const counters: [string, number][] = [];
    for (const [name, i] of this.counterIndex) counters.push([name, this.counterValue(i)]);
    const timers: [string, number, boolean][] = [];
    const queues: [string, number, number, number, number, number, number][] = [];
    // the process's monotonic clock, one for every thread: when the queues' counts were read
    const tq = monotonicMs();
    const x = this.intrusion;
    for (const [name, i] of this.timerIndex) {
      const b = 4 * i;
      if (this.T[b + 3] === 2) {
        // a queue (Instances.queue): its integral carried to now, its count, now, its birth, its sends and its last change
        queues.push([name, this.T[b] + this.T[b + 2] * (tq - this.T[b + 1]), this.T[b + 2], tq, this.instances.queueBorn.get(b) ?? tq, this.instances.queueSent.get(b) ?? 0, this.T[b + 1]]);
        continue;
      }
      let total = this.T[b];
      let part = 0;
      const running = this.T[b + 2] > 0;
      if (running) {
        if (this.T[b + 3]) { if (cpuNow < 0) cpuNow = this.cpu(); part = cpuNow - this.T[b + 1]; }
        else part = now - this.T[b + 1];
        total += part;
      }
      timers.push([name, total / 1000, running]);
      // virtual time, [low, high]: less the high and the low bound of the handlers' work inside
      if (x.on) {
        const [lo, hi] = x.of(b, running, part);
        timers.push([VIRTUAL_SERIES.low + name, Math.max(0, total - hi) / 1000, running], [VIRTUAL_SERIES.high + name, Math.max(0, total - lo) / 1000, running]);
      }
    }
    const out: ReturnType<Runtime['sampleNow']> = { t: now, mono: tq, counters, timers, scripts: this.scripts.size };
    if (queues.length) out.queues = queues;
    if (w) { out.stacks = w.stacks; out.idle = w.idle; out.tool = w.tool; if (w.intervalUs) out.sampleUs = w.intervalUs; this.noteRunning(w); }
    if (this.watching) out.thread = this.threadValues(w);
    if (this.watchedFromStart) out.fromStart = true;
    if (this.stacks && !this.sampler) out.stacks = [[this.stackNow(), 1]];
    const fresh = this.instances.takeFresh();
    if (fresh.length) out.objects = fresh;
    const paths = this.pathProfile?.take(final);
    if (paths?.length) out.paths = paths;
    const pp = this.pathProfile;
    if (pp?.measuredFrom && !this.pathMeasuredNoted) {
      this.pathMeasuredNoted = true;
      this.notes.push(`call-path profile: its own work measured where it runs (${pp.measuredFrom} operations timed): ` +
        `the virtual times take ${(pp.overhead.own * 1e6).toFixed(0)} ns of a call's time and ${(pp.overhead.perChild * 1e6).toFixed(0)} ns of its caller's`);
    }
    // where the functions new in paths are (exports name them by file, line and column)
    const fns = this.pathProfile?.takeFunctions(final);
    if (fns?.length) out.pathFunctions = fns.map((id) => { const f = this.pathFns[id]; return [f.name, f.file, f.line, f.column]; });
    if (this.notes.length) { out.notes = this.notes; this.notes = []; }
    // where each standing probe is placed (the tool tells the user of probes that match nothing)
    if (this.placed.size) out.placed = [...this.placed].map(([id, n]) => [id, n + (this.wrapped.get(id) ?? 0)]);
    return out;
  }

  /** Hold (or let go) the sends of the queues named `variable` (see Session.holdQueues). */
  holdQueues(variable: string, hold: boolean): void {
    this.instances.holdQueues(variable, hold);
  }

  /** The tool's prices of handler runs (its calibration): timers count the handlers' work inside them from now on. */
  priceHandlers(p: HandlerPrices): void {
    this.intrusion.price(p, this.T);
    // the handlers in place add their prices from now on: compiled again
    this.compiled.clear();
    for (const key of [...this.at.keys()]) this.rebuild(key);
  }

  private counterValue(i: number): number {
    const u = this.U[i];
    this.F[i] += (u - this.L[i]) >>> 0;
    this.L[i] = u;
    return this.C[i] + this.F[i];
  }

  /** Switch every slot off (the prepared code stays, inert): returns the ms it took the thread (the detach's cost, reported by the tool). */
  deactivate(): number {
    const t0 = this.now();
    this.switchOff();
    return this.now() - t0;
  }

  private switchOff(): void {
    this.active = false;
    this.gcObserver?.disconnect();
    this.gcObserver = null;
    this.watching = false;
    this.stacks = false;
    this.packer.reset();
    this.sampler?.stop();
    this.sampler = null;
    this.ranInner = [];
    this.lastSwitch.clear();
    this.loops = -1;
    this.instances.reset();
    this.pathProfile?.reset();
    this.pathNoted = false;
    this.pathMeasuredNoted = false;
    for (const undo = this.onDeactivate.splice(0); undo.length;) undo.pop()!();
    for (const rec of this.scripts.values()) for (const fn of rec.handlers.keys()) rec.setGuard(fn, 0);
    this.probes.clear();
    this.at.clear();
    this.own.clear();
    for (const rec of this.scripts.values()) rec.handlers.clear();
    // the tool gives LiveEdited scripts their text back and its breakpoints go with
    // it: a later session must not take them for prepared
    for (const [no, rec] of this.scripts) {
      if (rec.how !== 'liveedit' && rec.how !== 'breakpoint') continue;
      this.scripts.delete(no);
      for (const k of [...this.unwinding.keys()]) if (k.startsWith(`${no}:`)) this.unwinding.delete(k);
      this.droppedAt.set(no, ++this.scriptsVersion);
    }
    // what the session decoded of the prepared-code cache's entries goes back to its encoded form,
    // and the name index with it (built again from the scripts kept when next looked up)
    this.nameIndex.clear();
    this.unindexed = [...this.scripts.values()];
    for (const rec of this.unindexed) if (forgetDecoded(rec.analysis)) lazyNames(rec);
    // a later session starts from zero (in the same cells: compiled handlers hold them)
    if (this.cellArrays) for (const a of Object.values(this.cellArrays)) a.fill(0);
    this.intrusion.reset();
    this.counterIndex.clear();
    this.timerIndex.clear();
    this.placed.clear();
    this.wrapped.clear();
    this.notes = [];
  }

  activate(): void {
    this.active = true;
  }

  /**
   * What changed in the registered scripts since the tool's copy of `version`:
   * the scripts registered after it, with their functions' names, and those
   * dropped; null when the copy is current. Their functions with their points
   * come only for the scripts a request may reach (functionsOf): a large
   * program's are megabytes, and V8 serializes a result in one piece with the
   * thread stopped (5 MB: ~0.45 s on the loaded server, where the first search
   * fetched every script's to name the modules). The names come in parts of
   * about SCRIPTS_PART * 4 from the script registered after `after` on (a
   * script with more, alone), and `version` is set on the last part only.
   * As JSON text: V8's inspector serializes an object graph by value about 4x
   * slower than JSON.stringify does (5,000 functions: 130-190 ms against 37).
   */
  scriptIndexSince(version: number, after = version): string | null {
    if (version === this.scriptsVersion) return null;
    return this.servingTool(() => JSON.stringify(this.indexPart(version, after)));
  }

  private indexPart(version: number, after: number): ScriptIndexPart {
    // (a script with no function names its module still)
    const fresh = [...this.scripts.values()].filter((r) => r.at > after).sort((a, b) => a.at - b.at);
    const added: ScriptIndexPart['added'] = [];
    let names = 0, last = after;
    for (const r of fresh) {
      if (added.length && names + r.names.length > SCRIPTS_PART * 4) return { added, dropped: [], last };
      const modules = new Set<string>();
      for (const f of r.analysis.functions) modules.add(f.module ?? r.module);
      added.push({ no: r.no, module: r.module, filename: r.filename, how: r.how, names: r.names, modules: [...modules] });
      names += r.names.length;
      last = r.at;
    }
    const dropped = [...this.droppedAt].filter(([, at]) => at > version).map(([no]) => no);
    return { added, dropped, last: this.scriptsVersion, version: this.scriptsVersion };
  }

  /**
   * The functions, with their points, of the registered scripts `nos`, from the
   * i-th of them and `skip` functions into it, in parts of at most SCRIPTS_PART
   * functions (a script larger than that in several: typescript.js's 21,688
   * stopped the thread 1.3-1.9 s in one); a script no longer registered has none.
   */
  functionsOf(nos: number[], i = 0, skip = 0): string {
    return this.servingTool(() => readOnce(() => JSON.stringify(this.functionsPart(nos, i, skip))));
  }

  private functionsPart(nos: number[], i: number, skip: number): FunctionsPart {
    const scripts: FunctionsPart['scripts'] = [];
    let room = SCRIPTS_PART;
    for (; i < nos.length; i++, skip = 0) {
      const all = this.scripts.get(nos[i])?.analysis.functions ?? [];
      const from = Math.min(skip, all.length);
      // a whole script where it fits; one larger than a part begins a part of its own
      if (scripts.length && all.length - from > room) return { scripts, next: [i, from] };
      const to = Math.min(all.length, from + room);
      scripts.push({ no: nos[i], from, functions: from === 0 && to === all.length ? all : all.slice(from, to) });
      if (to < all.length) return { scripts, next: [i, to] };
      room -= to - from;
    }
    return { scripts };
  }
}

/** A compiled snippet's counter and timer names (__c_NAME, __t_NAME) as cell indices; names are identifiers, non-ASCII ones included. */
export function resolveNames(body: string, counter: (name: string) => number, timer: (name: string) => number, fnId: () => number = () => -1): string {
  // One pass, by hand (a name may itself hold "__c_" or "__t_"): it runs as a probe is
  // placed, by interrupt, and no regexp may run there (no-regexp.ts).
  // __f_fn: the id of the function the handler is placed in (call-path primitives)
  let out = '';
  let last = 0;
  for (let i = body.indexOf('__'); i >= 0; i = body.indexOf('__', i + 1)) {
    const kind = body[i + 2];
    if ((kind !== 'c' && kind !== 't' && kind !== 'f') || body[i + 3] !== '_' || !identifierStart(body.charCodeAt(i + 4))) continue;
    let j = i + 5;
    while (j < body.length && identifierPart(body.charCodeAt(j))) j++;
    const name = body.slice(i + 4, j);
    out += body.slice(last, i) + String(kind === 'c' ? counter(name) : kind === 't' ? 4 * timer(name) : fnId());
    last = j;
    i = j - 1;
  }
  return out + body.slice(last);
}

// Identifier characters of the names a snippet compiles to: ASCII letters, digits, $ and _,
// and any non-ASCII character (the tool's generated code puts only ASCII punctuation
// beside a name, and the snippet parser took the names as identifiers already).
const identifierStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 36 || c === 95 || c > 127;
const identifierPart = (c: number) => identifierStart(c) || (c >= 48 && c <= 57);

/** What a handler works on: the cells, the clocks, and the instances of /SyncObject resources. */
export interface HandlerEnv {
  C: Float64Array; U: Uint32Array; F: Float64Array; L: Uint32Array; T: Float64Array;
  /** notes the handlers' work inside each timer interval (none: nothing noted) */
  X?: Intrusion;
  now: () => number; cpu: () => number;
  cell: (name: string, timer: boolean, kind: 'file' | 'channel' | 'queue', x: unknown) => number;
  start: (name: string, i: number, cpuTimer: boolean) => void;
  queue: (i: number, d: number) => void;
  /** the resource an instance stands for ($file(x), $channel(x) as values), or null */
  name?: (kind: 'file' | 'channel', x: unknown) => string | null;
  stop: (name: string) => void;
  /** the call-path profile, where the handler has call-path primitives */
  path?: CallPaths | null;
}

/** the intrusion of handlers built outside a runtime (benchmarks, tests): never priced */
const INERT = new Intrusion(0, '', []);

/** A handler from its body (snippets with names resolved). Reads and coercions go through agent/safe-read. */
export function buildHandler(body: string, env: HandlerEnv): Handler {
  const { safeInstanceArg, safeRead, safePrimitive, safeLooseEqual } = sessionModules().safe;
  const factory = new Function('C', 'U', 'F', 'L', 'T', 'X', 'S', 'now', 'cpu', '__iv', '__vs', '__vp', '__vq', '__in', '__rd', '__p', '__eq', '__P',
    `var __ts_w=function(i){if(T[i+2]++===0){T[i+1]=now();T[i+3]=0;X.at(i)}};` +
    `var __ts_c=function(i){if(T[i+2]++===0){T[i+1]=cpu();T[i+3]=1;X.at(i)}};` +
    `var __tp=function(i){if(T[i+2]>0&&--T[i+2]===0){var d=(T[i+3]?cpu():now())-T[i+1];T[i]+=d;X.add(i,d)}};` +
    // call-path primitives: 0 entry, 1 exit, 2 await, 3 resume of function f
    `var __cp=function(op,f){op===0?__P.enter(f):op===1?__P.exit(f):op===2?__P.suspend(f):__P.resume(f)};` +
    // strict: $this is undefined where no receiver is handed over (slots, breakpoints)
    `return function($0,$1,$2,$3,$4,$5,$6,$7){'use strict';${body}}`);
  return factory(env.C, env.U, env.F, env.L, env.T, env.X ?? INERT, (env.X ?? INERT).S, env.now, env.cpu,
    (name: string, timer: number, kind: 'file' | 'channel' | 'queue', x: unknown) => env.cell(name, timer === 1, kind, safeInstanceArg(x)),
    (name: string, i: number, cpuTimer: number) => env.start(name, i, cpuTimer === 1),
    (name: string) => env.stop(name),
    (i: number, d: number) => env.queue(i, d),
    (kind: 'file' | 'channel', x: unknown) => env.name?.(kind, safeInstanceArg(x)) ?? null,
    safeRead, safePrimitive, safeLooseEqual, env.path ?? null);
}

/** A script's names (and the analysis they read) when first wanted: a dormant program never wants them. */
function lazyNames(rec: ScriptRecord): void {
  Object.defineProperty(rec, 'names', {
    configurable: true,
    enumerable: true,
    get: () => {
      const value = rec.analysis.functions.map((f) => `${f.module ?? rec.module}/${f.name}`);
      Object.defineProperty(rec, 'names', { value, writable: true, enumerable: true, configurable: true });
      return value;
    },
  });
}

/**
 * Switch a slot guard global. Deleting and defining it anew gives V8 a fresh
 * property cell in its "constant" state, so optimized code embeds the handler
 * array and inlines the handler as if it were written into the function;
 * code optimized against the old value deoptimizes once.
 */
function setConstGlobal(name: string, v: unknown): void {
  const g = globalThis as any;
  if (g[name] === v) return;
  delete g[name];
  Object.defineProperty(g, name, { value: v, writable: true, configurable: true, enumerable: false });
}

/**
 * This thread's scheduler counts, in ms since it started (Linux: the fields of
 * /proc/thread-self/schedstat): [time on a CPU, time it was ready to run but
 * waited for one]. The second counts other processes on its cores and a
 * cgroup's CPU quota alike; the first is the kernel's own count of the
 * thread's CPU time, whatever clock the timers use. [-1, 0] where they cannot
 * be read. Read in the thread itself: thread-self is the caller. Read by
 * procText: fs functions taken before the runtime may wrap fs for the
 * program's sync_io, and no memory from Buffer's pool (unpooled.ts).
 */
let schedstat = process.platform === 'linux';
function schedMs(): [number, number] {
  if (!schedstat) return [-1, 0];
  try {
    const f = procText('/proc/thread-self/schedstat').split(' ');
    return [Number(f[0]) / 1e6, Number(f[1]) / 1e6 || 0];
  } catch {
    schedstat = false;
    return [-1, 0];
  }
}

/**
 * What a call-path profile's own work costs per call (CallPaths' Overhead), in
 * this thread: a frame calls an empty function n times through handlers built
 * as the slots' are, on a profile of its own; the empty callee's exclusive time
 * is the work inside a call, the frame's the work its calls add to it. The
 * least over the second half of `rounds` rounds (V8 has optimized the handlers
 * by then, if n is large).
 */
export function measurePathOverhead(n: number, rounds: number, now: () => number = () => performance.now(), cpu: () => number = now): Overhead {
  const cal = new (sessionModules().paths.CallPaths)(() => 'c', () => 'none', now, cpu);
  const cells = (k: number) => ({ C: new Float64Array(k), U: new Uint32Array(k), F: new Float64Array(k), L: new Uint32Array(k), T: new Float64Array(4 * k) });
  const env: HandlerEnv = { ...cells(1), now, cpu, cell: () => -1, start: noop, stop: noop, queue: noop, path: cal };
  const h = (op: number, fn: number) => buildHandler(`U[0]++;try{__cp(${op},${fn})}catch(e){}`, env);
  const outerIn = h(0, 0), outerOut = h(1, 0);
  const G = Object.freeze([h(0, 1), h(1, 1)]);
  const callee = () => { if (G) G[0](); if (G) G[1](); };
  let own = Infinity, perChild = Infinity;
  for (let round = 0; round < rounds; round++) {
    cal.reset();
    outerIn();
    for (let i = 0; i < n; i++) callee();
    outerOut();
    const recs = cal.take();
    const outer = recs.find((r) => r[0] === 'c'), inner = recs.find((r) => r[0] === 'c\0c');
    // the second half's least: warmed up, and the least disturbed by other work on the machine
    if (outer && inner && round >= rounds >> 1) { own = Math.min(own, inner[3] / n); perChild = Math.min(perChild, outer[3] / n); }
  }
  return Number.isFinite(own) ? { own, perChild } : { own: 0, perChild: 0 };
}

/** Install (once per thread) the runtime and the pass-through helpers the slots call. */
export function install(): Runtime {
  const g = globalThis as any;
  if (g[RUNTIME_KEY]) return g[RUNTIME_KEY];
  const rt = new Runtime();
  Object.defineProperty(g, RUNTIME_KEY, { value: rt, enumerable: false, configurable: true, writable: false });
  // $pnP(G, s, v): run handler s of G with v, give back v. Inlined and folded away while G is 0.
  // Its inner call site is shared by every slot of the program (megamorphic), so
  // empty handlers are skipped by a comparison instead of being called.
  const P = function (G: any, s: number, v?: unknown) { if (G) { const h = G[s]; if (h !== noop) h(v); } return v; };
  // $pnC(post, v): the pre-call handler ran as the first argument and gave back the
  // post-call one (or nothing); two arguments keep the caller's frame small. Call sites
  // LiveEdited, and those a prepared function's locals do not reach, go through it
  const Cc = function (post: unknown, v: unknown) { if (typeof post === 'function' && post !== noop) post(v); return v; };
  for (const [name, fn] of [['$pnP', P], ['$pnC', Cc]] as const) {
    if (!Object.prototype.hasOwnProperty.call(g, name)) Object.defineProperty(g, name, { value: fn, writable: false, configurable: false, enumerable: false });
  }
  return rt;
}
