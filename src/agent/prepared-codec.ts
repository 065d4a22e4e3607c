// Compact encoding of a prepared script's analysis and layout for the start-up
// cache: every number goes into one Int32Array (read back without parsing),
// only strings and rare fields into JSON. JSON of the objects themselves took
// longer to parse than preparing some scripts (typescript.js: 29 MB, 300 ms);
// decoding rebuilds exactly the objects preparation makes, when first read.
import type { FunctionInfo, PointInfo, ScriptAnalysis } from '../analysis/functions';
import type { ScriptLayout } from '../instrument/layout';
import type { PreparedScript } from '../instrument/transform';

const KINDS: PointInfo['kind'][] = ['entry', 'exit', 'call', 'loop', 'await', 'resume', 'trip'];
const EXITS: (PointInfo['exit'] | undefined)[] = [undefined, 'return', 'end', 'throw'];

type Rest = Omit<PreparedScript, 'code'>;
/**
 * the small JSON part, read at load; `calls`: where each part of the call points' JSON starts in
 * the large part; `functions`: how many (the guards are defined at load, the records read later)
 */
interface Head { sourceType: ScriptAnalysis['sourceType']; unslotted: Rest['unslotted']; calls: number[]; functions: number; mapped?: true }

/**
 * The large part of an entry, read when first needed (see decodeRest): the strings' JSON and
 * the numbers (layout, then functions and points); `calls` where that JSON's parts start, when
 * it is not the head's (made again by a fresh preparation).
 */
export interface RestBytes { json: Uint8Array; ints: Int32Array; calls?: number[] }
/**
 * The large JSON part: per function [name, params, module?, noTryWrap?] (read
 * with the functions), then per call point [callee?, simpleArgs?], one text per
 * CALL_PART functions (each read with the first points read of its functions)
 */
type Strings = unknown[][];
/**
 * Functions per part of the call points' JSON: as many as a part of the tool's
 * listing (the runtime's SCRIPTS_PART), so the first part of a listing no longer
 * reads every call point's names (the TypeScript compiler's 74,925, most of an
 * attach's longest hold on it).
 */
const CALL_PART = 1000;

class Ints {
  a = new Int32Array(1 << 16);
  n = 0;
  push(...v: number[]): void {
    if (this.n + v.length > this.a.length) { const b = new Int32Array(Math.max(this.a.length * 2, this.n + v.length)); b.set(this.a); this.a = b; }
    for (const x of v) this.a[this.n++] = x;
  }
  list(xs: ArrayLike<number>): void { this.push(xs.length); for (let i = 0; i < xs.length; i++) this.push(xs[i]); }
}

/** The layout first (read with the rest when first needed: a stack trace, a function's text), then the functions (read when the tool first needs them). */
export function encodeRest(r: Rest): { head: string; json: string; ints: Int32Array } {
  const ints = new Ints();
  const { at, lines, texts } = r.layout;
  ints.list(at);
  ints.list(texts);
  const keys = Object.keys(lines);
  ints.push(keys.length);
  for (const k of keys) { ints.push(Number(k)); ints.list(lines[Number(k)]); }
  const f: Strings = [];
  const calls: Strings[] = [];
  ints.push(r.analysis.functions.length);
  r.analysis.functions.forEach((fn, k) => {
    if (k % CALL_PART === 0) calls.push([]);
    const part = calls[calls.length - 1];
    const flags = (fn.isAsync ? 1 : 0) | (fn.isGenerator ? 2 : 0) | (fn.isArrow ? 4 : 0) | ('module' in fn ? 8 : 0) | ('noTryWrap' in fn ? 16 : 0);
    ints.push(fn.index, fn.line, fn.column, fn.start, fn.end, flags, fn.points.length);
    const fs: unknown[] = [fn.name, fn.params];
    if ('module' in fn) fs.push(fn.module);
    if ('noTryWrap' in fn) fs.push(fn.noTryWrap);
    f.push(fs);
    for (const p of fn.points) {
      const pf = ('callee' in p ? 1 : 0) | ('simpleArgs' in p ? 2 : 0) | ('exit' in p ? 4 : 0) | (p.otherFrame ? 8 : 0);
      ints.push(p.index, KINDS.indexOf(p.kind), EXITS.indexOf(p.exit), p.line, p.column, p.pos, p.end, pf);
      if (pf & 3) part.push([p.callee, p.simpleArgs]);
    }
  });
  const parts = [JSON.stringify(f), ...calls.map((c) => JSON.stringify(c))];
  const starts: number[] = [];
  let offset = 0;
  for (const t of parts) { starts.push(offset); offset += Buffer.byteLength(t, 'utf8'); }
  const head: Head = { sourceType: r.analysis.sourceType, unslotted: r.unslotted, calls: starts.slice(1), functions: r.analysis.functions.length };
  if (r.analysis.mapped) head.mapped = true;
  return { head: JSON.stringify(head), json: parts.join(''), ints: ints.a.subarray(0, ints.n) };
}

