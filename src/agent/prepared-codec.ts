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
/** the small JSON part, read at once */
interface Head { sourceType: ScriptAnalysis['sourceType']; unslotted: Rest['unslotted'] }
/** the large JSON part, read with the functions: per function [name, params, module?, noTryWrap?], per call point [callee?, simpleArgs?] */
interface Strings { f: unknown[][]; p: unknown[][] }

class Ints {
  a = new Int32Array(1 << 16);
  n = 0;
  push(...v: number[]): void {
    if (this.n + v.length > this.a.length) { const b = new Int32Array(Math.max(this.a.length * 2, this.n + v.length)); b.set(this.a); this.a = b; }
    for (const x of v) this.a[this.n++] = x;
  }
  list(xs: ArrayLike<number>): void { this.push(xs.length); for (let i = 0; i < xs.length; i++) this.push(xs[i]); }
}

/** The layout first (read at load, for stack traces), then the functions (read when the tool first needs them). */
export function encodeRest(r: Rest): { head: string; json: string; ints: Int32Array } {
  const ints = new Ints();
  const { at, lines, texts } = r.layout;
  ints.list(at);
  ints.list(texts);
  const keys = Object.keys(lines);
  ints.push(keys.length);
  for (const k of keys) { ints.push(Number(k)); ints.list(lines[Number(k)]); }
  const s: Strings = { f: [], p: [] };
  ints.push(r.analysis.functions.length);
  for (const f of r.analysis.functions) {
    const flags = (f.isAsync ? 1 : 0) | (f.isGenerator ? 2 : 0) | (f.isArrow ? 4 : 0) | ('module' in f ? 8 : 0) | ('noTryWrap' in f ? 16 : 0);
    ints.push(f.index, f.line, f.column, f.start, f.end, flags, f.points.length);
    const fs: unknown[] = [f.name, f.params];
    if ('module' in f) fs.push(f.module);
    if ('noTryWrap' in f) fs.push(f.noTryWrap);
    s.f.push(fs);
    for (const p of f.points) {
      const pf = ('callee' in p ? 1 : 0) | ('simpleArgs' in p ? 2 : 0) | ('exit' in p ? 4 : 0);
      ints.push(p.index, KINDS.indexOf(p.kind), EXITS.indexOf(p.exit), p.line, p.column, p.pos, p.end, pf);
      if (pf & 3) s.p.push([p.callee, p.simpleArgs]);
    }
  }
  const head: Head = { sourceType: r.analysis.sourceType, unslotted: r.unslotted };
  return { head: JSON.stringify(head), json: JSON.stringify(s), ints: ints.a.subarray(0, ints.n) };
}

/**
 * The analysis and layout of an entry. The layout's lists are Int32Array views
 * (the runtime's Disguise only indexes them). The functions are decoded when
 * the analysis' `functions` is first read, and each function's points when
 * they are first read (placing a probe, listing for the tool): a dormant program
 * never reads them, and decoding the TypeScript compiler's 21,688 functions at
 * load took ~150 ms and left their objects to the collector (~300 ms of GC in
 * its start-up). `json` is the large JSON part, as bytes until then.
 */
export function decodeRest(head: string, json: Uint8Array, a: Int32Array): Rest & { functionCount: number } {
  const h = JSON.parse(head) as Head;
  let i = 0;
  const list = (): number[] => { const n = a[i++]; const out = a.subarray(i, i + n); i += n; return out as unknown as number[]; };
  const at = list();
  const texts = list();
  const lines: ScriptLayout['lines'] = {};
  for (let n = a[i++]; n > 0; n--) { const line = a[i++]; lines[line] = list(); }
  const from = i;
  const functionCount = a[from];
  const analysis = { sourceType: h.sourceType } as ScriptAnalysis;
  Object.defineProperty(analysis, 'functions', {
    enumerable: true,
    configurable: true,
    get(this: ScriptAnalysis) {
      const value = decodeFunctions(JSON.parse(Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8')) as Strings, a, from);
      Object.defineProperty(this, 'functions', { value, writable: true, enumerable: true, configurable: true });
      return value;
    },
    set(this: ScriptAnalysis, value: FunctionInfo[]) { Object.defineProperty(this, 'functions', { value, writable: true, enumerable: true, configurable: true }); },
  });
  return { analysis, unslotted: h.unslotted, layout: { at, lines, texts }, functionCount };
}

function decodeFunctions(s: Strings, a: Int32Array, from: number): FunctionInfo[] {
  let i = from;
  let callNo = 0;
  const functions: FunctionInfo[] = new Array(a[i++]);
  for (let k = 0; k < functions.length; k++) {
    const index = a[i], line = a[i + 1], column = a[i + 2], start = a[i + 3], end = a[i + 4], flags = a[i + 5], np = a[i + 6];
    i += 7;
    const fs = s.f[k];
    const f = { index, name: fs[0] as string, line, column, start, end, isAsync: !!(flags & 1), isGenerator: !!(flags & 2), isArrow: !!(flags & 4), params: fs[1] as (string | null)[] } as FunctionInfo;
    lazyPoints(f, a, i, np, s.p, callNo);
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

function lazyPoints(f: FunctionInfo, a: Int32Array, from: number, np: number, calls: unknown[][], firstCall: number): void {
  const settle = (self: FunctionInfo, value: PointInfo[]) => Object.defineProperty(self, 'points', { value, writable: true, enumerable: true, configurable: true });
  Object.defineProperty(f, 'points', {
    enumerable: true,
    configurable: true,
    get(this: FunctionInfo) {
      const points: PointInfo[] = new Array(np);
      let callNo = firstCall;
      for (let q = 0, i = from; q < np; q++, i += 8) {
        const p: PointInfo = { index: a[i], kind: KINDS[a[i + 1]], line: a[i + 3], column: a[i + 4], pos: a[i + 5], end: a[i + 6] };
        const pf = a[i + 7];
        if (pf & 4) p.exit = EXITS[a[i + 2]];
        if (pf & 3) {
          const [callee, simpleArgs] = calls[callNo++] as [string, (string | null)[]];
          if (pf & 1) p.callee = callee;
          if (pf & 2) p.simpleArgs = simpleArgs;
        }
        points[q] = p;
      }
      if (keep) settle(this, points);
      return points;
    },
    set(this: FunctionInfo, v: PointInfo[]) { settle(this, v); },
  });
}
