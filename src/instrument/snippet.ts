// The snippet language (the "what" half of MDL): counters, timers, predicates.
// Snippets are parsed with acorn (they are JavaScript-shaped), checked against
// the allowed subset, and compiled to the handler text the runtime installs.
import * as acorn from 'acorn';
import type { CompiledSnippet } from '../agent/runtime';

export class SnippetError extends Error {
  constructor(message: string, readonly line: number, readonly column: number) {
    super(`${message} (snippet line ${line}, column ${column})`);
  }
}

/** 'loop': a loop's entry, exit or iteration (no arguments, value or this there) */
export type PointClass = 'entry' | 'exit' | 'call' | 'await' | 'resume' | 'loop';

type Node = acorn.Node & Record<string, any>;

/** statements and expressions nest at most this deep in a snippet */
export const MAX_SNIPPET_NESTING = 100;

const BIN_OPS = new Set(['+', '-', '*', '/', '%', '<', '>', '<=', '>=', '==', '!=', '===', '!==']);
const TIMER_FNS = new Set(['startWallTimer', 'startProcessTimer', 'stopTimer']);
/** call-path primitives: the runtime's operation and the one point each belongs at (agent/call-paths) */
const PATH_FNS: Record<string, [op: number, at: PointClass]> = { enterPath: [0, 'entry'], exitPath: [1, 'exit'], awaitPath: [2, 'await'], resumePath: [3, 'resume'] };
/**
 * queue primitives: a message enters a channel's queue (sent) or leaves it (its
 * dispatch begins); the queue's value is the time its messages waited
 */
const QUEUE_FNS: Record<string, number> = { queueIn: 1, queueOut: -1 };
/** functions that pick the instance of a /SyncObject resource: name[$file(x)] */
export const INSTANCE_FNS: Record<string, string> = { $file: 'file', $channel: 'channel' };

export interface SnippetOptions {
  point: PointClass;
  /** timer kinds fixed by other snippets of the session: name -> 'wall' | 'cpu' */
  timerKinds?: Map<string, 'wall' | 'cpu'>;
}

