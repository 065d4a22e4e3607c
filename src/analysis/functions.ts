// Structural analysis: parse a script with acorn and list its functions and
// their instrumentation points. The result is plain data, shared by the tool
// (resources, LiveEdit planning) and the in-target load hook (preparation),
// so both sides agree on function and point numbering.
import * as acorn from 'acorn';
import importPhases from 'acorn-import-phases';
import * as vm from 'vm';
import { moduleNameOf } from './module-name';
import { loadSourceMap, originalPosition } from './sourcemap';

/**
 * A loop is two points: `loop` (its entry before the loop statement and its labels,
 * its exit after it, however it ends) and `trip` (each iteration, at its body's start).
 */
export type PointKind = 'entry' | 'exit' | 'call' | 'loop' | 'trip' | 'await' | 'resume';

export interface PointInfo {
  /** index within the function */
  index: number;
  kind: PointKind;
  /** for exits: how the function leaves */
  exit?: 'return' | 'end' | 'throw';
  line: number;
  column: number;
  /** offsets in the script's own (generated) text: where the point's code starts and ends */
  pos: number;
  end: number;
  /** for calls: callee source text (shortened) */
  callee?: string;
  /** for calls: argument expressions a pre-call snippet may read without side effects */
  simpleArgs?: (string | null)[];
  /** for calls: made in a frame of its own (a class field's initializer, a static block), not the function's */
  otherFrame?: true;
}

export interface FunctionInfo {
  index: number;
  /** name as a stack trace would show it, unique within the module */
  name: string;
  /** the original module when a source map names one (line and column are then original too) */
  module?: string;
  line: number;
  column: number;
  start: number;
  end: number;
  isAsync: boolean;
  isGenerator: boolean;
  isArrow: boolean;
  /** parameter names usable as $arg[i] at entry (null: a pattern) */
  params: (string | null)[];
  points: PointInfo[];
  /** why this function gets no throw-exit point, if it does not */
  noTryWrap?: string;
}

export interface ScriptAnalysis {
  functions: FunctionInfo[];
  sourceType: 'script' | 'module';
  /** a source map named its functions: V8's stack samples name them by the script (the runtime tags its frames for the tool to name) */
  mapped?: true;
}

type Node = acorn.Node & Record<string, any>;

/** Whether this V8 compiles an expression (a script, compiled, never run). */
function compiles(code: string): boolean {
  try {
    new vm.Script(code);
    return true;
  } catch {
    return false;
  }
}

/**
 * acorn, plus the import phases this V8 compiles (source-phase imports,
 * `import source x from` and `import.source(m)`, compile on Node 24 and 26;
 * `import defer` where V8 has it). acorn alone has neither, and leaving out
 * what V8 lacks keeps such a script unprepared, so V8 reports its own error
 * on the original text.
 */
let parser: typeof acorn.Parser | undefined;
function theParser(): typeof acorn.Parser {
  if (parser) return parser;
  const source = compiles('import.source("x")');
  const Phases = acorn.Parser.extend(importPhases({ source, defer: compiles('import.defer("x")') })) as any;
  // `import source from from '…'` binds `from` in the source phase; the plugin takes
  // `source from` for a default import named source and fails at the second `from`
  parser = class extends Phases {
    parseImportSpecifiers(): unknown {
      const self = this as any;
      if (source && self.isContextual('source') && SOURCE_FROM_FROM.test(self.input.slice(self.end))) {
        self.next();
        self._phase = 'source';
      }
      return super.parseImportSpecifiers();
    }
  } as unknown as typeof acorn.Parser;
  return parser;
}

/** after `import source`: `from`, `from`, then the module's string (comments and white space between) */
const GAP = String.raw`(?:\s|\/\/[^\n\r\u2028\u2029]*|\/\*[\s\S]*?\*\/)`;
const SOURCE_FROM_FROM = new RegExp(`^${GAP}+from${GAP}+from${GAP}*['"]`);

