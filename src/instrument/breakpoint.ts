// The breakpoint fallback: a point that has no slot (its script was refused
// for its LiveEdit pause, a function of it stayed active, or LiveEdit would
// have left its function on the old code) is reached by a conditional
// breakpoint whose condition runs the point's handlers and answers false, so
// the thread never actually pauses. V8 evaluates the condition in the paused
// frame, where the function's parameters are in scope. Each hit costs a
// debugger evaluation (tens to hundreds of microseconds: docs/BENCHMARKS.md).
import type { FunctionInfo, PointInfo } from '../analysis/functions';
import type { Insertion } from './transform';

/** A location V8 can break at (Debugger.getPossibleBreakpoints), with its offset in the script's current text. */
export interface BreakLocation { lineNumber: number; columnNumber: number; type?: string; offset: number }

/**
 * The name every breakpoint condition carries (a sourceURL comment). V8 compiles
 * a condition anew at each hit (its eval cache is off while the debugger is on)
 * and announces each copy as a new script: the relay and the tool know ours by
 * this name and drop them, and the inspector forgets them once collected (see
 * Thread.enable's maxScriptsCacheSize).
 */
export const CONDITION_URL = 'paranode-condition';

/** The condition of one breakpoint: its parts' handler calls in order, each answering false. */
export function conditionSource(parts: string[]): string {
  return `${parts.length === 1 ? parts[0] : `(${parts.join(',')})`}\n//# sourceURL=${CONDITION_URL}`;
}

/** pickBreakLocation's answer for a point that can never run (the end of a function that always returns) */
export const UNREACHABLE = 'unreachable';

/** Where an offset of the original text is after insertions (insertions at the same offset come before it). */
export function positionMap(ins: Insertion[]): (pos: number) => number {
  const sorted = [...ins].sort((a, b) => a.pos - b.pos);
  const prefix: number[] = [];
  let acc = 0;
  for (const x of sorted) prefix.push((acc += x.text.length));
  return (pos) => {
    let lo = 0, hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid].pos <= pos) lo = mid + 1; else hi = mid;
    }
    return pos + (lo === 0 ? 0 : prefix[lo - 1]);
  };
}

/** Offsets of line starts, to turn (line, column) into an offset and back. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  const re = /\r\n|[\n\r\u2028\u2029]/g;
  for (let m = re.exec(text); m; m = re.exec(text)) starts.push(m.index + m[0].length);
  return starts;
}

export function toLocation(starts: number[], offset: number): { lineNumber: number; columnNumber: number } {
  let lo = 0, hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid; else hi = mid - 1;
  }
  return { lineNumber: lo, columnNumber: offset - starts[lo] };
}

/**
 * The break location of a point among the function's own locations (offsets
 * already mapped to the current text), or why there is none.
 */
export function pickBreakLocation(fn: FunctionInfo, p: PointInfo, locs: BreakLocation[], map: (pos: number) => number): BreakLocation | string {
  const from = map(p.pos), to = map(p.end);
  const within = (l: BreakLocation) => l.offset >= from && l.offset <= to;
  switch (p.kind) {
    case 'entry':
      return locs.find((l) => l.offset >= from) ?? 'no break location in the function';
    case 'exit': {
      if (p.exit === 'throw') return 'a thrown exception cannot be caught by a breakpoint';
      // V8 breaks at a return after its value is computed, at the end of the statement;
      // falling off the end breaks at the closing brace (no location if unreachable)
      const ofStatement = (l: BreakLocation) => fn.points.some((q) => q.exit === 'return' && l.offset >= map(q.pos) && l.offset <= map(q.end));
      const returns = locs.filter((l) => l.type === 'return' && (p.exit === 'end' ? l.offset >= from && !ofStatement(l) : within(l)));
      return returns[returns.length - 1] ?? (p.exit === 'end' ? UNREACHABLE : 'no return location');
    }
    case 'call': {
      // the call's own location, not one of a call nested in its arguments or callee
      const nested = fn.points.filter((q) => q.kind === 'call' && q !== p && q.pos >= p.pos && q.end <= p.end);
      const own = locs.find((l) => l.type === 'call' && within(l) && !nested.some((q) => l.offset >= map(q.pos) && l.offset <= map(q.end)));
      return own ?? 'no call location';
    }
    case 'loop':
    case 'trip':
      return 'a loop has slots only in a program prepared at load (the dormant agent, or launched by paranode)';
    default:
      return `a breakpoint cannot mark ${p.kind} points`;
  }
}

/** The condition of a fallback breakpoint: run the handlers, never pause. */
export function breakCondition(no: number, fn: FunctionInfo, p: PointInfo, slot: number): string {
  const args = p.kind === 'entry' ? fn.params.map((a) => a ?? 'void 0') : p.kind === 'call' ? (p.simpleArgs ?? []).map((a) => a ?? 'void 0') : [];
  // typeof guards: a parameter the engine optimized away must not make the condition throw
  const safe = args.map((a) => (a === 'this' || a === 'void 0' || !/^[A-Za-z_$][\w$]*$/.test(a) ? a : `typeof ${a}==='undefined'?void 0:${a}`));
  return `globalThis[Symbol.for('paranode.runtime')].hit(${no},${fn.index},${slot}${safe.map((a) => `,(${a})`).join('')})`;
}
