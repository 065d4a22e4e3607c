// A model of how V8 (11.x, Node 20) maps functions across a LiveEdit, used to
// predict before sending a Debugger.setScriptSource which functions would keep
// their old code. It follows the public algorithm of deps/v8/src/debug/
// liveedit.cc and liveedit-diff.cc: a line-level Myers diff (common prefix and
// suffix lines trimmed first), a character-level Myers diff inside each
// changed run shorter than 800 characters, then function literals mapped by
// their translated start/end positions; a literal whose translated range has
// no new literal, or that starts or ends inside a changed range, is "damaged".

export interface Change {
  start: number; end: number; newStart: number; newEnd: number;
  /** a run of changed lines too long for the character diff, changed as a whole */
  whole?: boolean;
}

type Sink = (pos1: number, pos2: number, len1: number, len2: number) => void;

/**
 * Myers' O(ND) diff with the linear-space refinement, in the order V8 walks it
 * (its FurthestReaching vectors of length |A|+|B|+1 indexed from the end for a
 * negative diagonal, kept as is). Both sequences are Int32Arrays (line ids or char
 * codes) and the search is a plain function over them: one element type keeps its
 * loads monomorphic, which is most of a plan's time (a script is diffed again in
 * each round of remedies).
 */
function myers(A: Int32Array, B: Int32Array, sink: Sink): void {
  const st = new DiffState(A, B);
  if (!findPath(st, 0, 0, A.length, B.length)) return;
  const path = st.path;
  let openX = -1, openY = -1;
  const noMod = (x: number, y: number) => { if (openX >= 0) { sink(openX, openY, x - openX, y - openY); openX = -1; } };
  const insDel = (x: number, y: number) => { if (openX < 0) { openX = x; openY = y; } };
  for (let i = 2; i < path.length; i += 2) {
    let x = path[i - 2], y = path[i - 1];
    const x2 = path[i], y2 = path[i + 1];
    while (x < x2 && y < y2 && A[x] === B[y]) { noMod(x, y); x++; y++; }
    const cmp = (x2 - x) - (y2 - y);
    if (cmp === -1) { insDel(x, y); y++; } else if (cmp === 1) { insDel(x, y); x++; }
    while (x < x2 && y < y2 && A[x] === B[y]) { noMod(x, y); x++; y++; }
  }
  noMod(path[path.length - 2], path[path.length - 1]);
}

class DiffState {
  readonly size: number;
  readonly fwd: Int32Array;
  readonly rev: Int32Array;
  /** path points as flat (x, y) pairs */
  readonly path: number[] = [];
  /** the middle snake found last: x0, y0, x1, y1 */
  readonly snake = new Int32Array(4);
  constructor(readonly A: Int32Array, readonly B: Int32Array) {
    this.size = A.length + B.length + 1;
    this.fwd = new Int32Array(this.size);
    this.rev = new Int32Array(this.size);
  }
}

// FindEditPath: returns false for an empty area (the caller then adds the snake end itself)
function findPath(st: DiffState, fx: number, fy: number, tx: number, ty: number): boolean {
  if (!middleSnake(st, fx, fy, tx, ty)) return false;
  const sn = st.snake;
  const a0 = sn[0], b0 = sn[1], a1 = sn[2], b1 = sn[3];
  if (!findPath(st, fx, fy, a0, b0)) st.path.push(a0, b0);
  if (!findPath(st, a1, b1, tx, ty)) st.path.push(a1, b1);
  return true;
}