export function parseSource(source: string, sourceType?: 'script' | 'module'): { ast: Node; sourceType: 'script' | 'module' } {
  const opts: acorn.Options = { ecmaVersion: 'latest', locations: true, allowHashBang: true };
  // a CommonJS module is a function body (`return` at top level); `await` is an
  // identifier there, as in any script
  const script: acorn.Options = { ...opts, sourceType: 'script', allowReturnOutsideFunction: true };
  const module: acorn.Options = { ...opts, sourceType: 'module' };
  const P = theParser();
  if (sourceType) return { ast: P.parse(source, sourceType === 'module' ? module : script) as Node, sourceType };
  // CommonJS is parsed as a script; fall back to module for ESM syntax.
  try {
    return { ast: P.parse(source, script) as Node, sourceType: 'script' };
  } catch (e) {
    try {
      return { ast: P.parse(source, module) as Node, sourceType: 'module' };
    } catch {
      throw e;
    }
  }
}

/** Child keys of each ESTree node type acorn makes, in source order (unknown types: every key). */
const CHILD_KEYS: Record<string, string[]> = {
  Program: ['body'], ExpressionStatement: ['expression'], BlockStatement: ['body'], StaticBlock: ['body'], EmptyStatement: [],
  DebuggerStatement: [], WithStatement: ['object', 'body'], ReturnStatement: ['argument'], LabeledStatement: ['label', 'body'],
  BreakStatement: ['label'], ContinueStatement: ['label'], IfStatement: ['test', 'consequent', 'alternate'],
  SwitchStatement: ['discriminant', 'cases'], SwitchCase: ['test', 'consequent'], ThrowStatement: ['argument'],
  TryStatement: ['block', 'handler', 'finalizer'], CatchClause: ['param', 'body'], WhileStatement: ['test', 'body'],
  DoWhileStatement: ['body', 'test'], ForStatement: ['init', 'test', 'update', 'body'], ForInStatement: ['left', 'right', 'body'],
  ForOfStatement: ['left', 'right', 'body'], FunctionDeclaration: ['id', 'params', 'body'], VariableDeclaration: ['declarations'],
  VariableDeclarator: ['id', 'init'], ThisExpression: [], ArrayExpression: ['elements'], ObjectExpression: ['properties'],
  Property: ['key', 'value'], FunctionExpression: ['id', 'params', 'body'], ArrowFunctionExpression: ['params', 'body'],
  UnaryExpression: ['argument'], UpdateExpression: ['argument'], BinaryExpression: ['left', 'right'],
  AssignmentExpression: ['left', 'right'], LogicalExpression: ['left', 'right'], MemberExpression: ['object', 'property'],
  ConditionalExpression: ['test', 'consequent', 'alternate'], CallExpression: ['callee', 'arguments'],
  NewExpression: ['callee', 'arguments'], SequenceExpression: ['expressions'], YieldExpression: ['argument'],
  AwaitExpression: ['argument'], TemplateLiteral: ['quasis', 'expressions'], TaggedTemplateExpression: ['tag', 'quasi'],
  TemplateElement: [], ObjectPattern: ['properties'], ArrayPattern: ['elements'], RestElement: ['argument'],
  AssignmentPattern: ['left', 'right'], ClassDeclaration: ['id', 'superClass', 'body'], ClassExpression: ['id', 'superClass', 'body'],
  ClassBody: ['body'], MethodDefinition: ['key', 'value'], PropertyDefinition: ['key', 'value'], MetaProperty: ['meta', 'property'],
  ImportDeclaration: ['specifiers', 'source', 'attributes'], ImportSpecifier: ['imported', 'local'], ImportDefaultSpecifier: ['local'],
  ImportNamespaceSpecifier: ['local'], ImportAttribute: ['key', 'value'], ImportExpression: ['source', 'options'],
  ExportNamedDeclaration: ['declaration', 'specifiers', 'source', 'attributes'], ExportSpecifier: ['local', 'exported'],
  ExportDefaultDeclaration: ['declaration'], ExportAllDeclaration: ['exported', 'source', 'attributes'],
  ChainExpression: ['expression'], ParenthesizedExpression: ['expression'], SpreadElement: ['argument'],
  Identifier: [], PrivateIdentifier: [], Literal: [], Super: [],
};

function childKeys(n: Node): string[] {
  return CHILD_KEYS[n.type] ?? Object.keys(n).filter((k) => k !== 'loc' && !k.startsWith('__'));
}

const FUNCTION_TYPES = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);
const LOOP_TYPES = new Set(['ForStatement', 'ForInStatement', 'ForOfStatement', 'WhileStatement', 'DoWhileStatement']);

