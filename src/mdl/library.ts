// A set of MDL definitions: the standard library shipped with paranode plus
// any .mdl files the user loads. Loading checks names, references and every
// snippet, so that a broken definition fails at load with file:line:column,
// not later when a metric is enabled.
import * as fs from 'fs';
import * as path from 'path';
import * as acorn from 'acorn';
import type { ConstraintDecl, Decl, ListDecl, MetricDecl, Pos, Stmt } from './ast';
import { MdlError, parseMdl } from './parser';
import { compileSnippet, SnippetError } from '../instrument/snippet';
import { pointClass } from '../instrument/probe';
import { loopSelector } from '../analysis/point-select';

export const STANDARD_MDL = path.resolve(__dirname, '..', '..', '..', 'mdl', 'standard.mdl');

/** the hierarchies a focus can name a resource of */
export const HIERARCHIES = ['/Code', '/Process', '/Thread', '/SyncObject', '/Machine', '/CallPath'];
/** the constraint hierarchy of a loop, /Code/<module>/<function>/loop@<line> */
export const LOOP_LEVEL = '/Code/*/loop@*';

/** thread values the runtime measures itself (base is thread "<name>") */
export const THREAD_VALUES: Record<string, { units: 'seconds' | 'fraction' }> = {
  cpu: { units: 'seconds' },
  wall: { units: 'seconds' },
  gc: { units: 'seconds' },
  elu: { units: 'fraction' },
  /** time the event loop is idle (waiting for timers, I/O, callbacks, promises) */
  elu_idle: { units: 'seconds' },
  /** time between samples in which the event loop did not turn once (one task held it) */
  blocked: { units: 'seconds' },
  /** time the thread was ready to run but waited for a CPU (Linux schedstat: other processes on its cores, a CPU quota) */
  ready: { units: 'seconds' },
  /** the instrumentation's own cost, from handler runs by cost class and the calibration */
  cost: { units: 'seconds' },
};

export class MdlLibrary {
  readonly lists = new Map<string, ListDecl>();
  readonly constraints = new Map<string, ConstraintDecl>();
  readonly metrics = new Map<string, MetricDecl>();
  readonly files: string[] = [];

  static standard(): MdlLibrary {
    const lib = new MdlLibrary();
    lib.loadFile(STANDARD_MDL);
    return lib;
  }