/**
 * The analysis and layout of an entry, from its head; the rest is read by `load` when first
 * needed. A dormant program formats few stack traces and prints few of its functions, and
 * the tool reads the functions only when it attaches: the TypeScript compiler's start reads
 * 19 MB of prepared text instead of 35 MB, and decodes no layout (its ~190,000 line lists took
 * ~20 ms). The layout's lists are Int32Array views (the runtime's Disguise only indexes them),
 * decoded together at the first read of any of them. The functions are decoded when the
 * analysis' `functions` is first read, each function's points when they are first read
 * (placing a probe, listing for the tool): decoding the TypeScript compiler's 21,688
 * functions at load took ~150 ms and left their objects to the collector.
 */
export function decodeRest(head: string, load: () => RestBytes): Rest & { functionCount: number } {
  const h = JSON.parse(head) as Head;
  let bytes: RestBytes | undefined;
  /** where the functions start in the numbers */
  let from = 0;
  const layout = {} as ScriptLayout;
  // reading it may format a stack trace (an error made inside fs), which reads the layout
  let loading = false;
  const rest = (): RestBytes => {
    if (bytes) return bytes;
    let read: RestBytes;
    loading = true;
    try { read = load(); } finally { loading = false; }
    const a = read.ints;
    let i = 0;
    const list = (): number[] => { const n = a[i++]; const out = a.subarray(i, i + n); i += n; return out as unknown as number[]; };
    const at = list();
    const texts = list();
    // an index of the lines rather than a list per line (the TypeScript compiler has ~190,000:
    // making them took ~20 ms and as much again of the collector's time)
    const count = a[i++];
    const lineNo = new Int32Array(count);
    const lineAt = new Int32Array(count);
    for (let k = 0; k < count; k++) { lineNo[k] = a[i]; lineAt[k] = i + 1; i += 2 + a[i + 1]; }
    const lines = lineIndex(a, lineNo, lineAt);
    from = i;
    for (const [k, value] of Object.entries({ at, texts, lines })) Object.defineProperty(layout, k, { value, writable: true, enumerable: true, configurable: true });
    // (only now: the layout's getters are gone, so nothing reads it half made)
    bytes = read;
    return bytes;
  };
  for (const k of ['at', 'lines', 'texts']) {
    Object.defineProperty(layout, k, {
      enumerable: true,
      configurable: true,
      // while it is being read: nothing to map (that frame keeps the prepared text's column)
      get: () => (loading ? (k === 'lines' ? {} : []) : (rest(), layout[k as keyof ScriptLayout])),
    });
  }
  const analysis = { sourceType: h.sourceType } as ScriptAnalysis;
  if (h.mapped) analysis.mapped = true;
  const encode = (): void => {
    Object.defineProperty(analysis, 'functions', {
      enumerable: true,
      configurable: true,
      get(this: ScriptAnalysis) {
        if (loading) return [];
        const { json, ints, calls: starts } = rest();
        const text = (at: number, to: number) => Buffer.from(json.buffer, json.byteOffset + at, to - at).toString('utf8');
        const ends = [...(starts ?? h.calls), json.byteLength];
        const calls: (Strings | undefined)[] = [];
        const part = (k: number) => (calls[k] ??= JSON.parse(text(ends[k], ends[k + 1])) as Strings);
        const value = ints[from] > 0 ? decodeFunctions(JSON.parse(text(0, ends[0])) as Strings, part, ints, from) : [];
        Object.defineProperty(this, 'functions', { value, writable: true, enumerable: true, configurable: true });
        return value;
      },
      set(this: ScriptAnalysis, value: FunctionInfo[]) { Object.defineProperty(this, 'functions', { value, writable: true, enumerable: true, configurable: true }); },
    });
  };
  encode();
  encoded.set(analysis, encode);
  return { analysis, unslotted: h.unslotted, layout, functionCount: h.functions };
}