function keyName(key: Node, computed: boolean): string | null {
  if (computed) return key.type === 'Literal' ? String(key.value) : null;
  if (key.type === 'Identifier') return key.name;
  if (key.type === 'PrivateIdentifier') return '#' + key.name;
  if (key.type === 'Literal') return String(key.value);
  return null;
}

function exprName(n: Node | null | undefined): string | null {
  if (!n) return null;
  if (n.type === 'Identifier') return n.name;
  if (n.type === 'ThisExpression') return 'this';
  if (n.type === 'MemberExpression') {
    const obj = exprName(n.object);
    const prop = keyName(n.property, n.computed);
    if (obj && prop) return `${obj}.${prop}`;
    return prop;
  }
  return null;
}

/** Infer the name V8 would show for a function from where it stands. */
function inferName(fn: Node, parent: Node | undefined, grand: Node | undefined): string {
  if (fn.id && fn.id.name) {
    if (parent && (parent.type === 'MethodDefinition')) {
      // class method written as a named function expression is impossible; fall through
    }
    return fn.id.name;
  }
  if (!parent) return '<anonymous>';
  switch (parent.type) {
    case 'VariableDeclarator':
      return parent.id.type === 'Identifier' ? parent.id.name : '<anonymous>';
    case 'AssignmentExpression':
      return exprName(parent.left) ?? '<anonymous>';
    case 'AssignmentPattern':
      return parent.left.type === 'Identifier' ? parent.left.name : '<anonymous>';
    case 'Property': {
      const k = keyName(parent.key, parent.computed) ?? '<computed>';
      const owner = grand ? ownerName(grand) : null;
      const base = parent.kind === 'get' ? `get ${k}` : parent.kind === 'set' ? `set ${k}` : k;
      return owner ? `${owner}.${base}` : base;
    }
    case 'MethodDefinition':
    case 'PropertyDefinition': {
      const k = keyName(parent.key, parent.computed) ?? '<computed>';
      const cls = grand && grand.__className ? grand.__className : null;
      if (parent.type === 'MethodDefinition' && parent.kind === 'constructor') return cls ? `new ${cls}` : 'constructor';
      const base = parent.kind === 'get' ? `get ${k}` : parent.kind === 'set' ? `set ${k}` : k;
      return cls ? `${cls}.${base}` : base;
    }
    case 'ExportDefaultDeclaration':
      return 'default';
    default:
      return '<anonymous>';
  }
}

function ownerName(objectExpr: Node): string | null {
  return objectExpr.__ownerName ?? null;
}

function paramName(p: Node): string | null {
  if (p.type === 'Identifier') return p.name;
  if (p.type === 'AssignmentPattern' && p.left.type === 'Identifier') return p.left.name;
  if (p.type === 'RestElement' && p.argument.type === 'Identifier') return p.argument.name;
  return null;
}

function simpleArg(a: Node, source: string, params: Set<string>, thisReady: boolean): string | null {
  if (a.type === 'Identifier' && params.has(a.name)) return a.name;
  if (a.type === 'Literal' && !(a as any).regex && typeof (a as any).bigint !== 'string') return source.slice(a.start, a.end);
  if (a.type === 'ThisExpression' && thisReady) return 'this';
  return null;
}

/** Is the call skipped when an optional link before it (its own `?.()` or one in its callee chain) meets a nullish value? */
function shortCircuits(call: Node): boolean {
  for (let c: Node | undefined = call; c && (c.type === 'CallExpression' || c.type === 'MemberExpression'); c = c.type === 'CallExpression' ? c.callee : c.object) {
    if (c.optional) return true;
  }
  return false;
}