  loadFile(file: string): void {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new MdlError(`cannot read MDL file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { file, line: 0, column: 0 });
    }
    this.load(text, file);
  }

  /** Add definitions; a later definition of an existing name replaces it (a user's own `cpu`). All or nothing. */
  load(text: string, file = '<mdl>'): void {
    const decls = parseMdl(text, file);
    const seen = new Map<string, Pos>();
    for (const d of decls) {
      const key = `${d.kind} ${d.name}`;
      const before = seen.get(key);
      if (before) throw new MdlError(`${d.kind} ${d.name} is defined twice (first at line ${before.line})`, d.pos);
      seen.set(key, d.pos);
    }
    const lists = new Map(this.lists), constraints = new Map(this.constraints), metrics = new Map(this.metrics);
    for (const d of decls) {
      if (d.kind === 'list') lists.set(d.name, d);
      else if (d.kind === 'constraint') constraints.set(d.name, d);
      else metrics.set(d.name, d);
    }
    for (const d of decls) check(d, lists, constraints);
    for (const [k, v] of lists) this.lists.set(k, v);
    for (const [k, v] of constraints) this.constraints.set(k, v);
    for (const [k, v] of metrics) this.metrics.set(k, v);
    this.files.push(file);
  }

  metric(name: string): MetricDecl {
    const m = this.metrics.get(name);
    if (!m) throw new MdlError(`unknown metric "${name}" (known: ${[...this.metrics.keys()].sort().join(', ')})`, { file: '<request>', line: 1, column: 1 });
    return m;
  }
}

function check(d: Decl, lists: Map<string, ListDecl>, constraints: Map<string, ConstraintDecl>): void {
  if (d.kind === 'list') {
    if (d.type !== 'string') {
      for (const item of d.items) if (!item.startsWith('/Code/')) throw new MdlError(`list ${d.name}: item "${item}" is not a /Code resource`, d.pos);
    }
    return;
  }
  if (d.kind === 'constraint') {
    if (!HIERARCHIES.some((h) => d.hierarchy === h || d.hierarchy.startsWith(h + '/'))) {
      throw new MdlError(`constraint ${d.name}: unknown hierarchy ${d.hierarchy} (known: ${HIERARCHIES.join(', ')})`, d.pos);
    }
    if (d.type === 'placement' && !['/Thread', '/Process', '/Machine'].includes(d.hierarchy)) {
      throw new MdlError(`constraint ${d.name}: a placement constraint applies to /Thread, /Process or /Machine`, d.pos);
    }
    // a flag constraint's variable is its own name; a replace constraint's is the metric's (checked per metric)
    if (d.type === 'counter') checkBody(d.body, lists, new Set(), `constraint ${d.name}`, d.name, 'counter', undefined, d.hierarchy === LOOP_LEVEL);
    return;
  }
  for (const c of d.constraints) {
    if (!constraints.has(c.name)) throw new MdlError(`metric ${d.name}: unknown constraint ${c.name}`, c.pos);
  }
  const flags = new Set(d.constraints.map((c) => constraints.get(c.name)!).filter((c) => c.type === 'counter').map((c) => c.name));
  if (d.base.type === 'thread') {
    if (!d.base.source || !(d.base.source in THREAD_VALUES)) {
      throw new MdlError(`metric ${d.name}: unknown thread value "${d.base.source}" (known: ${Object.keys(THREAD_VALUES).join(', ')})`, d.base.pos);
    }
  } else if (d.base.type === 'path') {
    // the path's profile is its code: only placement constraints (which threads, which processes) apply
    const other = d.constraints.map((c) => constraints.get(c.name)!).find((c) => c.type !== 'placement');
    if (other) throw new MdlError(`metric ${d.name}: a call path's metric takes only placement constraints (/Thread, /Process), not ${other.name}`, d.base.pos);
  } else checkBody(d.base.body, lists, flags, `metric ${d.name}`, d.name, d.base.type);
  for (const c of d.constraints) {
    const con = constraints.get(c.name)!;
    if (con.type === 'replace' && d.base.type !== 'path') checkBody(con.body, lists, new Set(), `constraint ${con.name} (for metric ${d.name})`, d.name, d.base.type === 'thread' ? null : d.base.type, con.name, con.hierarchy === LOOP_LEVEL);
  }
}

/**
 * Check statements: lists exist, loop variables are bound, snippets compile
 * at their point and use only the variable they may (the metric's or the
 * constraint's, and the flags of the metric's constraints).
 */
function checkBody(body: Stmt[], lists: Map<string, ListDecl>, flags: Set<string>, where: string, variable: string,
  kind: 'counter' | 'wallTimer' | 'processTimer' | null, alias?: string, loop = false): void {
  const walk = (stmts: Stmt[], vars: Set<string>) => {
    for (const s of stmts) {
      if (s.kind === 'foreach') {
        if (s.list.kind === 'name' && !lists.has(s.list.name) && !vars.has(s.list.name)) throw new MdlError(`${where}: unknown list ${s.list.name}`, s.list.pos);
        if (s.list.kind === 'attr' && s.list.of.kind === 'var' && !vars.has(s.list.of.name)) throw new MdlError(`${where}: unknown variable ${s.list.of.name}`, s.list.of.pos);
        walk(s.body, new Set([...vars, s.variable]));
        continue;
      }
      if (s.point.of.kind === 'var' && !vars.has(s.point.of.name)) throw new MdlError(`${where}: unknown variable ${s.point.of.name}`, s.point.of.pos);
      const sel = s.point.callee ? `call:${s.point.callee}` : loop ? loopSelector(s.point.attr, '') ?? s.point.attr : s.point.attr;
      let c;
      try {
        c = compileSnippet(s.snippet, { point: pointClass(sel) });
      } catch (e) {
        if (e instanceof SnippetError) throw new MdlError(`${where}: ${e.message.replace(/ \(snippet line \d+, column \d+\)$/, '')}`, shift(s.snippetPos, e.line, e.column));
        throw e;
      }
      for (const n of snippetNames(s.snippet, s.snippetPos)) {
        if (n === variable || n === alias || flags.has(n)) continue;
        throw new MdlError(`${where}: the snippet names "${n}", which is neither the ${alias ? 'metric' : kind === null ? 'constraint' : 'metric'} variable ${alias ?? variable} nor a constraint flag of the metric`, s.snippetPos);
      }
      if (kind === 'counter' && c.timers.includes(alias ?? variable)) throw new MdlError(`${where}: ${alias ?? variable} is a counter here, not a timer`, s.snippetPos);
      if ((kind === 'wallTimer' || kind === 'processTimer') && c.counters.includes(variable)) throw new MdlError(`${where}: ${variable} is a timer here, not a counter`, s.snippetPos);
    }
  };
  walk(body, new Set());
}

/** The counter and timer names a snippet uses (identifiers that are not $-variables, properties or timer functions). */
export function snippetNames(text: string, pos: Pos): Set<string> {
  const out = new Set<string>();
  let ast: acorn.Node;
  try {
    ast = acorn.parse(text, { ecmaVersion: 2022, locations: true });
  } catch (e: any) {
    const loc = e.loc ?? { line: 1, column: 0 };
    throw new MdlError(`snippet: ${String(e.message).replace(/ \(\d+:\d+\)$/, '')}`, shift(pos, loc.line, loc.column + 1));
  }
  visitIdentifiers(ast, (n) => { out.add(n.name); });
  return out;
}

/** Calls `f` for every identifier that names a counter or timer. */
export function visitIdentifiers(ast: acorn.Node, f: (n: acorn.Identifier) => void): void {
  const walk = (n: any, parent: any, key: string) => {
    if (!n || typeof n.type !== 'string') return;
    if (n.type === 'Identifier') {
      const isProp = parent?.type === 'MemberExpression' && key === 'property' && !parent.computed;
      const isCallee = parent?.type === 'CallExpression' && key === 'callee';
      if (!isProp && !isCallee && !n.name.startsWith('$') && n.name !== 'undefined') f(n);
      return;
    }
    for (const k of Object.keys(n)) {
      if (k === 'loc' || k === 'start' || k === 'end') continue;
      const v = n[k];
      if (Array.isArray(v)) v.forEach((c) => walk(c, n, k));
      else if (v && typeof v === 'object') walk(v, n, k);
    }
  };
  walk(ast, null, '');
}

/** A position inside a snippet, as a position in the file. */
function shift(at: Pos, line: number, column: number): Pos {
  return line <= 1 ? { ...at, column: at.column + column - 1 } : { ...at, line: at.line + line - 1, column };
}
