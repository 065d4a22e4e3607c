// Evaluating MDL for a request: a metric and a focus become the snippets to
// place (resource glob, point, placement, snippet text) and the constraint
// flags they need. This is the part of MDL that runs when a request arrives
// (the other part runs in the target as snippets).
import * as acorn from 'acorn';
import type { ConstraintDecl, ListRef, MetricDecl, PointRef, ResourceRef, Stmt } from './ast';
import { LOOP_LEVEL, MdlLibrary, visitIdentifiers } from './library';
import { loopSelector } from '../analysis/point-select';

export class FocusError extends Error {}

/** One resource of a focus, classified. */
export type FocusPart =
  | { hierarchy: '/Code'; kind: 'function' | 'module'; path: string }
  /** the calls a function makes to one callee (by its last name): /Code/<module>/<function>/<callee>() */
  | { hierarchy: '/Code'; kind: 'callsite'; path: string; fn: string; callee: string }
  /** a loop of a function: /Code/<module>/<function>/loop@<line>[:<column>] */
  | { hierarchy: '/Code'; kind: 'loop'; path: string; fn: string; loop: string }
  | { hierarchy: '/Thread'; path: string; pid: number; thread: string }
  | { hierarchy: '/Process'; path: string; pid: number }
  | { hierarchy: '/Machine'; path: string; host: string }
  | { hierarchy: '/SyncObject'; path: string }
  /** a call path: its last k functions ("<module>/<function>"), outermost first */
  | { hierarchy: '/CallPath'; path: string; k: number; functions: string[] };

export interface Placement {
  resource: string;
  /** entry | exit | throw | calls | call:<callee> | await | resume */
  point: string;
  where: 'preInsn' | 'postInsn';
  order: 'append' | 'prepend';
  /** snippet text with the metric's and the flags' variables */
  snippet: string;
  /** items of a list may be absent from the program: dropped silently (and applied if they appear) */
  optional: boolean;
}

/** A constraint flag: shared by every request that needs the same constraint on the same resource. */
export interface FlagPlan { key: string; variable: string; constraint: string; resource: string; placements: Placement[] }

export interface Plan {
  /** the metric's own snippets (none for a value the runtime measures) */
  placements: Placement[];
  flags: FlagPlan[];
  /** the metric's variable, and what it is */
  variable: string;
  kind: 'counter' | 'wallTimer' | 'processTimer' | 'thread' | 'path';
  /** for kind 'thread': which runtime value; for kind 'path': which statistic of the path */
  threadValue?: string;
  /** for kind 'path': the path (its placements profile its functions) */
  callPath?: { k: number; functions: string[] };
  /** placement constraints: only these threads / processes */
  threads?: { pid: number; thread: string }[];
  processes?: number[];
}

/** A plan measured by a wall or CPU timer of its own (not a thread's value, not a call path). */
export function isTimerPlan(plan: Plan): boolean {
  return plan.kind === 'wallTimer' || plan.kind === 'processTimer';
}

/** The constraint hierarchy of each level of /Code. */
const CODE_LEVEL = { module: '/Code', function: '/Code/*', callsite: '/Code/*/*', loop: LOOP_LEVEL } as const;

/** Which of the metric's constraints applies to a focus part (or why none does). */
export function constraintFor(lib: MdlLibrary, m: MetricDecl, part: FocusPart): ConstraintDecl {
  const want = part.hierarchy === '/Code' ? CODE_LEVEL[part.kind] : part.hierarchy;
  const allowed = m.constraints.map((c) => lib.constraints.get(c.name)!);
  // a /SyncObject constraint names its kind (/SyncObject/File) and covers its instances
  const c = part.hierarchy === '/SyncObject'
    ? allowed.find((x) => x.hierarchy !== '/SyncObject' && (part.path === x.hierarchy || part.path.startsWith(x.hierarchy + '/')))
    : allowed.find((x) => x.hierarchy === want);
  if (c) return c;
  const what = part.hierarchy === '/Code' ? `${{ callsite: 'a call site', loop: 'a loop', function: 'a function', module: 'a module' }[part.kind]} (${want})` : part.hierarchy === '/SyncObject' ? part.path : want;
  throw new FocusError(`metric ${m.name} cannot be constrained to ${what}: it allows ${allowed.length ? allowed.map((x) => `${x.name} (${x.hierarchy})`).join(', ') : 'no constraint'}`);
}

/**
 * Plan a request. `variable` is the instance's own counter/timer name and
 * `flagVariable` names (and so shares) a constraint flag by its key.
 */