/** Function declarations that would clash if the body were moved into a block. */
function tryWrapConflict(body: Node[], strict: boolean, params: Set<string>): string | undefined {
  const fnNames = new Map<string, number>();
  const varNames = new Set<string>();
  const collectVars = (n: Node | null | undefined, inFn: boolean): void => {
    if (!n || typeof n.type !== 'string') return;
    if (FUNCTION_TYPES.has(n.type) || n.type === 'ClassBody') return;
    if (n.type === 'VariableDeclaration' && n.kind === 'var') {
      for (const d of n.declarations) collectPatternNames(d.id, varNames);
    }
    for (const key of childKeys(n)) {
      const v = (n as any)[key];
      if (Array.isArray(v)) v.forEach((c) => collectVars(c, inFn));
      else if (v && typeof v === 'object' && typeof v.type === 'string') collectVars(v, inFn);
    }
  };
  for (const st of body) {
    if (st.type === 'FunctionDeclaration' && st.id) fnNames.set(st.id.name, (fnNames.get(st.id.name) ?? 0) + 1);
  }
  if (fnNames.size === 0) return undefined;
  for (const st of body) if (st.type !== 'FunctionDeclaration') collectVars(st, false);
  for (const [name, count] of fnNames) {
    if (varNames.has(name)) return `function ${name} is also declared with var`;
    // sloppy: a body-level function of a parameter's name (or `arguments`) sets the
    // parameter (and arguments[i]); inside a block it would not (Annex B.3.3)
    if (!strict && (params.has(name) || name === 'arguments')) return `function ${name} has the name of a parameter`;
    if (strict && count > 1) return `function ${name} is declared twice`;
  }
  return undefined;
}

function collectPatternNames(p: Node | null, out: Set<string>): void {
  if (!p) return;
  switch (p.type) {
    case 'Identifier': out.add(p.name); break;
    case 'ObjectPattern': for (const prop of p.properties) collectPatternNames(prop.type === 'RestElement' ? prop.argument : prop.value, out); break;
    case 'ArrayPattern': for (const e of p.elements) collectPatternNames(e, out); break;
    case 'AssignmentPattern': collectPatternNames(p.left, out); break;
    case 'RestElement': collectPatternNames(p.argument, out); break;
  }
}

function hasUseStrict(body: Node[]): boolean {
  for (const st of body) {
    if (st.type !== 'ExpressionStatement' || typeof st.directive !== 'string') break;
    if (st.directive === 'use strict') return true;
  }
  return false;
}

export interface AnalyzedFunction extends FunctionInfo {
  node: Node;
  parentIndex: number;
  strict: boolean;
  /** node of each point (call / await / return / loop) in the same order as points */
  pointNodes: (Node | null)[];
  usesEval: boolean;
  /** defined inside a `with` statement: every free name, ours too, is looked up on its object first */
  withScope: boolean;
  /** points that must get no slot, with the reason */
  pointNoSlot: Map<number, string>;
  /**
   * call points whose slot keeps the pass-through call ($pnC): the function's own
   * locals do not reach them (parameter defaults, class field initializers and
   * static blocks run in frames of their own) or a parenthesized wrapper would
   * not be a valid assignment target (`f() = 1` is a run-time error, `(…) = 1` an early one)
   */
  passCalls: Set<number>;
  /** call points that begin an expression statement of a statement list: a wrapper opening with '(' there needs a ';' */
  stmtCalls: Set<number>;
  /**
   * where the function's own catch and finally blocks begin (after their '{'): an await or
   * yield that throws there (a rejected promise, a generator's throw() or return()) skips
   * its resume slot, which the rewrite then runs there
   */
  handlerStarts: number[];
}

/**
 * What a point's surroundings allow: inside `with` (of this function or one around it); `this`
 * readable without a TDZ; run in the function's own frame (not a class field's initializer or a static block).
 */
interface Context { inWith: boolean; thisReady: boolean; ownFrame: boolean }

const STATEMENT_LISTS = new Set(['BlockStatement', 'Program', 'SwitchCase', 'StaticBlock']);

/**
 * Walk the AST and collect functions with their own points (points of nested
 * functions belong to the nested function).
 */
