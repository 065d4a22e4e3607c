// Which points of a function a selector names (entry, exit, throw, calls,
// call:<callee>, inner:<callee>, await, resume). Call sites are a function's
// calls to one callee, named by the callee's last name (`x.y.digest(...)` and
// `digest(...)` are both calls to `digest`). Used by the runtime in the target
// and by the tool (focus, cost prediction), so both agree. No imports: the
// target loads it.
import type { PointInfo } from './functions';

/** The name a callee's source text is grouped under (null: neither a plain nor a member name). */
export function calleeName(text: string): string | null {
  return /(?:^|\.)([A-Za-z_$][\w$]*)$/.exec(text)?.[1] ?? null;
}

/** Is this callee text a call to `want`? */
export function calleeMatches(want: string, text: string): boolean {
  return text === want || text.endsWith('.' + want);
}

const within = (a: PointInfo, b: PointInfo) => a !== b && b.pos <= a.pos && a.end <= b.end;

/**
 * The calls made while a call to `want` evaluates its receiver and arguments
 * (`a().b(c())`: a() and c() for b), outermost only: a call-site timer stops
 * around them, so that a chain of calls does not count its links twice.
 */
export function isInnerCall(want: string, p: PointInfo, points: readonly PointInfo[]): boolean {
  if (p.kind !== 'call') return false;
  const calls = points.filter((q) => q.kind === 'call');
  return calls.some((q) => q.callee !== undefined && calleeMatches(want, q.callee) && within(p, q) && !calls.some((r) => within(p, r) && within(r, q)));
}

/** Does the selector name this point of a function (`points`: all of the function's)? */
export function pointMatches(sel: string, p: PointInfo, points: readonly PointInfo[]): boolean {
  switch (sel) {
    case 'entry': return p.kind === 'entry';
    case 'exit': return p.kind === 'exit';
    case 'throw': return p.kind === 'exit' && p.exit === 'throw';
    case 'calls': return p.kind === 'call';
    case 'await': return p.kind === 'await';
    case 'resume': return p.kind === 'resume';
    default:
      if (sel.startsWith('call:')) return p.kind === 'call' && p.callee !== undefined && calleeMatches(sel.slice(5), p.callee);
      if (sel.startsWith('inner:')) return isInnerCall(sel.slice(6), p, points);
      return false;
  }
}