function middleSnake(st: DiffState, fx0: number, fy0: number, tx1: number, ty1: number): boolean {
  const { A, B, fwd, rev, size, snake } = st;
  const w = tx1 - fx0;
  const h = ty1 - fy0;
  if (w + h === 0) return false;
  const delta = w - h;
  const odd = (delta & 1) !== 0;
  // a diagonal k is at fwd[k] / rev[k], a negative one at [size + k]
  fwd[1] = fx0;
  rev[size - 1] = tx1;
  const limit = Math.ceil((w + h) / 2);
  for (let d = 0; d <= limit; d++) {
    for (let k = -d; k <= d; k += 2) {
      let fx: number, x: number;
      const below = fwd[k - 1 >= 0 ? k - 1 : size + k - 1], above = fwd[k + 1 >= 0 ? k + 1 : size + k + 1];
      if (k === -d || (k !== d && below < above)) { fx = x = above; } else { fx = below; x = fx + 1; }
      let y = fy0 + (x - fx0) - k;
      const fy = d === 0 || fx !== x ? y : y - 1;
      while (x < tx1 && y < ty1 && A[x] === B[y]) { x++; y++; }
      fwd[k >= 0 ? k : size + k] = x;
      const l = k - delta;
      if (odd && l >= -d + 1 && l <= d - 1 && x >= rev[l >= 0 ? l : size + l]) { snake[0] = fx; snake[1] = fy; snake[2] = x; snake[3] = y; return true; }
    }
    for (let l = d; l >= -d; l -= 2) {
      let fx: number, x: number;
      const below = rev[l - 1 >= 0 ? l - 1 : size + l - 1], above = rev[l + 1 >= 0 ? l + 1 : size + l + 1];
      if (l === d || (l !== -d && below > above)) { fx = x = below; } else { fx = above; x = fx - 1; }
      const k = l + delta;
      let y = fy0 + (x - fx0) - k;
      const fy = d === 0 || fx !== x ? y : y + 1;
      while (fx0 < x && fy0 < y && A[x - 1] === B[y - 1]) { x--; y--; }
      rev[l >= 0 ? l : size + l] = x;
      if (!odd && k >= -d && k <= d && x <= fwd[k >= 0 ? k : size + k]) { snake[0] = x; snake[1] = y; snake[2] = fx; snake[3] = fy; return true; }
    }
  }
  return false;
}

/** Line starts as V8's String::CalculateLineEnds sees them (\n, \r, \r\n, U+2028, U+2029). */
function lineStarts(s: string): number[] {
  const starts = [0];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 10 || c === 0x2028 || c === 0x2029 || (c === 13 && s.charCodeAt(i + 1) !== 10)) starts.push(i + 1);
  }
  starts.push(s.length); // end sentinel (start of the imaginary line after the last)
  return starts;
}

const CHUNK_LEN_LIMIT = 800;

/**
 * The changed ranges V8 computes between two sources. With `sameLines`, the
 * line-level diff is taken to be the runs of differing lines (what V8 finds
 * when text is only inserted within lines); callers confirm with the full diff.
 */
export function compareStrings(s1: string, s2: string, sameLines = false): Change[] {
  const l1 = lineStarts(s1);
  const l2 = lineStarts(s2);
  const n1 = l1.length - 1;
  const n2 = l2.length - 1;
  // lines interned to integer ids: equal ids <=> equal text (terminator included)
  const ids = new Map<string, number>();
  const intern = (str: string, starts: number[], n: number) => {
    const out = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const line = str.slice(starts[i], starts[i + 1]);
      let id = ids.get(line);
      if (id === undefined) { id = ids.size; ids.set(line, id); }
      out[i] = id;
    }
    return out;
  };
  const id1 = intern(s1, l1, n1);
  const id2 = intern(s2, l2, n2);
  const lineEq = (i: number, j: number) => id1[i] === id2[j];
  const codes = (str: string, from: number, len: number) => {
    const out = new Int32Array(len);
    for (let i = 0; i < len; i++) out[i] = str.charCodeAt(from + i);
    return out;
  };
  let prefix = 0;
  while (prefix < Math.min(n1, n2) && lineEq(prefix, prefix)) prefix++;
  let suffix = 0;
  while (suffix < Math.min(n1 - prefix, n2 - prefix) && lineEq(n1 - suffix - 1, n2 - suffix - 1)) suffix++;
  const out: Change[] = [];
  const lineChunk = (lp1: number, lp2: number, ll1: number, ll2: number) => {
    const c1 = l1[lp1], c2 = l2[lp2];
    const cl1 = l1[lp1 + ll1] - c1;
    const cl2 = l2[lp2 + ll2] - c2;
    if (cl1 < CHUNK_LEN_LIMIT && cl2 < CHUNK_LEN_LIMIT) {
      myers(codes(s1, c1, cl1), codes(s2, c2, cl2), (p1, p2, n1_, n2_) => {
        out.push({ start: c1 + p1, end: c1 + p1 + n1_, newStart: c2 + p2, newEnd: c2 + p2 + n2_ });
      });
    } else out.push({ start: c1, end: c1 + cl1, newStart: c2, newEnd: c2 + cl2, whole: true });
  };
  if (sameLines && n1 === n2) {
    for (let i = 0; i < n1;) {
      if (lineEq(i, i)) { i++; continue; }
      let j = i;
      while (j < n1 && !lineEq(j, j)) j++;
      lineChunk(i, i, j - i, j - i);
      i = j;
    }
    return out;
  }
  myers(id1.subarray(prefix, n1 - suffix), id2.subarray(prefix, n2 - suffix),
    (lp1, lp2, ll1, ll2) => lineChunk(lp1 + prefix, lp2 + prefix, ll1, ll2));
  return out;
}