export function analyzeAst(ast: Node, source: string, sourceType: 'script' | 'module', classes: [number, number][] = []): AnalyzedFunction[] {
  const out: AnalyzedFunction[] = [];
  const lineOf = lineIndex(source);

  // per function: its call points' argument nodes and its let/const/class names,
  // to decide at its end which arguments a pre-call slot may read (simpleArgs)
  const callArgs = new Map<number, [PointInfo, Node[], boolean][]>();
  // starts of expression statements in statement lists (see stmtCalls)
  const stmtStarts = new Set<number>();
  const lexical = new Map<number, Set<string>>();

  const visit = (n: Node, parent: Node | undefined, grand: Node | undefined, fnIdx: number, strict: boolean, ctx: Context): void => {
    if (!n || typeof n.type !== 'string') return;
    let curFn = fnIdx;
    let curStrict = strict;
    let curCtx = ctx;
    if (n.type === 'ClassDeclaration' || n.type === 'ClassExpression') {
      curStrict = true;
      classes.push([n.start, n.end]);
      if (n.superClass) (n.body as any).__derived = true;
      const name = n.id?.name ?? (parent?.type === 'VariableDeclarator' && parent.id.type === 'Identifier' ? parent.id.name : null);
      (n.body as any).__className = name;
    }
    if (n.type === 'ObjectExpression') {
      if (parent?.type === 'VariableDeclarator' && parent.id.type === 'Identifier') n.__ownerName = parent.id.name;
      else if (parent?.type === 'AssignmentExpression') n.__ownerName = exprName(parent.left);
    }
    if (FUNCTION_TYPES.has(n.type)) {
      const bodyStmts: Node[] = n.body.type === 'BlockStatement' ? n.body.body : [];
      curStrict = strict || hasUseStrict(bodyStmts);
      const loc = lineOf(n.start);
      const isMethodLike = parent?.value === n && (parent.type === 'MethodDefinition' || (parent.type === 'Property' && (parent.method || parent.kind !== 'init')));
      const f: AnalyzedFunction = {
        index: out.length,
        name: inferName(n, parent, grand),
        line: loc.line,
        column: loc.column,
        start: isMethodLike ? parent!.start : n.start,
        end: n.end,
        isAsync: !!n.async,
        isGenerator: !!n.generator,
        isArrow: n.type === 'ArrowFunctionExpression',
        params: n.params.map(paramName),
        points: [],
        node: n,
        parentIndex: fnIdx,
        strict: curStrict,
        pointNodes: [],
        usesEval: false,
        withScope: ctx.inWith,
        pointNoSlot: new Map(),
        passCalls: new Set(),
        stmtCalls: new Set(),
        handlerStarts: [],
      };
      if (n.body.type === 'BlockStatement') {
        const why = tryWrapConflict(bodyStmts, curStrict, new Set(f.params.filter((x): x is string => !!x)));
        if (why) f.noTryWrap = why;
      }
      out.push(f);
      curFn = f.index;
      // `this` before super() in a derived class's constructor (and its arrows) is a ReferenceError
      if (n.type !== 'ArrowFunctionExpression') {
        curCtx = { ...ctx, thisReady: !(parent?.type === 'MethodDefinition' && parent.kind === 'constructor' && grand?.__derived) };
      }
      curCtx = { ...curCtx, ownFrame: true };
      addPoint(f, 'entry', n.body.start, null, undefined, n.body.end);
    } else if (curFn >= 0) {
      const f = out[curFn];
      if (n.type === 'ReturnStatement') addPoint(f, 'exit', n.start, n, 'return');
      else if ((n.type === 'CallExpression' || n.type === 'NewExpression') && n.callee.type !== 'Super' && n.callee.type !== 'Import') {
        if (n.callee.type === 'Identifier' && n.callee.name === 'eval') f.usesEval = true;
        else if (!isTagged(parent, n)) {
          const p = addPoint(f, 'call', n.start, n);
          p.callee = source.slice(n.callee.start, n.callee.end).replace(/\s+/g, ' ').slice(0, 80);
          const list = callArgs.get(f.index) ?? [];
          list.push([p, n.arguments, curCtx.thisReady]);
          callArgs.set(f.index, list);
          if (!ctx.ownFrame) p.otherFrame = true;
          if (!ctx.ownFrame || n.start < f.node.body.start || isAssignTarget(n, parent)) f.passCalls.add(p.index);
          if (stmtStarts.has(n.start)) f.stmtCalls.add(p.index);
          // in `a?.b()` or `a?.b.c()` the call is skipped when a is nullish: a wrapper
          // around it would run (and end the short-circuit) where the call does not
          if (shortCircuits(n)) f.pointNoSlot.set(p.index, 'a call in an optional chain: a slot would break its short-circuit');
          // Node prints the line an uncaught exception was thrown from as it stands: keep `throw f()` as written
          else if (parent?.type === 'ThrowStatement') f.pointNoSlot.set(p.index, 'the operand of a throw: Node prints an uncaught exception\'s line as written');
        }
      } else if (LOOP_TYPES.has(n.type)) {
        // the loop's slot goes around its labels too (`continue L` needs L right on the loop)
        n.__slotStart = n.__labelStart ?? n.start;
        addPoint(f, 'loop', n.start, n);
        addPoint(f, 'trip', n.body.start, n.body);
        // `for await` suspends with no await written: before each next() is awaited (after
        // its operand, and after each iteration) and at return() when it ends early; it
        // resumes as each iteration begins and once the loop is over
        if (n.type === 'ForOfStatement' && n.await) {
          addPoint(f, 'await', n.start, n);
          addPoint(f, 'resume', n.start, n);
        }
      }
      else if (n.type === 'AwaitExpression' || (n.type === 'YieldExpression' && !n.delegate)) {
        addPoint(f, 'await', n.start, n);
        addPoint(f, 'resume', n.end, n);
      } else if (n.type === 'TryStatement') {
        if (n.handler) f.handlerStarts.push(n.handler.body.start + 1);
        if (n.finalizer) f.handlerStarts.push(n.finalizer.start + 1);
      } else if (n.type === 'Identifier' && n.name === 'eval') f.usesEval = true;
      else if (n.type === 'WithStatement') f.usesEval = true;
      else if (n.type === 'VariableDeclaration' && n.kind !== 'var') {
        const names = lexical.get(f.index) ?? new Set<string>();
        for (const d of n.declarations) collectPatternNames(d.id, names);
        lexical.set(f.index, names);
      } else if (n.type === 'ClassDeclaration' && n.id) {
        const names = lexical.get(f.index) ?? new Set<string>();
        names.add(n.id.name);
        lexical.set(f.index, names);
      }
      if (ctx.inWith && !f.withScope && f.points.length && f.pointNodes[f.points.length - 1] === n) {
        for (let i = f.points.length - 1; i >= 0 && f.pointNodes[i] === n; i--) f.pointNoSlot.set(i, 'inside a with statement: a slot would be looked up on its object');
      }
    }
    if (n.type === 'LabeledStatement') n.body.__labelStart = n.__labelStart ?? n.start;
    if (n.type === 'WithStatement') {
      visit(n.object, n, parent, curFn, curStrict, curCtx);
      visit(n.body, n, parent, curFn, curStrict, { ...curCtx, inWith: true });
      return;
    }
    if (n.type === 'PropertyDefinition' || n.type === 'StaticBlock') curCtx = { ...curCtx, thisReady: true, ownFrame: false };
    if (n.type === 'ExpressionStatement' && parent && STATEMENT_LISTS.has(parent.type)) stmtStarts.add(n.start);
    for (const key of childKeys(n)) {
      const v = (n as any)[key];
      if (Array.isArray(v)) {
        for (const c of v) if (c && typeof c.type === 'string') visit(c, n, parent, curFn, curStrict, curCtx);
      } else if (v && typeof v === 'object' && typeof v.type === 'string') visit(v, n, parent, curFn, curStrict, curCtx);
    }
    if (FUNCTION_TYPES.has(n.type)) {
      const f = out[curFn];
      // a pre-call slot reads an argument only where the read cannot be observed:
      // a parameter no let/const/class of the function shadows (no getter, no
      // TDZ), in a function without eval or with; a literal; `this` once bound
      const lex = lexical.get(f.index);
      const params = new Set(f.usesEval || f.withScope ? [] : f.params.filter((x): x is string => !!x && !lex?.has(x)));
      for (const [p, argNodes, thisReady] of callArgs.get(f.index) ?? []) {
        p.simpleArgs = argNodes.map((a) => simpleArg(a, source, params, thisReady));
      }
      callArgs.delete(f.index);
      lexical.delete(f.index);
      if (n.body.type === 'BlockStatement') addPoint(f, 'exit', n.body.end - 1, null, 'end', n.body.end);
      else addPoint(f, 'exit', n.body.start, n.body, 'return');
      if (!f.noTryWrap) addPoint(f, 'exit', n.end, null, 'throw');
    }
  };

  const addPoint = (f: AnalyzedFunction, kind: PointKind, pos: number, node: Node | null, exit?: 'return' | 'end' | 'throw', end?: number): PointInfo => {
    const loc = lineOf(pos);
    const p: PointInfo = { index: f.points.length, kind, line: loc.line, column: loc.column, pos, end: end ?? node?.end ?? pos };
    if (exit) p.exit = exit;
    f.points.push(p);
    f.pointNodes.push(node);
    return p;
  };

  visit(ast, undefined, undefined, -1, sourceType === 'module', { inWith: false, thisReady: true, ownFrame: true });
  return out;
}