/**
 * A layout's `lines` over an entry's numbers: per line number (ascending in lineNo), where its
 * list starts in `a` (its length first). Reads like the object preparation makes (a view per
 * line asked for, the line numbers as keys); only the runtime's Disguise asks, per frame.
 */
function lineIndex(a: Int32Array, lineNo: Int32Array, lineAt: Int32Array): ScriptLayout['lines'] {
  const find = (key: string | symbol): number => {
    if (typeof key !== 'string') return -1;
    const line = Number(key);
    let lo = 0, hi = lineNo.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (lineNo[m] < line) lo = m + 1; else hi = m; }
    return lo < lineNo.length && lineNo[lo] === line && String(line) === key ? lo : -1;
  };
  const view = (k: number) => a.subarray(lineAt[k] + 1, lineAt[k] + 1 + a[lineAt[k]]) as unknown as number[];
  // read-only: a write, a definition, a deletion or freezing is refused (the target stays empty
  // and extensible, as the proxy's invariants need); other keys read as an empty object's
  return new Proxy({} as ScriptLayout['lines'], {
    get: (t, key) => { const k = find(key); return k < 0 ? Reflect.get(t, key) : view(k); },
    has: (t, key) => find(key) >= 0 || Reflect.has(t, key),
    ownKeys: () => Array.from(lineNo, String),
    getOwnPropertyDescriptor: (_t, key) => { const k = find(key); return k < 0 ? undefined : { value: view(k), writable: true, enumerable: true, configurable: true }; },
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
    preventExtensions: () => false,
  });
}

/** analyses read from cache entries → puts their functions back to the encoded form */
const encoded = new WeakMap<ScriptAnalysis, () => void>();

/**
 * Let a cache entry's decoded functions go (the runtime, at detach): read again,
 * they are decoded again. A dormant program keeps the heap it had before the tool
 * attached (the TypeScript compiler's records: about 42 MB). False for an
 * analysis that did not come from the cache (its functions are all there is).
 */
export function forgetDecoded(analysis: ScriptAnalysis): boolean {
  const encode = encoded.get(analysis);
  if (!encode) return false;
  if (!Object.getOwnPropertyDescriptor(analysis, 'functions')?.get) encode();
  return true;
}

function decodeFunctions(strings: Strings, calls: (part: number) => Strings, a: Int32Array, from: number): FunctionInfo[] {
  let i = from;
  let callNo = 0;
  const functions: FunctionInfo[] = new Array(a[i++]);
  for (let k = 0; k < functions.length; k++) {
    if (k % CALL_PART === 0) callNo = 0;
    const flags = a[i + 5], np = a[i + 6];
    const fs = strings[k];
    const f = new CachedFunction(a[i], fs[0] as string, a[i + 1], a[i + 2], a[i + 3], a[i + 4], flags, fs[1] as (string | null)[], { a, from: i + 7, np, firstCall: callNo, part: Math.floor(k / CALL_PART), calls });
    i += 7;
    for (let q = 0; q < np; q++) if (a[i + q * 8 + 7] & 3) callNo++;
    i += np * 8;
    let extra = 2;
    if (flags & 16) f.noTryWrap = fs[extra + (flags & 8 ? 1 : 0)] as string;
    if (flags & 8) f.module = fs[extra++] as string;
    functions[k] = f;
  }
  return functions;
}

