// Where a prepared script's insertions sit, so that the in-target runtime can
// show the program its own text and positions: stack-frame columns of the
// original, and Function.prototype.toString of the original function.
import type { AnalyzedFunction } from '../analysis/functions';
import type { Insertion } from './transform';

export interface ScriptLayout {
  /** per insertion, in order: offset in the prepared text, length */
  at: number[];
  /** per line (1-based) that has insertions: [column in the prepared text, length, ...] */
  lines: Record<number, number[]>;
  /**
   * per function-like node (functions; classes, whose constructors print the
   * class): [offset in the prepared text, length there, original length,
   * function of the first insertion inside]; nodes without insertions are left out
   */
  texts: number[];
}

/**
 * The layout of `sorted` insertions (as applied) over `source`; `ranges` are the
 * original source ranges of the function-like nodes (see textRanges).
 */
export function scriptLayout(sorted: Insertion[], ranges: [number, number][], lineOf: (pos: number) => { line: number; column: number }): ScriptLayout {
  const at: number[] = [];
  const lines: Record<number, number[]> = {};
  const cum = [0]; // inserted length before insertion i
  let line = -1;
  let lineShift = 0;
  for (const x of sorted) {
    const { line: l, column } = lineOf(x.pos);
    if (l !== line) { line = l; lineShift = 0; }
    at.push(x.pos + cum[cum.length - 1], x.text.length);
    (lines[l] ??= []).push(column + lineShift, x.text.length);
    cum.push(cum[cum.length - 1] + x.text.length);
    lineShift += x.text.length;
  }
  const lowerBound = (p: number, strict: boolean) => {
    let lo = 0, hi = sorted.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (sorted[m].pos < p || (strict && sorted[m].pos === p)) lo = m + 1; else hi = m; }
    return lo;
  };
  const texts: number[] = [];
  for (const [start, end] of ranges) {
    // inside: insertions after its first character, and at its end the closes of wraps opened inside it
    const i = lowerBound(start, true);
    let j = lowerBound(end, false);
    while (j < sorted.length && sorted[j].pos === end && sorted[j].phase === 0 && sorted[j].start > start) j++;
    if (i >= j) continue;
    texts.push(start + cum[i], end - start + cum[j] - cum[i], end - start, sorted[i].fn);
  }
  return { at, lines, texts };
}

/** The source range V8 prints for a function (a static method prints without `static`). */
export function functionTextRange(source: string, f: AnalyzedFunction): [number, number] {
  let start = f.start;
  if (f.start !== f.node.start) {
    const m = /^static\b\s*/.exec(source.slice(start, start + 40));
    if (m) start += m[0].length;
  }
  return [start, f.node.end];
}
