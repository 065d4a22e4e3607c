// Which points of a function a selector names (entry, exit, throw, calls,
// call:<callee>, inner:<callee>, innerawait:<callee> and innerresume:<callee>
// (a call site's suspensions while it evaluates its receiver and arguments),
// await, resume, outercalls, outerawait and outerresume (those not made while a
// call evaluates its receiver and arguments), loops (every loop's entry), trips
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

/**
 * The calls made while a call to `want` evaluates its receiver and arguments
 * (`a().b(c())`: a() and c() for b), outermost only: a call-site timer stops
 * around them, so that a chain of calls does not count its links twice.
 */
export function isInnerCall(want: string, p: PointInfo, points: readonly PointInfo[]): boolean {
  return p.kind === 'call' && insideCallTo(want, p, points);
}

/** Is call or suspension p made while a call to `want` evaluates its receiver and arguments (outside any call in them)? */
function insideCallTo(want: string, p: PointInfo, points: readonly PointInfo[]): boolean {
  const q = enclosingCall(p, points);
  return !!q && q.callee !== undefined && calleeMatches(want, q.callee);
}

/** A suspension (await or yield, or the resumption after it) is made inside a call's receiver or arguments: `f(await x)`. */
const suspension = (p: PointInfo) => p.kind === 'await' || p.kind === 'resume';

/** Is p inside call q's range? A resumption is a point at the end of its await: one at a call's end is after the call. */
const inside = (p: PointInfo, q: PointInfo) => p !== q && q.pos <= p.pos && p.end <= q.end && (p.kind === 'call' || p.pos < q.end);

/** The innermost call whose receiver and arguments hold call or suspension p (null: none). */
export function enclosingCall(p: PointInfo, points: readonly PointInfo[]): PointInfo | null {
  const m = innermostCalls(points);
  if (m !== null) return m.get(p) ?? null;
  // by the definition, for a function with two calls over one range (never seen from the parser; kept exact)
  const calls = points.filter((q) => q.kind === 'call' && inside(p, q));
  return calls.find((q) => !calls.some((r) => r !== q && inside(r, q))) ?? null;
}

/**
 * A point that a function's own exclusive timer stops and starts around: a call or
 * suspension that is not made while another call evaluates its receiver and
 * arguments (in `f(g(x))` only f's: g runs while f's timer is stopped already, and
 * its post-call start would run it on through f), nor before the function's
 * entry (a parameter's default), nor in a frame of its own (a class field).
 */
function isOuter(p: PointInfo, points: readonly PointInfo[]): boolean {
  if (p.kind === 'call' && (p.otherFrame || p.pos < points[0].pos)) return false;
  return enclosingCall(p, points) === null;
}

const innermost = new WeakMap<readonly PointInfo[], Map<PointInfo, PointInfo | null> | null>();

/**
 * Each call and suspension point's innermost enclosing call (null: none), made once
 * per function's points: ranges nest, so one sweep in source order with a stack of
 * the calls still open (the search by definition is quadratic in the calls of a
 * function for every one of them: 40 s of the TypeScript compiler's 21,688
 * functions). Null where two calls share one range: there the definition is asked.
 */
export function innermostCalls(points: readonly PointInfo[]): Map<PointInfo, PointInfo | null> | null {
  const known = innermost.get(points);
  if (known !== undefined) return known;
  const swept = points.filter((q) => q.kind === 'call' || suspension(q)).sort((a, b) => a.pos - b.pos || b.end - a.end);
  let m: Map<PointInfo, PointInfo | null> | null = new Map();
  const open: PointInfo[] = [];
  for (const c of swept) {
    if (c.kind !== 'call') {
      // not pushed; the innermost open call that holds it (those above it on the stack ended before it)
      let i = open.length - 1;
      while (i >= 0 && !inside(c, open[i])) i--;
      m.set(c, i >= 0 ? open[i] : null);
      continue;
    }
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
    case 'outercalls': return p.kind === 'call' && isOuter(p, points);
    case 'outerawait': return p.kind === 'await' && isOuter(p, points);
    case 'outerresume': return p.kind === 'resume' && isOuter(p, points);
    case 'loops': return p.kind === 'loop';
    case 'trips': return p.kind === 'trip';
    default:
      if (sel.startsWith('call:')) return p.kind === 'call' && p.callee !== undefined && calleeMatches(sel.slice(5), p.callee);
      if (sel.startsWith('inner:')) return isInnerCall(sel.slice(6), p, points);
      if (sel.startsWith('innerawait:')) return p.kind === 'await' && insideCallTo(sel.slice(11), p, points);
      if (sel.startsWith('innerresume:')) return p.kind === 'resume' && insideCallTo(sel.slice(12), p, points);
      if (sel.startsWith('loop:') || sel.startsWith('loopexit:')) return p.kind === 'loop' && namedLoop(sel, points) === p;
      if (sel.startsWith('trip:')) return p.kind === 'trip' && namedLoop(sel, points) === points[p.index - 1];
      if (sel.startsWith('loopawait:') || sel.startsWith('loopresume:')) {
        const l = namedLoop(sel, points);
        return !!l && p.kind === (sel.startsWith('loopawait:') ? 'await' : 'resume') && l.pos <= p.pos && p.end <= l.end;
      }
      return false;
  }
}