/** false while the tool lists functions (readOnce): their points are decoded for it, not kept */
let keep = true;

/**
 * Run `work`, reading functions' points without keeping them decoded: listing every
 * function for the tool kept them all (the TypeScript compiler's: +9.9 MB of the
 * target's heap for good, and more for its collector to mark at every full collection).
 */
export function readOnce<T>(work: () => T): T {
  keep = false;
  try {
    return work();
  } finally {
    keep = true;
  }
}

/** where a cached function's points are in the entry */
interface PointSource { a: Int32Array; from: number; np: number; firstCall: number; part: number; calls: (part: number) => Strings }
const SOURCE = Symbol('points');

/**
 * A function record of a cache entry: what preparation makes, its points decoded
 * when first read (an accessor on the prototype: one per function, defined on
 * each, took ~50 ms for the TypeScript compiler's 21,688). JSON gives what a
 * fresh record gives, points included.
 */
class CachedFunction implements FunctionInfo {
  index: number;
  name: string;
  line: number;
  column: number;
  start: number;
  end: number;
  isAsync: boolean;
  isGenerator: boolean;
  isArrow: boolean;
  params: (string | null)[];
  declare noTryWrap?: string;
  declare module?: string;
  declare [SOURCE]: PointSource;

  constructor(index: number, name: string, line: number, column: number, start: number, end: number, flags: number, params: (string | null)[], source: PointSource) {
    this.index = index;
    this.name = name;
    this.line = line;
    this.column = column;
    this.start = start;
    this.end = end;
    this.isAsync = !!(flags & 1);
    this.isGenerator = !!(flags & 2);
    this.isArrow = !!(flags & 4);
    this.params = params;
    // a symbol: not in JSON, Object.keys or for-in
    this[SOURCE] = source;
  }

  get points(): PointInfo[] {
    const { a, from, np, firstCall, part } = this[SOURCE];
    const calls = np ? this[SOURCE].calls(part) : [];
    const points: PointInfo[] = new Array(np);
    let callNo = firstCall;
    for (let q = 0, i = from; q < np; q++, i += 8) {
      const p: PointInfo = { index: a[i], kind: KINDS[a[i + 1]], line: a[i + 3], column: a[i + 4], pos: a[i + 5], end: a[i + 6] };
      const pf = a[i + 7];
      if (pf & 4) p.exit = EXITS[a[i + 2]];
      if (pf & 8) p.otherFrame = true;
      if (pf & 3) {
        const [callee, simpleArgs] = calls[callNo++] as [string, (string | null)[]];
        if (pf & 1) p.callee = callee;
        if (pf & 2) p.simpleArgs = simpleArgs;
      }
      points[q] = p;
    }
    if (keep) this.points = points;
    return points;
  }

  set points(value: PointInfo[]) { Object.defineProperty(this, 'points', { value, writable: true, enumerable: true, configurable: true }); }

  /** the record as preparation makes it, in its order of keys */
  toJSON(): FunctionInfo {
    const out = { index: this.index, name: this.name, line: this.line, column: this.column, start: this.start, end: this.end, isAsync: this.isAsync, isGenerator: this.isGenerator, isArrow: this.isArrow, params: this.params, points: this.points } as FunctionInfo;
    if ('noTryWrap' in this) out.noTryWrap = this.noTryWrap;
    if ('module' in this) out.module = this.module;
    return out;
  }
}
