// Foci: at most one resource per hierarchy, joined by ',' (the root of a
// hierarchy, or leaving it out, means all of it). A focus part with a glob
// stands for every resource it matches: one metric instance each.
import * as os from 'os';
import type { Session } from '../session/session';
import { FocusError, FocusPart } from '../mdl/evaluate';
import { HIERARCHIES } from '../mdl/library';
import { calleeName, loopName } from '../analysis/point-select';
import { parsePathLength } from '../data/call-path-profile';

const hierarchyOf = (p: string) => HIERARCHIES.find((h) => p === h || p.startsWith(h + '/'));
const isGlob = (p: string) => /[*?]/.test(p);

/** Split a focus into its parts, checking hierarchies (no resolution yet). */
export function splitFocus(focus: string): string[] {
  const parts = focus.split(',').map((p) => p.trim()).filter((p) => p && p !== '/');
  const seen = new Map<string, string>();
  for (const p of parts) {
    const h = hierarchyOf(p);
    if (!h) throw new FocusError(`focus "${focus}": ${p} is in no resource hierarchy (${HIERARCHIES.join(', ')})`);
    const other = seen.get(h);
    if (other) throw new FocusError(`focus "${focus}" names two resources of ${h} (${other} and ${p}); a focus picks at most one per hierarchy`);
    seen.set(h, p);
  }
  return parts.filter((p) => !HIERARCHIES.includes(p));
}

/** Every concrete focus a focus with globs stands for (the focus itself if it has none). */
export async function expandFocus(focus: string, sessions: Session[]): Promise<string[]> {
  const parts = splitFocus(focus);
  let combos: string[][] = [[]];
  for (const p of parts) {
    const options = isGlob(p) ? await expandPart(p, sessions) : [p];
    if (!options.length) throw new FocusError(`focus "${focus}": nothing matches ${p}`);
    combos = combos.flatMap((c) => options.map((o) => [...c, o]));
  }
  return combos.map((c) => c.join(','));
}

async function expandPart(p: string, sessions: Session[]): Promise<string[]> {
  const out = new Set<string>();
  if (p.startsWith('/Code/')) {
    for (const s of sessions) for (const r of await s.resources(p)) out.add(r.path);
    if (!out.size) {
      // a glob over modules: /Code/lib/*.js
      for (const s of sessions) for (const r of await s.resources(`${p}/*`)) out.add(`/Code/${r.module}`);
    }
  } else if (p.startsWith('/Thread/')) {
    const re = globRe(p);
    for (const s of sessions) for (const t of s.threadIds) { const path = `/Thread/${s.pid}/${t}`; if (re.test(path)) out.add(path); }
  } else if (p.startsWith('/Process/')) {
    const re = globRe(p);
    for (const s of sessions) if (re.test(s.processFocus)) out.add(s.processFocus);
  } else throw new FocusError(`${p}: globs are supported in /Code, /Thread and /Process`);
  return [...out].sort();
}

function globRe(glob: string): RegExp {
  return new RegExp('^' + glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]') + '$');
}

/**
 * A call site: `/Code/<module>/<function>/<callee>()`, the calls the function
 * makes to one callee, named by its last name (`x.y.digest(...)` is `digest()`).
 */
export function parseCallSite(p: string): { fn: string; callee: string } | null {
  const m = /^(\/Code\/.+)\/([A-Za-z_$][\w$]*)\(\)$/.exec(p);
  return m ? { fn: m[1], callee: m[2] } : null;
}

/** A loop as a focus names it: /Code/<module>/<function>/loop@<line>[:<column>]. */
export function parseLoop(p: string): { fn: string; loop: string } | null {
  const m = /^(\/Code\/.+)\/(loop@\d+(?::\d+)?)$/.exec(p);
  return m ? { fn: m[1], loop: m[2] } : null;
}

/**
 * A call path as a focus names it: /CallPath/<k>/<module>/<f1>><module>/<f2>...,
 * its last k functions (at most k of them: a path may be shorter), k a whole
 * number or inf. Its functions are checked when their profile is placed.
 */