export function planRequest(lib: MdlLibrary, m: MetricDecl, parts: FocusPart[], variable: string, flagVariable: (key: string) => string): Plan {
  const plan: Plan = { placements: [], flags: [], variable, kind: m.base.type, threadValue: m.base.source };
  const paths = parts.filter((p) => p.hierarchy === '/CallPath');
  if (m.base.type === 'path') {
    if (paths.length !== 1) throw new FocusError(`metric ${m.name} measures a call path: its focus names one, /CallPath/<k>/<module>/<f1>><module>/<f2>... (e.g. /CallPath/2/app.js/main>app.js/parse)`);
    const { k, functions } = paths[0] as Extract<FocusPart, { hierarchy: '/CallPath' }>;
    plan.callPath = { k, functions };
    // the path's functions are profiled (the four call-path probes of Session.profileCallPaths); a set without async functions has no await points
    plan.placements = functions.flatMap((f) => (['entry', 'exit', 'await', 'resume'] as const).map((point) => ({
      resource: `/Code/${f}`, point, where: 'preInsn' as const, order: 'append' as const, snippet: `${{ entry: 'enterPath', exit: 'exitPath', await: 'awaitPath', resume: 'resumePath' }[point]}();`, optional: point === 'await' || point === 'resume',
    })));
  } else if (paths.length) {
    const names = [...lib.metrics.values()].filter((x) => x.base.type === 'path').map((x) => x.name);
    throw new FocusError(`metric ${m.name} cannot be constrained to a call path (${paths[0].path}): the metrics of a call path are ${names.join(', ') || 'none in this library'}`);
  }
  const chosen = parts.filter((p) => p.hierarchy !== '/CallPath').map((p) => ({ part: p, c: constraintFor(lib, m, p) }));
  const replace = chosen.filter((x) => x.c.type === 'replace');
  if (replace.length > 1) throw new FocusError(`metric ${m.name}: constraints ${replace.map((x) => x.c.name).join(' and ')} cannot be combined (each replaces the metric's code)`);
  const flagVars = new Map<string, string>();
  for (const { part, c } of chosen) {
    if (c.type === 'placement') {
      if (part.hierarchy === '/Thread') (plan.threads ??= []).push({ pid: part.pid, thread: part.thread });
      if (part.hierarchy === '/Process') (plan.processes ??= []).push(part.pid);
      continue;
    }
    if (c.type !== 'counter') continue;
    const key = `${c.name}@${part.path}`;
    const v = flagVariable(key);
    flagVars.set(c.name, v);
    plan.flags.push({ key, variable: v, constraint: c.name, resource: part.path, placements: evalBody(lib, c.body, part, new Map([[c.name, v]]), [], `constraint ${c.name}`) });
  }
  if (replace.length) {
    const { part, c } = replace[0];
    if (m.base.type === 'thread') plan.kind = c.body.some(usesProcessTimer) ? 'processTimer' : c.body.some(usesWallTimer) ? 'wallTimer' : 'counter';
    plan.placements = evalBody(lib, c.body, part, new Map([[m.name, variable], [c.name, variable], ...flagVars]), [...flagVars.values()], `constraint ${c.name}`);
  } else if (m.base.type !== 'thread' && m.base.type !== 'path') {
    const names = new Map([[m.name, variable], ...flagVars]);
    plan.placements = evalBody(lib, m.base.body, undefined, names, [...flagVars.values()], `metric ${m.name}`);
  }
  return plan;
}