export function compileSnippet(text: string, opts: SnippetOptions): CompiledSnippet {
  const ast = parseSnippet(text);
  const counters = new Set<string>();
  const timers = new Set<string>();
  const instanceCounters = new Set<string>();
  const instanceTimers = new Set<string>();
  const kinds = opts.timerKinds ?? new Map<string, 'wall' | 'cpu'>();
  const fail = (n: Node, msg: string): never => {
    throw new SnippetError(msg, n.loc!.start.line, n.loc!.start.column + 1);
  };

  // A counter's value is C[i] + F[i] + (U[i] - L[i]) mod 2^32 (see Runtime.C).
  // `c++` and `c += 1` go to U: an integer add is the cheapest memory counter
  // V8 makes (a float add is ~0.7 ns slower); bigger steps could wrap U twice
  // between two folds.
  const counterName = (n: Node): string => {
    if (n.type !== 'Identifier') fail(n, 'only a counter name can be assigned');
    if (n.name.startsWith('$')) fail(n, `${n.name} is read-only`);
    if (timers.has(n.name) || instanceTimers.has(n.name)) fail(n, `${n.name} is a timer, not a counter`);
    if (instanceCounters.has(n.name)) fail(n, `${n.name} is indexed by instance elsewhere in this snippet`);
    counters.add(n.name);
    return `__c_${n.name}`;
  };

  // name[$file(x)] / name[$channel(x)]: the cell of the instance x stands for
  // (a file, a message channel), made when the instance is first seen: one
  // placement keeps a vector over every instance (Paradyn's vectorization)
  const instanceCell = (n: Node, timer: boolean): string => {
    if (n.type !== 'MemberExpression' || !n.computed || n.object.type !== 'Identifier') fail(n, 'expected name[$file(x)] or name[$channel(x)]');
    const name = n.object.name as string;
    if (name.startsWith('$')) fail(n.object, `${name} is read-only`);
    if (counters.has(name) || timers.has(name)) fail(n.object, `${name} is used without an index elsewhere in this snippet`);
    if (timer ? instanceCounters.has(name) : instanceTimers.has(name)) fail(n.object, `${name} is a ${timer ? 'counter' : 'timer'}, not a ${timer ? 'timer' : 'counter'}`);
    (timer ? instanceTimers : instanceCounters).add(name);
    const k = n.property;
    if (k.type !== 'CallExpression' || k.callee.type !== 'Identifier' || !(k.callee.name in INSTANCE_FNS) || k.arguments.length !== 1) {
      fail(k, `an index must be ${Object.keys(INSTANCE_FNS).map((f) => `${f}(x)`).join(' or ')}`);
    }
    return `__iv(${lit(name)},${timer ? 1 : 0},${lit(INSTANCE_FNS[k.callee.name])},${expr(k.arguments[0])})`;
  };

  let depth = 0;
  const nested = <T>(n: Node, f: () => T): T => {
    if (++depth > MAX_SNIPPET_NESTING) fail(n, `nesting deeper than ${MAX_SNIPPET_NESTING}`);
    try { return f(); } finally { depth--; }
  };

  const expr = (n: Node): string => nested(n, () => exprAt(n));
  const exprAt = (n: Node): string => {
    switch (n.type) {
      case 'Literal':
        if (typeof n.value === 'number') return Number.isFinite(n.value) ? String(n.value) : '(1/0)';
        if (typeof n.value === 'boolean' || typeof n.value === 'string' || n.value === null) return lit(n.value);
        return fail(n, 'unsupported constant');
      case 'Identifier':
        if (n.name === '$return') {
          if (opts.point !== 'exit' && opts.point !== 'resume') fail(n, '$return is only available at exit points');
          return '$0';
        }
        if (n.name === '$this') {
          if (opts.point !== 'entry' && opts.point !== 'exit') fail(n, '$this is only available at entry and exit points');
          return 'this';
        }
        if (n.name === 'undefined') return 'void 0';
        if (n.name.startsWith('$')) fail(n, `unknown variable ${n.name}`);
        if (timers.has(n.name) || instanceTimers.has(n.name)) fail(n, `${n.name} is a timer; read timers from the sampled data`);
        if (instanceCounters.has(n.name)) fail(n, `${n.name} is indexed by instance: it cannot be read in a snippet`);
        counters.add(n.name);
        return `(C[__c_${n.name}]+F[__c_${n.name}]+((U[__c_${n.name}]-L[__c_${n.name}])>>>0))`;
      case 'MemberExpression': {
        if (!n.computed && n.object.type === 'Identifier' && n.object.name === '$arg') fail(n, 'use $arg[i]');
        if (n.computed && n.object.type === 'Identifier' && n.object.name === '$arg') {
          if (opts.point !== 'entry' && opts.point !== 'call') fail(n, '$arg[i] is only available at entry and call points');
          if (n.property.type !== 'Literal' || typeof n.property.value !== 'number' || !Number.isInteger(n.property.value) || n.property.value < 0 || n.property.value > 7) {
            fail(n.property, '$arg index must be a constant from 0 to 7');
          }
          return `$${n.property.value}`;
        }
        // a read that runs no program code (no getter, Proxy trap or key coercion)
        // and cannot throw on null/undefined: see agent/safe-read
        if (n.computed) return `__rd(${expr(n.object)},${expr(n.property)})`;
        return `__rd(${expr(n.object)},${lit(n.property.name)})`;
      }
      case 'BinaryExpression':
        if (!BIN_OPS.has(n.operator)) fail(n, `operator ${n.operator} is not allowed`);
        // an object never reaches valueOf/toString: == compares it by identity, the rest see NaN
        if (n.operator === '===' || n.operator === '!==') return `(${expr(n.left)}${n.operator}${expr(n.right)})`;
        if (n.operator === '==' || n.operator === '!=') return `(${n.operator === '!=' ? '!' : ''}__eq(${expr(n.left)},${expr(n.right)}))`;
        return `(${prim(n.left)}${n.operator}${prim(n.right)})`;
      case 'LogicalExpression':
        if (n.operator === '??') fail(n, 'operator ?? is not allowed');
        return `(${expr(n.left)}${n.operator}${expr(n.right)})`;
      case 'CallExpression':
        // $file(x) / $channel(x) as a value: the instance's resource name, or null where x names none
        // (a port only Node's own code sends on, a value that is not a path)
        if (n.callee.type === 'Identifier' && Object.hasOwn(INSTANCE_FNS, n.callee.name) && n.arguments.length === 1) {
          return `__in(${lit(INSTANCE_FNS[n.callee.name])},${expr(n.arguments[0])})`;
        }
        return fail(n, `${describe(n)} is not allowed in a snippet expression (only $file(x) and $channel(x))`);
      case 'UnaryExpression':
        if (!['!', '-', '+'].includes(n.operator)) fail(n, `operator ${n.operator} is not allowed`);
        return n.operator === '!' ? `(!${expr(n.argument)})` : `(${n.operator}${prim(n.argument)})`;
      default:
        return fail(n, `${describe(n)} is not allowed in a snippet expression`);
    }
  };

  /** an operand of arithmetic or a comparison, or a value stored in a counter: objects as NaN (no valueOf) */
  const prim = (n: Node): string => {
    const known = n.type === 'Literal' || n.type === 'BinaryExpression' || n.type === 'UnaryExpression' ||
      (n.type === 'Identifier' && (!n.name.startsWith('$') || n.name === 'undefined'));
    return known ? expr(n) : `__p(${expr(n)})`;
  };

  const timerArg = (call: Node): string => {
    if (call.arguments.length !== 1 || call.arguments[0].type !== 'Identifier') fail(call, `${call.callee.name} takes one timer name`);
    const name = call.arguments[0].name as string;
    if (name.startsWith('$')) fail(call.arguments[0], 'invalid timer name');
    if (counters.has(name) || instanceCounters.has(name)) fail(call.arguments[0], `${name} is a counter, not a timer`);
    if (instanceTimers.has(name)) fail(call.arguments[0], `${name} is indexed by instance elsewhere in this snippet`);
    timers.add(name);
    return name;
  };

  const stmt = (n: Node): string => nested(n, () => stmtAt(n));
  const stmtAt = (n: Node): string => {
    switch (n.type) {
      case 'EmptyStatement': return ';';
      case 'BlockStatement': return `{${n.body.map(stmt).join('')}}`;
      case 'IfStatement':
        return `if(${expr(n.test)})${stmt(n.consequent)}${n.alternate ? `else ${stmt(n.alternate)}` : ''}`;
      case 'ExpressionStatement': {
        const e = n.expression;
        if (e.type === 'UpdateExpression' && e.argument.type === 'MemberExpression') {
          const i = instanceCell(e.argument, false);
          return `{const i_=${i};if(i_>=0)${e.operator === '++' ? 'U[i_]++' : 'C[i_]--'};}`;
        }
        if (e.type === 'AssignmentExpression' && e.left.type === 'MemberExpression') {
          if (!['+=', '-='].includes(e.operator)) fail(e, `an indexed counter takes ++, --, += or -=`);
          const rhs = prim(e.right);
          return `{const i_=${instanceCell(e.left, false)};if(i_>=0)C[i_]${e.operator}${rhs};}`;
        }
        if (e.type === 'UpdateExpression') {
          const i = counterName(e.argument);
          return e.operator === '++' ? `U[${i}]++;` : `C[${i}]--;`;
        }
        if (e.type === 'AssignmentExpression') {
          if (!['=', '+=', '-='].includes(e.operator)) fail(e, `assignment ${e.operator} is not allowed`);
          const rhs = prim(e.right);
          const i = counterName(e.left);
          if (e.operator === '+=' && e.right.type === 'Literal' && e.right.value === 1) return `U[${i}]+=${rhs};`;
          if (e.operator !== '=') return `C[${i}]${e.operator}${rhs};`;
          return `{const v_=${rhs};F[${i}]=0;L[${i}]=U[${i}];C[${i}]=v_;}`;
        }
        if (e.type === 'CallExpression' && e.callee.type === 'Identifier' && TIMER_FNS.has(e.callee.name) && e.arguments[0]?.type === 'MemberExpression') {
          if (e.arguments.length !== 1) fail(e, `${e.callee.name} takes one timer`);
          const a = e.arguments[0];
          if (e.callee.name === 'stopTimer') {
            // the instance was picked at the start: stop the innermost one running
            if (a.object.type !== 'Identifier' || !a.computed || a.property.type !== 'Identifier' || a.property.name !== '$last') fail(a, 'stop an indexed timer with stopTimer(name[$last])');
            if (counters.has(a.object.name) || instanceCounters.has(a.object.name)) fail(a.object, `${a.object.name} is a counter, not a timer`);
            instanceTimers.add(a.object.name);
            return `__vp(${lit(a.object.name)});`;
          }
          const kind = e.callee.name === 'startWallTimer' ? 'wall' : 'cpu';
          const cell = instanceCell(a, true);
          const known = kinds.get(a.object.name);
          if (known && known !== kind) fail(e, `timer ${a.object.name} is already a ${known === 'wall' ? 'wall-clock' : 'process-time'} timer`);
          kinds.set(a.object.name, kind);
          return `__vs(${lit(a.object.name)},${cell},${kind === 'wall' ? 0 : 1});`;
        }
        if (e.type === 'CallExpression' && e.callee.type === 'Identifier' && TIMER_FNS.has(e.callee.name)) {
          const name = timerArg(e);
          if (e.callee.name === 'stopTimer') return `__tp(__t_${name});`;
          const kind = e.callee.name === 'startWallTimer' ? 'wall' : 'cpu';
          const known = kinds.get(name);
          if (known && known !== kind) fail(e, `timer ${name} is already a ${known === 'wall' ? 'wall-clock' : 'process-time'} timer`);
          kinds.set(name, kind);
          return kind === 'wall' ? `__ts_w(__t_${name});` : `__ts_c(__t_${name});`;
        }
        if (e.type === 'CallExpression' && e.callee.type === 'Identifier' && Object.hasOwn(QUEUE_FNS, e.callee.name)) {
          // a queue of a worker's channel: its messages' waiting time (see Instances.queue)
          const a = e.arguments[0];
          if (e.arguments.length !== 1 || a.type !== 'MemberExpression' || !a.computed || a.property.type !== 'CallExpression' ||
            a.property.callee.type !== 'Identifier' || a.property.callee.name !== '$channel' || a.property.arguments.length !== 1) {
            fail(e, `${e.callee.name} takes one queue of a channel: name[$channel(x)]`);
          }
          if (a.object.type !== 'Identifier' || a.object.name.startsWith('$')) fail(a, 'expected name[$channel(x)]');
          if (counters.has(a.object.name) || instanceCounters.has(a.object.name)) fail(a.object, `${a.object.name} is a counter, not a queue`);
          instanceTimers.add(a.object.name);
          return `__vq(__iv(${lit(a.object.name)},1,"queue",${expr(a.property.arguments[0])}),${QUEUE_FNS[e.callee.name]});`;
        }
        if (e.type === 'CallExpression' && e.callee.type === 'Identifier' && Object.hasOwn(PATH_FNS, e.callee.name)) {
          const [op, at] = PATH_FNS[e.callee.name];
          if (e.arguments.length) fail(e, `${e.callee.name}() takes no arguments`);
          if (opts.point !== at) fail(e, `${e.callee.name}() belongs at the ${at} point, not at ${opts.point}`);
          return `__cp(${op},__f_fn);`;
        }
        if (e.type === 'CallExpression') fail(e, 'only startWallTimer, startProcessTimer, stopTimer, queueIn, queueOut and enterPath, exitPath, awaitPath, resumePath can be called');
        return fail(e, `${describe(e)} does nothing; use c++, c += e, c -= e, c = e or a timer call`);
      }
      default:
        return fail(n, `${describe(n)} is not allowed in a snippet (no loops, functions or declarations)`);
    }
  };

  const body = (ast.body as Node[]).map(stmt).join('');
  return { body, counters: [...counters], timers: [...timers], instances: [...instanceCounters, ...instanceTimers] };
}

/** A string constant in handler text; '_' escaped, so that the runtime's __c_NAME / __t_NAME substitution never sees one. */
function lit(v: string | boolean | null): string {
  return JSON.stringify(v).replace(/_/g, '\\u005f');
}

/**
 * Parse a snippet with acorn. Its stack guard turns input nested too deep for
 * the parser into "Not enough stack space": reported as the nesting limit.
 */
function parseSnippet(text: string): Node {
  try {
    return acorn.parse(text, { ecmaVersion: 2022, locations: true }) as Node;
  } catch (e: any) {
    const loc = e?.loc ?? { line: 1, column: 0 };
    const msg = String(e?.message ?? e).replace(/ \(\d+:\d+\)$/, '');
    if (e instanceof RangeError || /stack space/.test(msg)) throw new SnippetError(`nesting deeper than ${MAX_SNIPPET_NESTING}`, loc.line, loc.column + 1);
    throw new SnippetError(`syntax error: ${msg}`, loc.line, loc.column + 1);
  }
}

function describe(n: Node): string {
  return n.type.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}