export function parseCallPathFocus(p: string): Extract<FocusPart, { hierarchy: '/CallPath' }> {
  const m = /^\/CallPath\/([^/]+)\/(.+)$/.exec(p);
  const how = 'a call path is /CallPath/<k>/<module>/<f1>><module>/<f2>..., e.g. /CallPath/2/app.js/main>app.js/parse';
  if (!m) throw new FocusError(`${p}: ${how}`);
  let k: number;
  try { k = parsePathLength(m[1]); } catch (e) { throw new FocusError(`${p}: ${(e as Error).message}`); }
  const functions = m[2].split('>');
  if (functions.some((f) => !/^.+\/[^/]+$/.test(f))) throw new FocusError(`${p}: each function of the path is <module>/<function>; ${how}`);
  if (functions.length > k) throw new FocusError(`${p}: ${functions.length} functions on a path cut at k = ${k}`);
  if (new Set(functions).size !== functions.length) throw new FocusError(`${p}: a path names a function once (recursion folds into its outermost call)`);
  return { hierarchy: '/CallPath', path: p, k, functions };
}

/** Classify each part of a concrete focus against the sessions' resources. */
export async function resolveFocus(focus: string, sessions: Session[]): Promise<FocusPart[]> {
  const out: FocusPart[] = [];
  for (const p of splitFocus(focus)) {
    const cs = parseCallSite(p);
    const loop = parseLoop(p);
    if (loop) {
      let names: string[] | null = null;
      let found = false;
      for (const s of sessions) {
        const r = (await s.resources(loop.fn)).find((x) => x.path === loop.fn);
        if (!r) continue;
        const here = r.points.filter((q) => q.kind === 'loop').map((q) => loopName(q, r.points));
        found ||= here.includes(loop.loop);
        names = [...new Set([...(names ?? []), ...here])];
      }
      if (!found) {
        throw new FocusError(names ? `unknown loop ${p}: ${loop.fn} has ${names.length ? `the loops ${names.join(', ')}` : 'no loop'}`
          : `unknown resource: no function ${loop.fn} (of loop ${p}) in ${sessions.map((s) => `process ${s.pid}`).join(', ')}`);
      }
      out.push({ hierarchy: '/Code', kind: 'loop', path: p, ...loop });
    } else if (cs) {
      let found = false, fn = false;
      for (const s of sessions) {
        const r = (await s.resources(cs.fn)).filter((x) => x.path === cs.fn);
        fn ||= r.length > 0;
        found ||= r.some((x) => x.points.some((q) => q.kind === 'call' && q.callee && calleeName(q.callee) === cs.callee));
      }
      if (!found) throw new FocusError(fn ? `unknown call site ${p}: ${cs.fn} makes no call to ${cs.callee}()` : `unknown resource: no function ${cs.fn} (of call site ${p}) in ${sessions.map((s) => `process ${s.pid}`).join(', ')}`);
      out.push({ hierarchy: '/Code', kind: 'callsite', path: p, ...cs });
    } else if (p.startsWith('/Code/')) {
      let kind: 'function' | 'module' | null = null;
      for (const s of sessions) {
        if ((await s.resources(p)).some((r) => r.path === p)) { kind = 'function'; break; }
        if ((await s.resources(`${p}/*`)).length) { kind = 'module'; break; }
      }
      if (!kind) throw new FocusError(`unknown resource: no function or module ${p} in ${sessions.map((s) => `process ${s.pid}`).join(', ')}`);
      out.push({ hierarchy: '/Code', kind, path: p });
    } else if (p.startsWith('/Thread/')) {
      const m = /^\/Thread\/(\d+)\/([^/]+)$/.exec(p);
      const s = m && sessions.find((x) => x.pid === Number(m[1]));
      if (!m || !s || !s.threadIds.includes(m[2])) {
        throw new FocusError(`unknown thread ${p} (threads: ${sessions.flatMap((x) => x.threadIds.map((t) => `/Thread/${x.pid}/${t}`)).join(', ')})`);
      }
      out.push({ hierarchy: '/Thread', path: p, pid: s.pid, thread: m[2] });
    } else if (p.startsWith('/Process/')) {
      const m = /^\/Process\/(?:([^/:]+):)?(\d+)$/.exec(p);
      const s = m && sessions.find((x) => x.pid === Number(m[2]));
      if (!m || !s) throw new FocusError(`unknown process ${p} (processes: ${sessions.map((x) => x.processFocus).join(', ')})`);
      out.push({ hierarchy: '/Process', path: s.processFocus, pid: s.pid });
    } else if (p.startsWith('/CallPath/')) {
      out.push(parseCallPathFocus(p));
    } else if (p.startsWith('/Machine/')) {
      const host = p.slice('/Machine/'.length);
      if (host !== os.hostname()) throw new FocusError(`unknown machine ${p} (this is /Machine/${os.hostname()})`);
      out.push({ hierarchy: '/Machine', path: p, host });
    } else out.push({ hierarchy: '/SyncObject', path: p });
  }
  return out;
}
