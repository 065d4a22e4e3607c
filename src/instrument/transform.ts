// Preparation of a script: slots (base trampolines) at every point of every
// function, guarded by a per-function global that holds 0 until something is
// switched on. V8 constant-folds a global that never changed, so an unused
// slot costs nothing in optimized code; switching instrumentation on later is
// an assignment in the in-target runtime, never another code change.
//
// Generated code only ever *inserts* text and never adds a newline, so line
// numbers in stack traces stay the same. The shapes used:
//   entry      if($pnS_F)$pnS_F[0](a,b);            after the directive prologue
//   return     return $pnP($pnS_F,s,EXPR)           pass-through helper, no temporaries
//   end        ;if($pnS_F)$pnS_F[s]();              before the closing brace
//   throw      try{ ... }catch($pnE){...;throw $pnE}  rethrows the same object
//   call       $pnC(pre, $pnS_F, s, CALL)           callee text untouched (error messages stay)
//   await      $pnP(G,r,await $pnP(G,a,X))          suspension and resumption
// Handler slot numbering: G[2k] is the (pre) handler of point k, G[2k+1] the
// post-call handler of a call point.
import { AnalyzedFunction, analyzeScript, Naming, ScriptAnalysis } from '../analysis/functions';

export type PrepareMode = 'load' | 'liveedit';

export interface Insertion {
  pos: number;
  text: string;
  /** ordering class at one position: closes, then after-plain, then before-plain, then opens */
  cls: 0 | 1 | 2 | 3;
  /** tie-break within the class */
  key: number;
  fn: number;
  point: number;
}

export interface PreparedScript {
  code: string;
  analysis: ScriptAnalysis;
  /** points that received no slot, with the reason (point index per function) */
  unslotted: { fn: number; point: number; reason: string }[];
}

export function slotGlobal(scriptNo: number, fn: number): string {
  return `$pn${scriptNo}_${fn}`;
}

const ASSIGN_LIKE = new Set(['AssignmentExpression', 'ArrowFunctionExpression', 'ConditionalExpression', 'SequenceExpression', 'YieldExpression']);

/** Compute the insertions that place slots at every point. */
export function planInsertions(source: string, fns: AnalyzedFunction[], scriptNo: number, mode: PrepareMode): { ins: Insertion[]; unslotted: PreparedScript['unslotted'] } {
  const ins: Insertion[] = [];
  const unslotted: PreparedScript['unslotted'] = [];
  const add = (fn: number, point: number, pos: number, text: string, cls: Insertion['cls'], key: number) =>
    ins.push({ pos, text, cls, key, fn, point });

  for (const f of fns) {
    const G = slotGlobal(scriptNo, f.index);
    const node = f.node;
    const args = f.params.map((p) => p ?? 'void 0').join(',');
    const blockBody = node.body.type === 'BlockStatement';
    // Scope changes around closures make LiveEdit drop the function ("damaged"):
    // in that mode, only wrap bodies that declare nothing lexically at top level.
    let tryWrap = !f.noTryWrap;
    if (mode === 'liveedit' && blockBody && node.body.body.some((s: any) =>
      s.type === 'FunctionDeclaration' || s.type === 'ClassDeclaration' || (s.type === 'VariableDeclaration' && s.kind !== 'var'))) tryWrap = false;
    const throwPoint = f.points.findIndex((p) => p.exit === 'throw');

    for (const p of f.points) {
      const pn = f.pointNodes[p.index];
      const slot = 2 * p.index;
      switch (p.kind) {
        case 'entry': {
          if (blockBody) {
            // at the first statement, not after '{': the header line stays unchanged,
            // so V8's line diff never swallows the function's start (see liveedit-diff)
            const pos = bodyStart(node.body);
            add(f.index, p.index, pos, `if(${G})${G}[${slot}](${args});`, 1, -2);
            if (tryWrap && throwPoint >= 0) add(f.index, throwPoint, pos, 'try{', 1, -1);
          } else if (mode === 'load') {
            const bodyStart = arrowBodyStart(source, node);
            const exitPoint = f.points.find((q) => q.exit === 'return')!;
            const tw = tryWrap && throwPoint >= 0;
            add(f.index, p.index, bodyStart, `{if(${G})${G}[${slot}](${args});${tw ? 'try{' : ''}return $pnP(${G},${2 * exitPoint.index},`, 3, -node.end);
            add(f.index, exitPoint.index, node.end, `)${tw ? `}catch($pnE){if(${G})${G}[${2 * throwPoint}]();throw $pnE}` : ''}}`, 0, -bodyStart);
          } else if (!ASSIGN_LIKE.has(node.body.type) && !(node.body.type === 'LogicalExpression' && node.body.operator === '??')) {
            add(f.index, p.index, node.body.start, `(${G}&&${G}[${slot}](${args}),0)||`, 2, 0);
          } else unslotted.push({ fn: f.index, point: p.index, reason: 'expression body cannot take an entry slot by LiveEdit' });
          break;
        }
        case 'exit': {
          if (p.exit === 'return' && pn && pn.type === 'ReturnStatement') {
            if (pn.argument) {
              add(f.index, p.index, pn.argument.start, `$pnP(${G},${slot},`, 3, -pn.argument.end);
              add(f.index, p.index, pn.argument.end, ')', 0, -pn.argument.start);
            } else add(f.index, p.index, pn.start + 6, ` $pnP(${G},${slot})`, 1, 0);
          } else if (p.exit === 'return') {
            // expression-bodied arrow: handled with the entry slot at load time
            if (mode !== 'load') unslotted.push({ fn: f.index, point: p.index, reason: 'exit of an expression-bodied arrow needs a suffix LiveEdit cannot place' });
          } else if (p.exit === 'end') {
            add(f.index, p.index, bodyEnd(node.body), `;if(${G})${G}[${slot}]();`, 1, 1);
          } else if (p.exit === 'throw') {
            if (!blockBody) {
              if (mode !== 'load' || !tryWrap) unslotted.push({ fn: f.index, point: p.index, reason: 'no try wrapper possible here' });
            } else if (tryWrap) {
              // ends in ';' so that V8's diff cannot slide it past the closing brace
              add(f.index, p.index, bodyEnd(node.body), `}catch($pnE){if(${G})${G}[${slot}]();throw $pnE};`, 1, 2);
            }
            else unslotted.push({ fn: f.index, point: p.index, reason: f.noTryWrap ?? 'body declares let/const/class/function at top level (LiveEdit would drop it)' });
          }
          break;
        }
        case 'call': {
          const sargs = (p.simpleArgs ?? []).map((a) => a ?? 'void 0').join(',');
          add(f.index, p.index, pn!.start, `$pnC(${G}&&${G}[${slot}](${sargs}),${G},${slot + 1},`, 3, -pn!.end);
          add(f.index, p.index, pn!.end, ')', 0, -pn!.start);
          break;
        }
        case 'await': {
          // resume wraps the whole await/yield, suspend wraps its operand
          const resume = f.points[p.index + 1];
          const rslot = 2 * resume.index;
          add(f.index, resume.index, pn!.start, `$pnP(${G},${rslot},`, 3, -pn!.end);
          add(f.index, resume.index, pn!.end, ')', 0, -pn!.start);
          if (pn!.argument) {
            add(f.index, p.index, pn!.argument.start, `$pnP(${G},${slot},`, 3, -pn!.argument.end);
            add(f.index, p.index, pn!.argument.end, ')', 0, -pn!.argument.start);
          } else add(f.index, p.index, pn!.start + 5, ` $pnP(${G},${slot})`, 1, 0);
          break;
        }
        default:
          break;
      }
    }
  }
  return { ins, unslotted };
}

