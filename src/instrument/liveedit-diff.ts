// A model of how V8 (11.x, Node 20) maps functions across a LiveEdit, used to
// predict before sending a Debugger.setScriptSource which functions would keep
// their old code. It follows the public algorithm of deps/v8/src/debug/
// liveedit.cc and liveedit-diff.cc: a line-level Myers diff (common prefix and
// suffix lines trimmed first), a character-level Myers diff inside each
// changed run shorter than 800 characters, then function literals mapped by
// their translated start/end positions; a literal whose translated range has
// no new literal, or that starts or ends inside a changed range, is "damaged".

export interface Change { start: number; end: number; newStart: number; newEnd: number }

interface Input { len1: number; len2: number; eq(i: number, j: number): boolean }
type Sink = (pos1: number, pos2: number, len1: number, len2: number) => void;

/** Myers' O(ND) diff with the linear-space refinement, in the order V8 walks it. */
function myers(input: Input, sink: Sink): void {
  const size = input.len1 + input.len2 + 1;
  const fwd = new Int32Array(size);
  const rev = new Int32Array(size);
  const at = (a: Int32Array, i: number) => (i >= 0 ? i : size + i);
  type P = { x: number; y: number };
  const lt = (a: P, b: P) => a.x < b.x && a.y < b.y;

  const middleSnake = (from: P, to: P): [P, P] | null => {
    const w = to.x - from.x;
    const h = to.y - from.y;
    if (w + h === 0) return null;
    const delta = w - h;
    fwd[at(fwd, 1)] = from.x;
    rev[at(rev, -1)] = to.x;
    const limit = Math.ceil((w + h) / 2);
    for (let d = 0; d <= limit; d++) {
      for (let k = -d; k <= d; k += 2) {
        let fx: number, tx: number;
        if (k === -d || (k !== d && fwd[at(fwd, k - 1)] < fwd[at(fwd, k + 1)])) { fx = tx = fwd[at(fwd, k + 1)]; } else { fx = fwd[at(fwd, k - 1)]; tx = fx + 1; }
        let ty = from.y + (tx - from.x) - k;
        const fy = d === 0 || fx !== tx ? ty : ty - 1;
        let t: P = { x: tx, y: ty };
        while (lt(t, to) && input.eq(t.x, t.y)) { t = { x: t.x + 1, y: t.y + 1 }; }
        tx = t.x; ty = t.y;
        fwd[at(fwd, k)] = tx;
        const l = k - delta;
        if (delta % 2 !== 0 && l >= -d + 1 && l <= d - 1 && tx >= rev[at(rev, l)]) return [{ x: fx, y: fy }, { x: tx, y: ty }];
      }
      for (let l = d; l >= -d; l -= 2) {
        let fx: number, tx: number;
        if (l === d || (l !== -d && rev[at(rev, l - 1)] > rev[at(rev, l + 1)])) { fx = tx = rev[at(rev, l - 1)]; } else { fx = rev[at(rev, l + 1)]; tx = fx - 1; }
        const k = l + delta;
        let ty = from.y + (tx - from.x) - k;
        const fy = d === 0 || fx !== tx ? ty : ty + 1;
        while (lt(from, { x: tx, y: ty }) && input.eq(tx - 1, ty - 1)) { tx--; ty--; }
        rev[at(rev, l)] = tx;
        if (delta % 2 === 0 && k >= -d && k <= d && tx <= fwd[at(fwd, k)]) return [{ x: tx, y: ty }, { x: fx, y: fy }];
      }
    }
    return null;
  };

  const path = (from: P, to: P): P[] | null => {
    const snake = middleSnake(from, to);
    if (!snake) return null;
    const head = path(from, snake[0]);
    const tail = path(snake[1], to);
    return [...(head ?? [snake[0]]), ...(tail ?? [snake[1]])];
  };

  const points = path({ x: 0, y: 0 }, { x: input.len1, y: input.len2 });
  if (!points) return;
  let open: P | null = null;
  const noMod = (p: P) => { if (open) { sink(open.x, open.y, p.x - open.x, p.y - open.y); open = null; } };
  const insDel = (p: P) => { if (!open) open = { ...p }; };
  const walk = (p1: P, p2: P): P => {
    while (p1.x < p2.x && p1.y < p2.y && input.eq(p1.x, p1.y)) { noMod(p1); p1 = { x: p1.x + 1, y: p1.y + 1 }; }
    return p1;
  };
  for (let i = 1; i < points.length; i++) {
    let p1 = points[i - 1];
    const p2 = points[i];
    p1 = walk(p1, p2);
    const cmp = (p2.x - p1.x) - (p2.y - p1.y);
    if (cmp === -1) { insDel(p1); p1 = { x: p1.x, y: p1.y + 1 }; } else if (cmp === 1) { insDel(p1); p1 = { x: p1.x + 1, y: p1.y }; }
    walk(p1, p2);
  }
  noMod(points[points.length - 1]);
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

/** The changed ranges V8 computes between two sources. */
export function compareStrings(s1: string, s2: string): Change[] {
  const l1 = lineStarts(s1);
  const l2 = lineStarts(s2);
  const n1 = l1.length - 1;
  const n2 = l2.length - 1;
  const lineEq = (i: number, j: number) => {
    const a0 = l1[i], a1 = l1[i + 1], b0 = l2[j], b1 = l2[j + 1];
    if (a1 - a0 !== b1 - b0) return false;
    for (let k = 0; k < a1 - a0; k++) if (s1.charCodeAt(a0 + k) !== s2.charCodeAt(b0 + k)) return false;
    return true;
  };
  let prefix = 0;
  while (prefix < Math.min(n1, n2) && lineEq(prefix, prefix)) prefix++;
  let suffix = 0;
  while (suffix < Math.min(n1 - prefix, n2 - prefix) && lineEq(n1 - suffix - 1, n2 - suffix - 1)) suffix++;
  const out: Change[] = [];
  myers({ len1: n1 - prefix - suffix, len2: n2 - prefix - suffix, eq: (i, j) => lineEq(i + prefix, j + prefix) }, (lp1, lp2, ll1, ll2) => {
    lp1 += prefix; lp2 += prefix;
    const c1 = l1[lp1], c2 = l2[lp2];
    const cl1 = l1[lp1 + ll1] - c1;
    const cl2 = l2[lp2 + ll2] - c2;
    if (cl1 < CHUNK_LEN_LIMIT && cl2 < CHUNK_LEN_LIMIT) {
      myers({ len1: cl1, len2: cl2, eq: (i, j) => s1.charCodeAt(c1 + i) === s2.charCodeAt(c2 + j) }, (p1, p2, n1_, n2_) => {
        out.push({ start: c1 + p1, end: c1 + p1 + n1_, newStart: c2 + p2, newEnd: c2 + p2 + n2_ });
      });
    } else out.push({ start: c1, end: c1 + cl1, newStart: c2, newEnd: c2 + cl2 });
  });
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