const usesProcessTimer = (s: Stmt): boolean => s.kind === 'foreach' ? s.body.some(usesProcessTimer) : /startProcessTimer/.test(s.snippet);
const usesWallTimer = (s: Stmt): boolean => s.kind === 'foreach' ? s.body.some(usesWallTimer) : /startWallTimer/.test(s.snippet);
const usesQueueIn = (s: Stmt): boolean => s.kind === 'foreach' ? s.body.some(usesQueueIn) : /\bqueue(In|Out)\(/.test(s.snippet);

/** A metric whose base keeps queues (cells per channel only): over the whole program it is its /SyncObject kind's sum. */
export const usesQueue = (m: MetricDecl): boolean => m.base.body.some(usesQueueIn);

/**
 * Resource paths: a function glob, or a module path (a module's functions are
 * `<module>/*`), or a call site: the function's calls to one callee.
 */
type Value = { kind: 'function' | 'module'; path: string; optional: boolean } | { kind: 'callsite'; path: string; callee: string; optional: boolean }
  | { kind: 'loop'; path: string; loop: string; optional: boolean };

function evalBody(lib: MdlLibrary, body: Stmt[], part: FocusPart | undefined, names: Map<string, string>, flags: string[], where: string): Placement[] {
  const out: Placement[] = [];
  const resource = (r: ResourceRef, vars: Map<string, Value>): Value => {
    if (r.kind === 'var') return vars.get(r.name)!;
    if (!part || part.hierarchy !== '/Code') throw new FocusError(`${where}: $constraint[${r.index}] is only bound in a constraint on /Code`);
    // $constraint[0] is the selected resource, [1] its parent
    if (part.kind === 'callsite') {
      if (r.index === 0) return { kind: 'callsite', path: part.fn, callee: part.callee, optional: false };
      if (r.index === 1) return { kind: 'function', path: part.fn, optional: false };
    } else if (part.kind === 'loop') {
      if (r.index === 0) return { kind: 'loop', path: part.fn, loop: part.loop, optional: false };
      if (r.index === 1) return { kind: 'function', path: part.fn, optional: false };
    } else if (r.index === 0) return { kind: part.kind, path: part.path, optional: false };
    if (r.index === 1 && part.kind === 'function') return { kind: 'module', path: part.path.slice(0, part.path.lastIndexOf('/')), optional: false };
    throw new FocusError(`${where}: $constraint[${r.index}] is not bound for ${part.path}`);
  };
  const list = (l: ListRef, vars: Map<string, Value>): Value[] => {
    if (l.kind === 'procedures') return [{ kind: 'function', path: '/Code/**', optional: true }];
    if (l.kind === 'attr') {
      const r = resource(l.of, vars);
      if (r.kind !== 'module') throw new FocusError(`${where}: .funcs of ${r.path}, which is a ${r.kind === 'callsite' ? 'call site' : r.kind === 'loop' ? 'loop' : 'function'}, not a module`);
      return [{ kind: 'function', path: `${r.path}/*`, optional: false }];
    }
    const decl = lib.lists.get(l.name)!;
    if (decl.type === 'string') throw new FocusError(`${where}: list ${l.name} holds strings, not code resources`);
    return decl.items.map((item) => ({ kind: decl.type === 'module' ? 'module' : 'function', path: item, optional: true }));
  };
  const point = (p: PointRef, vars: Map<string, Value>) => {
    const r = resource(p.of, vars);
    if (r.kind === 'module') throw new FocusError(`${where}: ${r.path} is a module, which has no points (iterate over its .funcs)`);
    if (r.kind === 'callsite') {
      // a call site's points: its calls (before and after each), the calls its receiver and arguments make, and their suspensions
      const sel = p.callee ? undefined : ({ calls: 'call', inner: 'inner', innerawait: 'innerawait', innerresume: 'innerresume' } as Record<string, string>)[p.attr];
      if (!sel) throw new FocusError(`${where}: the call site ${r.path}/${r.callee}() has only the points .calls, .inner, .innerawait and .innerresume, not .${p.callee ? `call("${p.callee}")` : p.attr}`);
      return { resource: r.path, point: `${sel}:${r.callee}`, optional: r.optional };
    }
    if (r.kind === 'loop') {
      const sel = p.callee ? null : loopSelector(p.attr, r.loop);
      if (!sel) throw new FocusError(`${where}: the loop ${r.path}/${r.loop} has only the points .entry, .exit, .trips, .await and .resume, not .${p.callee ? `call("${p.callee}")` : p.attr}`);
      return { resource: r.path, point: sel, optional: r.optional };
    }
    if (p.attr === 'inner' || p.attr === 'innerawait' || p.attr === 'innerresume') throw new FocusError(`${where}: .${p.attr} is a point of a call site (/Code/<module>/<function>/<callee>()), not of the function ${r.path}`);
    return { resource: r.path, point: p.callee ? `call:${p.callee}` : p.attr, optional: r.optional };
  };
  const walk = (stmts: Stmt[], vars: Map<string, Value>) => {
    for (const s of stmts) {
      if (s.kind === 'foreach') {
        for (const v of list(s.list, vars)) walk(s.body, new Map([...vars, [s.variable, v]]));
        continue;
      }
      const at = point(s.point, vars);
      let snippet = rename(s.snippet, names);
      if (s.constrained && flags.length) snippet = `if (${flags.join(' && ')}) { ${snippet} }`;
      out.push({ ...at, where: s.where, order: s.order, snippet });
    }
  };
  walk(body, new Map());
  return out;
}

/** Replace the MDL names of a snippet (metric, constraints) by the request's variables. */
export function rename(text: string, names: Map<string, string>): string {
  const ast = acorn.parse(text, { ecmaVersion: 2022 });
  const edits: { start: number; end: number; to: string }[] = [];
  visitIdentifiers(ast, (n) => { const to = names.get(n.name); if (to) edits.push({ start: n.start, end: n.end, to }); });
  edits.sort((a, b) => b.start - a.start);
  let out = text;
  for (const e of edits) out = out.slice(0, e.start) + e.to + out.slice(e.end);
  return out.trim();
}