export interface Literal { id: number; start: number; end: number }

/**
 * Which old literals V8 would find no counterpart for. `newLiterals` are the
 * literals of the new source in the same order (the edit adds no functions).
 */
export function damagedLiterals(oldLits: Literal[], newLits: Literal[], diffs: Change[]): Set<number> {
  type Ev = { pos: number; type: 0 | 1 | 2 | 3; lit?: Literal; diff?: number };
  const ev: Ev[] = [];
  for (const l of oldLits) { ev.push({ pos: l.start, type: 0, lit: l }); ev.push({ pos: l.end, type: 1, lit: l }); }
  for (const d of diffs) {
    const diff = (d.newEnd - d.newStart) - (d.end - d.start);
    ev.push({ pos: d.start, type: 2, diff }); ev.push({ pos: d.end, type: 3, diff });
  }
  ev.sort((a, b) => {
    if (a.pos !== b.pos) return a.pos - b.pos;
    if (a.type !== b.type) return a.type - b.type;
    if (a.type === 0) return (b.lit!.end - a.lit!.end) || (a.lit!.id - b.lit!.id);
    if (a.type === 1) return (b.lit!.start - a.lit!.start) || (b.lit!.id - a.lit!.id);
    return a.diff! - b.diff!;
  });
  let inside = false;
  let delta = 0;
  const mapped = new Map<number, { s: number; e: number }>();
  for (const e of ev) {
    if (e.type === 3) { inside = false; delta += e.diff!; } else if (e.type === 2) inside = true;
    else if (e.type === 0) mapped.set(e.lit!.id, { s: inside ? -1 : e.pos + delta, e: -1 });
    else mapped.get(e.lit!.id)!.e = inside ? -1 : e.pos + delta;
  }
  const newKeys = new Set(newLits.map((l) => `${l.start}:${l.end}`));
  const damaged = new Set<number>();
  for (const l of oldLits) {
    const m = mapped.get(l.id)!;
    if (m.s < 0 || m.e < 0 || !newKeys.has(`${m.s}:${m.e}`)) damaged.add(l.id);
  }
  return damaged;
}

/** V8's start position of a function literal: its parameter list (or sole parameter). */
export function v8LiteralStart(source: string, node: any): number {
  if (node.type === 'ArrowFunctionExpression') {
    let p = node.start;
    if (node.async && source.startsWith('async', p)) {
      p += 5;
      while (p < node.end && /\s/.test(source[p])) p++;
      // comments between async and the parameters are not handled (rare)
    }
    return p;
  }
  const from = node.id ? node.id.end : node.start;
  const i = source.indexOf('(', from);
  return i < 0 ? node.start : i;
}