/** `f() = 1`, `f()++`, `for (f() in o)`: a call where a reference is expected. */
function isAssignTarget(n: Node, parent: Node | undefined): boolean {
  if (!parent) return false;
  return ((parent.type === 'AssignmentExpression' || parent.type === 'ForInStatement' || parent.type === 'ForOfStatement') && parent.left === n) ||
    (parent.type === 'UpdateExpression' && parent.argument === n);
}

/** Position -> {line (1-based), column (0-based)} by binary search over line starts. */
export function lineIndex(source: string): (pos: number) => { line: number; column: number } {
  const starts = [0];
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    if (c === 10 || c === 0x2028 || c === 0x2029 || (c === 13 && source.charCodeAt(i + 1) !== 10)) starts.push(i + 1);
  }
  return (pos) => {
    let lo = 0, hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= pos) lo = mid; else hi = mid - 1;
    }
    return { line: lo + 1, column: pos - starts[lo] };
  };
}

function isTagged(parent: Node | undefined, n: Node): boolean {
  return !!parent && parent.type === 'TaggedTemplateExpression' && parent.tag === n;
}

/**
 * Names unique within each module: duplicates get @line (and :column if needed).
 * An anonymous function always has its line (`<anonymous>@12`): a stack sample
 * names it so (its start line, as V8 gives it), so that a module's anonymous
 * callbacks are told apart, whether it has one or many.
 */
