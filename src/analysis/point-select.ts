// Which points of a function a selector names (entry, exit, throw, calls,
// call:<callee>, inner:<callee>, await, resume, loops (every loop's entry), trips
// (every loop's iterations); of one loop loop:<name> (its entry),
// loopexit:<name>, trip:<name> (each iteration), loopawait:<name> and
// loopresume:<name> (the function's suspensions inside it)). Call sites are a function's
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
  const m = innermostCalls(points);
  if (m === null) return isInnerCallBySearch(want, p, points);
  const q = m.get(p);
  return !!q && q.callee !== undefined && calleeMatches(want, q.callee);
}

/** The same by its definition, for a function with two calls over one range (never seen from the parser; kept exact). */
function isInnerCallBySearch(want: string, p: PointInfo, points: readonly PointInfo[]): boolean {
  const calls = points.filter((q) => q.kind === 'call');
  return calls.some((q) => q.callee !== undefined && calleeMatches(want, q.callee) && within(p, q) && !calls.some((r) => within(p, r) && within(r, q)));
}

const innermost = new WeakMap<readonly PointInfo[], Map<PointInfo, PointInfo | null> | null>();

/**
 * Each call point's innermost enclosing call (null: none), made once per function's
 * points: ranges nest, so one sweep in source order with a stack of the calls still
 * open (the search by definition is quadratic in the calls of a function for every
 * one of them: 40 s of the TypeScript compiler's 21,688 functions). Null where two
 * calls share one range: there the definition is asked.
 */
export function innermostCalls(points: readonly PointInfo[]): Map<PointInfo, PointInfo | null> | null {
  const known = innermost.get(points);
  if (known !== undefined) return known;
  const calls = points.filter((q) => q.kind === 'call').sort((a, b) => a.pos - b.pos || b.end - a.end);
  let m: Map<PointInfo, PointInfo | null> | null = new Map();
  const open: PointInfo[] = [];
  for (const c of calls) {
    while (open.length && open[open.length - 1].end < c.end) open.pop();
    const top = open.length ? open[open.length - 1] : null;
    if (top && top.pos === c.pos && top.end === c.end) { m = null; break; }
    m.set(c, top);
    open.push(c);
  }
  innermost.set(points, m);
  return m;
}

/**
 * A loop's name within its function: `loop@<line>`, or `loop@<line>:<column>`
 * where another loop of the function starts on the same line (minified code).
 */
export function loopName(p: PointInfo, points: readonly PointInfo[]): string {
  const shared = points.some((q) => q !== p && q.kind === 'loop' && q.line === p.line);
  return shared ? `loop@${p.line}:${p.column}` : `loop@${p.line}`;
}

/** The selector of a loop's point named in MDL (`.entry` of a loop is `loop:<name>`), or null: a loop has no such point. */
export function loopSelector(attr: string, name: string): string | null {
  const kind = ({ entry: 'loop', exit: 'loopexit', trips: 'trip', await: 'loopawait', resume: 'loopresume' } as Record<string, string>)[attr];
  return kind ? `${kind}:${name}` : null;
}

/** The loop point of a function named `name` (`loop@12`, as loopName gives it), or null. */
export function loopNamed(name: string, points: readonly PointInfo[]): PointInfo | null {
  return points.find((q) => q.kind === 'loop' && loopName(q, points) === name) ?? null;
}

/** The loop a loop-selector names (`loop:loop@12` and the like), or null. */
function namedLoop(sel: string, points: readonly PointInfo[]): PointInfo | null {
  return loopNamed(sel.slice(sel.indexOf(':') + 1), points);
}

/** The handler slot a selector's placement runs in: after a call (postInsn) and after a loop (postInsn, or loopexit:) are the point's second slot. */
export function slotOf(sel: string, where: 'preInsn' | 'postInsn', p: PointInfo): number {
  return 2 * p.index + (((p.kind === 'call' || p.kind === 'loop') && where === 'postInsn') || (p.kind === 'loop' && sel.startsWith('loopexit:')) ? 1 : 0);
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
    case 'loops': return p.kind === 'loop';
    case 'trips': return p.kind === 'trip';
    default:
      if (sel.startsWith('call:')) return p.kind === 'call' && p.callee !== undefined && calleeMatches(sel.slice(5), p.callee);
      if (sel.startsWith('inner:')) return isInnerCall(sel.slice(6), p, points);
      if (sel.startsWith('loop:') || sel.startsWith('loopexit:')) return p.kind === 'loop' && namedLoop(sel, points) === p;
      if (sel.startsWith('trip:')) return p.kind === 'trip' && namedLoop(sel, points) === points[p.index - 1];
      if (sel.startsWith('loopawait:') || sel.startsWith('loopresume:')) {
        const l = namedLoop(sel, points);
        return !!l && p.kind === (sel.startsWith('loopawait:') ? 'await' : 'resume') && l.pos <= p.pos && p.end <= l.end;
      }
      return false;
  }
}
