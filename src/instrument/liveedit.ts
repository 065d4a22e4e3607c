// Preparing an already-loaded script by LiveEdit: one batched edit that places
// slots at all its points, predicted safe against V8's diff before it is sent,
// refused when its predicted pause is over the limit, retried while a function
// it changes is active, and verified after.
import { analyzeScript, AnalyzedFunction, ScriptAnalysis } from '../analysis/functions';
import { applyInsertions, Insertion, planInsertions } from './transform';
import { compareStrings, damagedLiterals, Literal, v8LiteralStart } from './liveedit-diff';

export interface LiveEditPlan {
  code: string;
  analysis: ScriptAnalysis;
  /** points without a slot and why */
  unslotted: { fn: number; point: number; reason: string }[];
  /** predicted pause of the target in ms */
  predictedPauseMs: number;
  /** functions whose insertions were dropped so that LiveEdit maps them */
  dropped: number;
}

/**
 * Pause model fitted to the figures measured on Node 20 (DESIGN.md §2): a heap
 * walk that grows with the heap, plus re-parsing and recompiling the script.
 */
export function predictPauseMs(heapBytes: number, scriptChars: number): number {
  return 2 + 7 * (heapBytes / 1e6) + 0.004 * scriptChars;
}

const PAD_VARIANTS = ['void 0;', ' ', '0;', ';;'];
const PAD_RE = /(void 0;| |0;|;;)$/;

export function planLiveEdit(source: string, scriptNo: number, heapBytes: number): LiveEditPlan {
  const { analysis, fns } = analyzeScript(source);
  const plan = planInsertions(source, fns, scriptNo, 'liveedit');
  let ins = plan.ins;
  const unslotted = [...plan.unslotted];
  const oldLits = literals(source, fns);
  let dropped = 0;
  const pads = new Map<number, number>();
  let droppedTry = false;
  // Drop the insertions of every function predicted damaged (and those sitting
  // on its boundary lines) until V8 would map every function.
  for (let round = 0; round < 60; round++) {
    const code = applyInsertions(source, ins);
    const newLits = literalsAfter(oldLits, ins);
    const damaged = damagedLiterals(oldLits, newLits, compareStrings(source, code));
    if (damaged.size === 0) {
      return { code, analysis, unslotted, predictedPauseMs: predictPauseMs(heapBytes, source.length), dropped };
    }
    // V8's diff may align an inserted '}' with the function's own closing brace;
    // a little padding changes the alignment: try that first
    const throwOf = (fn: number) => fns[fn].points.findIndex((q) => q.exit === 'throw');
    const endOf = (fn: number) => fns[fn].points.findIndex((q) => q.exit === 'end');
    const padded = [...damaged].filter((id) => (pads.get(id) ?? 0) < PAD_VARIANTS.length);
    if (padded.length) {
      for (const id of padded) pads.set(id, (pads.get(id) ?? 0) + 1);
      ins = ins.map((x) => {
        const k = pads.get(x.fn);
        if (!k || !padded.includes(x.fn) || (x.point !== throwOf(x.fn) && x.point !== endOf(x.fn)) || x.pos !== fns[x.fn].node.end - 1) return x;
        const base = x.text.replace(PAD_RE, '');
        return { ...x, text: base + PAD_VARIANTS[k - 1] };
      });
      continue;
    }
    // then without the try/catch wrappers of the damaged functions
    if (!droppedTry) {
      droppedTry = true;
      const before = ins.length;
      ins = ins.filter((x) => !(damaged.has(x.fn) && x.point === throwOf(x.fn)));
      if (ins.length !== before) {
        for (const id of damaged) unslotted.push({ fn: id, point: throwOf(id), reason: 'LiveEdit would not map the try/catch wrapper' });
        continue;
      }
    }
    const bad = new Set<number>();
    for (const id of damaged) {
      const lit = oldLits[id];
      bad.add(id);
      // insertions near either boundary may belong to an enclosing function
      for (const x of ins) if (x.pos >= lit.start - 1 && x.pos <= lit.start + 1 || x.pos >= lit.end - 1 && x.pos <= lit.end + 1) bad.add(x.fn);
      // a long changed run covering the boundary: drop every insertion on those lines
      const lineStart = source.lastIndexOf('\n', lit.start) + 1;
      const lineEnd = source.indexOf('\n', lit.end);
      for (const x of ins) if ((x.pos >= lineStart && x.pos <= lit.start) || (x.pos >= lit.end && x.pos <= (lineEnd < 0 ? source.length : lineEnd))) bad.add(x.fn);
    }
    const before = ins.length;
    ins = ins.filter((x) => {
      if (!bad.has(x.fn)) return true;
      unslotted.push({ fn: x.fn, point: x.point, reason: 'LiveEdit would leave this function on its old code' });
      return false;
    });
    dropped += bad.size;
    if (ins.length === before) break;
  }
  // give up on slots for the whole script
  for (const x of ins) unslotted.push({ fn: x.fn, point: x.point, reason: 'LiveEdit cannot be made safe for this script' });
  return { code: source, analysis, unslotted: dedupe(unslotted), predictedPauseMs: 0, dropped };
}

function dedupe(list: LiveEditPlan['unslotted']): LiveEditPlan['unslotted'] {
  const seen = new Set<string>();
  return list.filter((u) => { const k = `${u.fn}:${u.point}`; if (seen.has(k)) return false; seen.add(k); return true; });
}

function literals(source: string, fns: AnalyzedFunction[]): Literal[] {
  return fns.map((f) => ({ id: f.index, start: v8LiteralStart(source, f.node), end: f.node.end }));
}

/** Where the old literals land in the new text, given our insertions. */
function literalsAfter(oldLits: Literal[], ins: Insertion[]): Literal[] {
  // Insertions at a literal's start belong inside it only if they sort after
  // the start; we place none there by construction except openers of
  // expressions that start with the literal (those sit before it).
  const sorted = [...ins].sort((a, b) => a.pos - b.pos);
  const prefixLen: number[] = [];
  let acc = 0;
  for (const x of sorted) { acc += x.text.length; prefixLen.push(acc); }
  const shiftBefore = (pos: number, inclusive: boolean) => {
    let lo = 0, hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid].pos < pos || (inclusive && sorted[mid].pos === pos)) lo = mid + 1; else hi = mid;
    }
    return lo === 0 ? 0 : prefixLen[lo - 1];
  };
  return oldLits.map((l) => ({
    id: l.id,
    start: l.start + shiftBefore(l.start, true),
    end: l.end + shiftBefore(l.end, false),
  }));
}