function uniquifyNames(fns: FunctionInfo[]): void {
  const key = (f: FunctionInfo, name: string) => `${f.module ?? ''}\0${name}`;
  const counts = new Map<string, number>();
  for (const f of fns) counts.set(key(f, f.name), (counts.get(key(f, f.name)) ?? 0) + 1);
  const seen = new Set<string>();
  for (const f of fns) {
    if ((counts.get(key(f, f.name)) ?? 0) > 1 || f.name === '<anonymous>') {
      let n = `${f.name}@${f.line}`;
      if (seen.has(key(f, n))) n = `${f.name}@${f.line}:${f.column + 1}`;
      f.name = n;
    }
    seen.add(key(f, f.name));
  }
}

/** Where a script came from, to name its functions by their original sources. */
export interface Naming { filename?: string; cwd: string }

export function analyzeScript(source: string, sourceType?: 'script' | 'module', naming?: Naming): { analysis: ScriptAnalysis; fns: AnalyzedFunction[]; classes: [number, number][] } {
  const parsed = parseSource(source, sourceType);
  const classes: [number, number][] = [];
  const fns = analyzeAst(parsed.ast, source, parsed.sourceType, classes);
  const mapped = !!naming && applySourceMap(source, fns, naming);
  uniquifyNames(fns);
  const analysis: ScriptAnalysis = { functions: fns.map(publicInfo), sourceType: parsed.sourceType };
  if (mapped) analysis.mapped = true;
  return { analysis, fns, classes };
}

/** Whether the script's source map named any of its functions. */
function applySourceMap(source: string, fns: AnalyzedFunction[], naming: Naming): boolean {
  const map = loadSourceMap(source, naming.filename);
  if (!map) return false;
  let named = false;
  for (const f of fns) {
    const o = originalPosition(map, f.line, f.column);
    if (!o) continue;
    named = true;
    f.module = moduleNameOf(o.source, naming.cwd);
    f.line = o.line;
    f.column = o.column;
    for (const p of f.points) {
      const q = originalPosition(map, p.line, p.column);
      if (q) { p.line = q.line; p.column = q.column; }
    }
  }
  return named;
}

export function publicInfo(f: AnalyzedFunction): FunctionInfo {
  const { index, name, line, column, start, end, isAsync, isGenerator, isArrow, params, points, noTryWrap, module } = f;
  const info: FunctionInfo = { index, name, line, column, start, end, isAsync, isGenerator, isArrow, params, points };
  if (noTryWrap) info.noTryWrap = noTryWrap;
  if (module !== undefined) info.module = module;
  return info;
}