/** Where a block body's own code starts: its first statement after the directives. */
function bodyStart(body: any): number {
  const stmts = body.body;
  let i = 0;
  while (i < stmts.length && stmts[i].type === 'ExpressionStatement' && typeof stmts[i].directive === 'string') i++;
  if (i < stmts.length) return stmts[i].start;
  return i > 0 ? stmts[i - 1].end : body.start + 1;
}

/** Right after the last statement (the closing-brace line stays unchanged). */
export function bodyEnd(body: any): number {
  const stmts = body.body;
  return stmts.length ? stmts[stmts.length - 1].end : body.end - 1;
}

function arrowBodyStart(source: string, node: any): number {
  const from = node.params.length ? node.params[node.params.length - 1].end : node.start;
  const i = source.indexOf('=>', from);
  return i + 2;
}

export function sortInsertions(ins: Insertion[]): Insertion[] {
  return ins
    .map((x, i) => ({ x, i }))
    .sort((a, b) => a.x.pos - b.x.pos || a.x.cls - b.x.cls || a.x.key - b.x.key || a.i - b.i)
    .map((e) => e.x);
}

export function applyInsertions(source: string, ins: Insertion[]): string {
  const sorted = sortInsertions(ins);
  let out = '';
  let last = 0;
  for (const x of sorted) {
    out += source.slice(last, x.pos) + x.text;
    last = x.pos;
  }
  return out + source.slice(last);
}

/** Prepare a script at load time (any shape allowed). */
export function prepareForLoad(source: string, scriptNo: number, sourceType?: 'script' | 'module', naming?: Naming): PreparedScript {
  const { analysis, fns } = analyzeScript(source, sourceType, naming);
  const { ins, unslotted } = planInsertions(source, fns, scriptNo, 'load');
  return { code: applyInsertions(source, ins), analysis, unslotted };
}

/**
 * Prepare an ES module at load time. Its guards are module-scope vars (hoisted,
 * so a function called before the module body runs, through a circular import,
 * sees undefined and skips its slots), and a preamble on line 1 (no newline
 * added) hands the runtime of the thread a setter for them.
 */
export function prepareModuleForLoad(source: string, scriptNo: number, url: string, naming?: Naming): PreparedScript {
  const prepared = prepareForLoad(source, scriptNo, 'module', naming);
  const n = prepared.analysis.functions.length;
  if (n === 0) return prepared;
  const names = Array.from({ length: n }, (_, f) => slotGlobal(scriptNo, f));
  const cases = names.map((g, f) => `case ${f}:${g}=$v;break;`).join('');
  const preamble = `var ${names.join(',')};globalThis[Symbol.for('paranode.runtime')]?.registerModule(${scriptNo},${JSON.stringify(url)},` +
    `${JSON.stringify(prepared.analysis)},function($f,$v){switch($f){${cases}}},${JSON.stringify(prepared.unslotted.map((u) => [u.fn, u.point]))});`;
  // a hashbang line must stay first (and is a comment): start of line 2 then
  let at = 0;
  if (prepared.code.startsWith('#!')) {
    const m = /\r\n|[\n\r\u2028\u2029]/.exec(prepared.code);
    at = m ? m.index + m[0].length : prepared.code.length;
  }
  return { ...prepared, code: prepared.code.slice(0, at) + preamble + prepared.code.slice(at) };
}
