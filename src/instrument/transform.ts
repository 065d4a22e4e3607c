// Preparation of a script: slots (base trampolines) at every point of every
// function, guarded by a per-function global that holds 0 until something is
// switched on. V8 constant-folds a global that never changed, so an unused
// slot costs nothing in optimized code; switching instrumentation on later is
// an assignment in the in-target runtime, never another code change.
//
// Correct by construction: every insertion is either one half of a *wrap*
// around an expression the parser delimited (the wrapped text keeps its
// grammar: operands are parenthesized, so a sequence never becomes several
// arguments) or a whole *statement* placed where a statement may stand. A last
// pass separates inserted text from an adjacent identifier character
// (`return-1`, `"x"in f()`, `else(0,f)()`), so no keyword is glued to ours.
// Text is only inserted, never a newline, so line numbers in stack traces stay.
// The shapes used:
//   entry      if(G)G[0](a,b);                       after '{' or the directive prologue
//   exits      var $pnK=t,$pnR;try{ ... }finally{if(G)$pnP(G,$pnK,$pnR)}
//              one finally runs the exit handler: each normal exit notes its slot in
//              $pnK (the throw slot t until then) and its value in $pnR, so that an
//              exit costs two register moves and no call while its slot is off.
//              V8 rethrows after a finally with the original location.
//   return x   return $pnR=(0,x),$pnK=s,$pnR      (0,x): an anonymous function or class
//                                                  returned keeps its empty name (x=function(){} names it x);
//              return $pnR=$pnC(0,(x)),$pnK=s,$pnR  where x holds a function or class literal: V8 also
//                                                  infers a name for stack traces from an assignment,
//                                                  but not for the last literal of a call's right side
//   return;    {$pnR=void 0;$pnK=s;return;}          no operand added
//   end        ;$pnR=void 0;$pnK=s;                  after the last statement
//   yield      $pnP(G,r,yield $pnP(G,a,(X),$pnK=end),$pnK=t)   suspended: closed by return()
//                                                    there, the end slot runs
// LiveEdit and functions with an unslotted return keep a handler per exit:
//   return x   return $pnP(G,s,(x))                  pass-through helper, no temporaries
//   return;    {if(G)G[s]();return;}                 no operand added (an async generator's
//                                                    `return x` awaits x, a bare one does not)
//   end        ;if(G)G[s]();                         after the last statement
//   throw      try{ ... }catch($pnE){if(G)G[s]();throw $pnE}   (the same object)
//   generator  var $pnT;try{ ... }catch($pnE){$pnT=0;..}finally{if($pnT===2&&G)G[end]()}
//              (one with an unslotted return) yields set $pnT=2 while suspended
//   call       ($pnc<d>=G&&G[s](args),$pnV=CALL,$pnc<d>&&$pnc<d>($pnV),$pnV)
//              at load: no call while off. The pre-call handler returns the post-call one
//              (or nothing) into a local of the function, one per depth of nested call
//              sites (`f(g())`: an inner call's runs inside the outer's CALL); $pnV is only
//              read right after it is written. Declared with the entry slot:
//              if(G)G[0](a,b);var $pnV,$pnc0,..;   A ';' goes before it where it begins
//              a statement (the '(' would continue the line before)
//              $pnC(G&&G[s](args),CALL)              elsewhere (LiveEdit; parameter defaults, class
//                                                    fields and static blocks, which run in frames of
//                                                    their own; `f() = 1`): the pass-through keeps it
//              callee text untouched in both
//   await      $pnP(G,r,await $pnP(G,a,(X)))         suspension and resumption; at load, in a function
//              with the exit finally: $pnP(G,r,await $pnP(G,a,(X),$pnA=r),$pnA=0), and its catch
//              and finally blocks and exit begin with $pnA&&($pnP(G,$pnA),$pnA=0): the resume
//              slot of an await or yield that threw
//   for await  {try{L: for await(x of $pnP(G,a,(X),$pnA=r)){try{R BODY}finally{R$pnP(G,a,void 0,$pnA=r)}}}finally{R}}
//              its awaits are implicit: suspended after X and after each iteration (a break or
//              return awaits the iterator's return()), resumed as an iteration begins and after
//              the loop; R is the catch blocks' $pnA&&(...) (load, with the exit finally only)
//   loop       {if(G)G[e]();try{L: for(...)...}finally{if(G)G[e+1]()}}   entry and exit, labels inside
//   trip       for(...){if(G)G[t]();...}  or  for(...){if(G)G[t]();stmt}   each iteration (load only)
// Points where a slot would be observable (inside `with`, a call in an optional
// chain after its `?.`) get none and are reported.
// Handler slot numbering: G[2k] is the (pre) handler of point k, G[2k+1] the
// post-call handler of a call point.
import { AnalyzedFunction, analyzeScript, lineIndex, Naming, ScriptAnalysis } from '../analysis/functions';
import { functionTextRange, scriptLayout, ScriptLayout } from './layout';

export type PrepareMode = 'load' | 'liveedit';

/**
 * One piece of inserted text. Pieces at one position go: closes of wraps
 * (inner first), then text that ends what came before, then text that begins
 * what follows, then opens of wraps (outer first). A wrap's halves share
 * start, end and id; of two wraps over the same range the one made first is
 * the outer (points are made in source order, parents before children).
 */
export interface Insertion {
  pos: number;
  text: string;
  phase: 0 | 1 | 2 | 3;
  start: number;
  end: number;
  id: number;
  fn: number;
  point: number;
}

export interface PreparedScript {
  code: string;
  analysis: ScriptAnalysis;
  /** points that received no slot, with the reason (point index per function) */
  unslotted: { fn: number; point: number; reason: string }[];
  /** where the insertions are in the prepared text (for the runtime to show the program its own) */
  layout: ScriptLayout;
  /** analysis.functions.length, known without reading analysis (a cache entry decodes it when first read) */
  functionCount?: number;
}

export function slotGlobal(scriptNo: number, fn: number): string {
  return `$pn${scriptNo}_${fn}`;
}

const ASSIGN_LIKE = new Set(['AssignmentExpression', 'ArrowFunctionExpression', 'ConditionalExpression', 'SequenceExpression', 'YieldExpression']);

/** Compute the insertions that place slots at every point. */
export function planInsertions(source: string, fns: AnalyzedFunction[], scriptNo: number, mode: PrepareMode): { ins: Insertion[]; unslotted: PreparedScript['unslotted'] } {
  const ins: Insertion[] = [];
  const unslotted: PreparedScript['unslotted'] = [];
  let ids = 0;
  const plain = (fn: number, point: number, pos: number, text: string, phase: 1 | 2) =>
    ins.push({ pos, text, phase, start: pos, end: pos, id: ids++, fn, point });
  const wrap = (fn: number, point: number, start: number, end: number, open: string, close: string) => {
    const id = ids++;
    ins.push({ pos: start, text: open, phase: 3, start, end, id, fn, point });
    ins.push({ pos: end, text: close, phase: 0, start, end, id, fn, point });
  };

  for (const f of fns) {
    const G = slotGlobal(scriptNo, f.index);
    const node = f.node;
    const noSlot = (point: number, reason: string) => unslotted.push({ fn: f.index, point, reason });
    if (f.withScope) {
      for (const p of f.points) noSlot(p.index, 'inside a with statement: a slot would be looked up on its object');
      continue;
    }
    const args = f.params.map((p) => p ?? 'void 0').join(',');
    const blockBody = node.body.type === 'BlockStatement';
    // Scope changes around closures make LiveEdit drop the function ("damaged"):
    // in that mode, only wrap bodies that declare nothing lexically at top level.
    let tryWrap = !f.noTryWrap;
    if (mode === 'liveedit' && blockBody && node.body.body.some((s: any) =>
      s.type === 'FunctionDeclaration' || s.type === 'ClassDeclaration' || (s.type === 'VariableDeclaration' && s.kind !== 'var'))) tryWrap = false;
    const throwPoint = f.points.findIndex((p) => p.exit === 'throw');
    // an empty body (or one of directives only): the end slot comes after the entry slot
    const entryAt = blockBody ? entryPos(source, node.body, mode) : null;
    const endAt = blockBody ? endPos(node.body, mode) : -1;
    const endPhase = entryAt && entryAt.pos === endAt ? 2 : 1;
    const endPoint = f.points.findIndex((q) => q.exit === 'end');
    // a function prepared at load runs its exit handler in one finally, told which exit by a
    // local its normal exits set (else the throw slot): V8 then rethrows with the original
    // location (a `throw` in a catch would make an uncaught exception's banner name our line).
    // A generator's yield sets it to the end slot while suspended: closed by return() there,
    // it leaves by a return completion no slot sees (closed by throw() there, it counts as
    // the end too: a finally cannot tell the two apart)
    const exitLocal = mode === 'load' && tryWrap && throwPoint >= 0 && (!f.isGenerator || (blockBody && endPoint >= 0)) &&
      !f.points.some((q) => (q.exit === 'return' || q.exit === 'end') && f.pointNoSlot.has(q.index));
    // a generator with a return that has no slot: a flag marks suspension, a catch the exception
    const genFlag = mode === 'load' && f.isGenerator && blockBody && tryWrap && throwPoint >= 0 && !exitLocal;
    // An await or yield that throws (a rejected promise, a generator's throw() or return() there)
    // skips its resume slot: the suspension notes the resume slot in $pnA and the resumption
    // clears it, so the function's catch and finally blocks, and its exit, run the one left
    // (else an await's timer, started at the suspension, ran on for good)
    const pending = (exitLocal || genFlag) && f.points.some((q) => q.kind === 'resume' && !f.pointNoSlot.has(q.index));
    const resumeLeft = pending ? `$pnA&&($pnP(${G},$pnA),$pnA=0);` : '';
    const exitOpen = `var $pnK=${2 * throwPoint},$pnR${pending ? ',$pnA=0' : ''};try{`;
    // call sites with locals of their own, declared with the entry slot (a function prepared at load)
    const temps = mode === 'load' && !f.pointNoSlot.has(0) && f.points[0]?.kind === 'entry' ? callTemps(f) : null;
    const tempDecl = temps?.count ? `var $pnV,${Array.from({ length: temps.count }, (_, d) => `$pnc${d}`).join(',')};` : '';
    const callOpened = new Set<number>();
    const exitClose = `}finally{${resumeLeft}if(${G})$pnP(${G},$pnK,$pnR)}`;
    if (pending) for (const at of f.handlerStarts) plain(f.index, throwPoint, at, resumeLeft, 2);

    for (const p of f.points) {
      const pn = f.pointNodes[p.index];
      const slot = 2 * p.index;
      const why = f.pointNoSlot.get(p.index);
      if (why) { noSlot(p.index, why); continue; }
      switch (p.kind) {
        case 'entry': {
          if (blockBody) {
            const { pos, sep } = entryAt!;
            plain(f.index, p.index, pos, `${sep}if(${G})${G}[${slot}](${args});${tempDecl}`, 2);
            if (tryWrap && throwPoint >= 0) plain(f.index, throwPoint, pos, genFlag ? `var $pnT${pending ? ',$pnA=0' : ''};try{` : exitLocal ? exitOpen : 'try{', 2);
          } else if (mode === 'load') {
            const from = arrowBodyStart(source, node);
            const exitPoint = f.points.find((q) => q.exit === 'return')!;
            const tw = tryWrap && throwPoint >= 0;
            const cap = capture(node.body);
            const [open, close] = exitLocal ? [`${exitOpen}return $pnR=${cap[0]}`, `${cap[1]},$pnK=${2 * exitPoint.index},$pnR${exitClose}`]
              : !tw ? [`return $pnP(${G},${2 * exitPoint.index},(`, '))']
                : [`try{return $pnP(${G},${2 * exitPoint.index},(`, `))}catch($pnE){if(${G})${G}[${2 * throwPoint}]();throw $pnE}`];
            wrap(f.index, exitPoint.index, from, node.end, `{if(${G})${G}[${slot}](${args});${tempDecl}${open}`, `${close}}`);
          } else if (!ASSIGN_LIKE.has(node.body.type) && !(node.body.type === 'LogicalExpression' && node.body.operator === '??')) {
            wrap(f.index, p.index, node.body.start, node.body.end, `(${G}&&${G}[${slot}](${args}),0)||`, '');
          } else noSlot(p.index, 'expression body cannot take an entry slot by LiveEdit');
          break;
        }
        case 'exit': {
          if (p.exit === 'return' && pn && pn.type === 'ReturnStatement') {
            // (the slot is noted once the value is computed: an exception in it leaves by the throw slot)
            if (pn.argument) {
              if (exitLocal) { const [o, c] = capture(pn.argument); wrap(f.index, p.index, pn.argument.start, pn.argument.end, `$pnR=${o}`, `${c},$pnK=${slot},$pnR`); }
              else wrap(f.index, p.index, pn.argument.start, pn.argument.end, `$pnP(${G},${slot},(`, '))');
            // a statement of its own: adds no operand, and `return` then a line starting with '[' stays two statements
            } else wrap(f.index, p.index, pn.start, pn.end, exitLocal ? `{$pnR=void 0;$pnK=${slot};` : `{if(${G})${G}[${slot}]();`, '}');
          } else if (p.exit === 'return') {
            // expression-bodied arrow: handled with the entry slot at load time
            if (mode !== 'load') noSlot(p.index, 'exit of an expression-bodied arrow needs a suffix LiveEdit cannot place');
          } else if (p.exit === 'end') {
            plain(f.index, p.index, endAt, exitLocal ? `;$pnR=void 0;$pnK=${slot};` : `;if(${G})${G}[${slot}]();`, endPhase);
          } else if (p.exit === 'throw') {
            if (!blockBody) {
              if (mode !== 'load' || !tryWrap) noSlot(p.index, 'no try wrapper possible here');
            } else if (tryWrap) {
              // ends in ';' so that V8's diff cannot slide it past the closing brace
              const closed = genFlag ? `finally{${resumeLeft}if($pnT===2&&${G})${G}[${2 * endPoint}]()}` : '';
              // (a generator's throw() at a yield throws while the flag says suspended: the catch clears it, one exit)
              plain(f.index, p.index, endAt, exitLocal ? `${exitClose};` : `}catch($pnE){${resumeLeft}${genFlag ? '$pnT=0;' : ''}if(${G})${G}[${slot}]();throw $pnE}${closed};`, endPhase);
            } else noSlot(p.index, f.noTryWrap ?? 'body declares let/const/class/function at top level (LiveEdit would drop it)');
          }
          break;
        }
        case 'call': {
          const sargs = (p.simpleArgs ?? []).map((a) => a ?? 'void 0').join(',');
          const d = temps?.depth.get(p.index);
          if (d === undefined) wrap(f.index, p.index, pn!.start, pn!.end, `$pnC(${G}&&${G}[${slot}](${sargs}),`, ')');
          else {
            const t = `$pnc${d}`;
            const semi = f.stmtCalls.has(p.index) && !callOpened.has(pn!.start) ? ';' : '';
            wrap(f.index, p.index, pn!.start, pn!.end, `${semi}(${t}=${G}&&${G}[${slot}](${sargs}),$pnV=`, `,${t}&&${t}($pnV),$pnV)`);
          }
          callOpened.add(pn!.start);
          break;
        }
        case 'await': {
          const resume = f.points[p.index + 1];
          const rslot = 2 * resume.index;
          if (pn!.type === 'ForOfStatement') {
            // `for await`: its awaits are implicit, so the suspension is noted in $pnA after
            // the operand and after each iteration (a finally: a break or return awaits the
            // iterator's return() too), and the resumption runs as an iteration begins and
            // once the loop is over (the $pnA left, in a finally: a rejected next() too)
            if (!pending) {
              const why = mode === 'load' ? 'a for await in a function without the exit wrapper' : 'for await gets slots only in programs prepared at load';
              noSlot(p.index, why); noSlot(resume.index, why);
              break;
            }
            const loop = pn!;
            wrap(f.index, p.index, loop.__slotStart ?? loop.start, loop.end, '{try{', `}finally{${resumeLeft}}}`);
            wrap(f.index, p.index, loop.right.start, loop.right.end, `$pnP(${G},${slot},(`, `),$pnA=${rslot})`);
            wrap(f.index, resume.index, loop.body.start, loop.body.end, `{try{${resumeLeft}`, `}finally{${resumeLeft}$pnP(${G},${slot},void 0,$pnA=${rslot})}}`);
            break;
          }
          // resume wraps the whole await/yield, suspend wraps its operand
          // in a generator, a yield notes the end slot (or sets the flag) while suspended (extra arguments, evaluated in order)
          const flag = f.isGenerator && (exitLocal || genFlag) && pn!.type === 'YieldExpression';
          const [suspended0, resumed0] = !flag ? ['', ''] : exitLocal ? [`,$pnK=${2 * endPoint}`, `,$pnK=${2 * throwPoint}`] : [',$pnT=2', ',$pnT=0'];
          const [suspended, resumed] = pending ? [`${suspended0},$pnA=${rslot}`, `${resumed0},$pnA=0`] : [suspended0, resumed0];
          if (pn!.argument) {
            wrap(f.index, resume.index, pn!.start, pn!.end, `$pnP(${G},${rslot},`, `${resumed})`);
            wrap(f.index, p.index, pn!.argument.start, pn!.argument.end, `$pnP(${G},${slot},(`, `)${suspended})`);
          } else {
            // bare `yield`: it yields undefined, as the suspend slot gives back
            wrap(f.index, resume.index, pn!.start, pn!.end, `$pnP(${G},${rslot},`, ` $pnP(${G},${slot},void 0${suspended})${resumed})`);
          }
          break;
        }
        case 'loop': {
          // entry before the loop and its labels, exit in a finally: a break, a return, a throw
          // or a generator closed inside all leave through it. A block is a statement wherever
          // the loop was one (the body of an if or of another loop included)
          const loop = pn!;
          if (mode !== 'load') { noSlot(p.index, 'loops get slots only in programs prepared at load'); break; }
          wrap(f.index, p.index, loop.__slotStart ?? loop.start, loop.end, `{if(${G})${G}[${slot}]();try{`, `}finally{if(${G})${G}[${slot + 1}]()}}`);
          break;
        }
        case 'trip': {
          if (mode !== 'load') { noSlot(p.index, 'loops get slots only in programs prepared at load'); break; }
          // first in each iteration: after the body's '{', or a statement body made a block
          // (a loop's body can declare nothing lexically: a block around it changes no scope)
          if (pn!.type === 'BlockStatement') plain(f.index, p.index, pn!.start + 1, `if(${G})${G}[${slot}]();`, 2);
          else wrap(f.index, p.index, pn!.start, pn!.end, `{if(${G})${G}[${slot}]();`, '}');
          break;
        }
        default:
          break;
      }
    }
  }
  return { ins, unslotted };
}

/**
 * The local each call site of a function prepared at load keeps its post-call
 * handler in: its depth among the call sites around it (those evaluated while
 * it runs), so that siblings share one and nested ones never do.
 */
function callTemps(f: AnalyzedFunction): { depth: Map<number, number>; count: number } {
  const depth = new Map<number, number>();
  const open: number[] = []; // ends of the enclosing call sites
  let count = 0;
  for (const p of f.points) {
    if (p.kind !== 'call' || f.pointNoSlot.has(p.index) || f.passCalls.has(p.index)) continue;
    const n = f.pointNodes[p.index]!;
    while (open.length && open[open.length - 1] <= n.start) open.pop();
    depth.set(p.index, open.length);
    count = Math.max(count, open.length + 1);
    open.push(n.end);
  }
  return { depth, count };
}

/**
 * Where a block body's entry slot goes, and what must separate it from the
 * text before. At load time right after '{' (columns of the lines below stay),
 * or after the directive prologue (inserting before "use strict" would make the
 * function sloppy). For LiveEdit at the first statement: the header line stays
 * unchanged, so V8's line diff never swallows the function's start.
 */
/**
 * How a returned value is captured into $pnR: `(0,x)` keeps an anonymous
 * function's `name` empty, but V8 still infers "$pnR" for its stack frames
 * from the assignment unless the right side is a call: `$pnC(0,(x))` (a pass-through)
 * where x holds a function or class literal outside any nested function.
 */
function capture(x: any): [open: string, close: string] {
  return holdsFunctionLiteral(x) ? ['$pnC(0,(', '))'] : ['(0,', ')'];
}

const LITERALS = new Set(['FunctionExpression', 'ArrowFunctionExpression', 'ClassExpression']);
function holdsFunctionLiteral(n: any): boolean {
  if (!n || typeof n.type !== 'string') return false;
  if (LITERALS.has(n.type)) return true;
  for (const k of Object.keys(n)) {
    const v = n[k];
    if (Array.isArray(v)) { if (v.some(holdsFunctionLiteral)) return true; } else if (v && typeof v === 'object' && typeof v.type === 'string' && holdsFunctionLiteral(v)) return true;
  }
  return false;
}

function entryPos(source: string, body: any, mode: PrepareMode): { pos: number; sep: string } {
  const stmts = body.body;
  let i = 0;
  while (i < stmts.length && stmts[i].type === 'ExpressionStatement' && typeof stmts[i].directive === 'string') i++;
  if (i > 0) {
    const last = stmts[i - 1];
    if (mode === 'liveedit' && i < stmts.length) return { pos: stmts[i].start, sep: '' };
    // a directive with no ';' (`"use strict" }`) must not run into our statement
    return { pos: last.end, sep: source[last.end - 1] === ';' ? '' : ';' };
  }
  if (mode === 'liveedit' && stmts.length) return { pos: stmts[0].start, sep: '' };
  return { pos: body.start + 1, sep: '' };
}

/**
 * Where a block body's end and throw slots go: at load time right before its
 * closing brace (the line of its last statement, often a `throw`, stays as
 * written); for LiveEdit right after the last statement, so that the
 * closing-brace line stays unchanged for V8's line diff.
 */
function endPos(body: any, mode: PrepareMode): number {
  return mode === 'load' ? body.end - 1 : bodyEnd(body);
}

/** Right after the last statement (the closing-brace line stays unchanged). */
export function bodyEnd(body: any): number {
  const stmts = body.body;
  return stmts.length ? stmts[stmts.length - 1].end : body.end - 1;
}

/** Right after the `=>` of an arrow: skips parentheses, commas, `async` and comments (which may hold a `=>`). */
export function arrowBodyStart(source: string, node: any): number {
  let i = node.params.length ? node.params[node.params.length - 1].end : node.start;
  for (;;) {
    const c = source[i];
    if (c === '=' && source[i + 1] === '>') return i + 2;
    if (c === '/' && source[i + 1] === '/') { while (i < source.length && !/[\n\r\u2028\u2029]/.test(source[i])) i++; continue; }
    if (c === '/' && source[i + 1] === '*') { const e = source.indexOf('*/', i + 2); i = e < 0 ? source.length : e + 2; continue; }
    if (source.startsWith('async', i) && i === node.start) { i += 5; continue; }
    if (i >= node.body.start) throw new Error(`no '=>' before the body of the arrow at offset ${node.start}`);
    i++;
  }
}

const PHASE_ORDER = (a: Insertion, b: Insertion): number => {
  if (a.phase !== b.phase) return a.phase - b.phase;
  if (a.phase === 0) return b.start - a.start || b.id - a.id;
  if (a.phase === 3) return b.end - a.end || a.id - b.id;
  return a.id - b.id;
};

export function sortInsertions(ins: Insertion[]): Insertion[] {
  return [...ins].sort((a, b) => a.pos - b.pos || PHASE_ORDER(a, b));
}

const IDENT = /[\w$\\\u0080-\uffff]/;

/**
 * Apply the insertions. Where inserted text would touch an identifier
 * character of the text beside it, a space goes between (written back into
 * the insertion, so that positions computed from the insertions stay right).
 */
export function applyInsertions(source: string, ins: Insertion[]): string {
  const sorted = sortInsertions(ins);
  const parts: string[] = [];
  let last = 0;
  // the last character written (reading it back from a growing string would flatten it each time)
  let prev = '';
  for (let k = 0; k < sorted.length; k++) {
    const x = sorted[k];
    if (x.pos > last) { parts.push(source.slice(last, x.pos)); prev = source[x.pos - 1]; last = x.pos; }
    if (x.text && IDENT.test(prev) && IDENT.test(x.text[0])) x.text = ' ' + x.text;
    const next = sorted[k + 1];
    if ((!next || next.pos !== x.pos) && x.text && IDENT.test(x.text[x.text.length - 1]) && IDENT.test(source[x.pos] ?? '')) x.text += ' ';
    parts.push(x.text);
    if (x.text) prev = x.text[x.text.length - 1];
  }
  parts.push(source.slice(last));
  return parts.join('');
}

/** Prepare a script at load time (any shape allowed). */
export function prepareForLoad(source: string, scriptNo: number, sourceType?: 'script' | 'module', naming?: Naming): PreparedScript {
  const { analysis, fns, classes } = analyzeScript(source, sourceType, naming);
  const { ins, unslotted } = planInsertions(source, fns, scriptNo, 'load');
  const code = applyInsertions(source, ins);
  const ranges = [...fns.map((f) => functionTextRange(source, f)), ...classes];
  return { code, analysis, unslotted, layout: scriptLayout(sortInsertions(ins), ranges, lineIndex(source)) };
}

/**
 * Prepare an ES module at load time. Its guards are module-scope vars (hoisted,
 * so a function called before the module body runs, through a circular import,
 * sees undefined and skips its slots), and a preamble on line 1 (no newline
 * added) hands the runtime of the thread a setter for them. `analysisInCode`:
 * the preamble carries the module's analysis too, for a load hook that runs in
 * another thread than the module (module.register's); a hook in the module's own
 * thread hands it to the runtime itself (Runtime.expectModule), and V8 does not
 * parse and build it at every start (an object literal as large as the module).
 */
export function prepareModuleForLoad(source: string, scriptNo: number, url: string, naming?: Naming, analysisInCode = true): PreparedScript {
  const prepared = prepareForLoad(source, scriptNo, 'module', naming);
  const n = prepared.analysis.functions.length;
  if (n === 0) return prepared;
  const names = Array.from({ length: n }, (_, f) => slotGlobal(scriptNo, f));
  const cases = names.map((g, f) => `case ${f}:${g}=$v;break;`).join('');
  const analysis = analysisInCode ? JSON.stringify(prepared.analysis) : 'null';
  const noSlot = analysisInCode ? `,${JSON.stringify(prepared.unslotted.map((u) => [u.fn, u.point]))}` : '';
  const preamble = `var ${names.join(',')};globalThis[Symbol.for('paranode.runtime')]?.registerModule(${scriptNo},${JSON.stringify(url)},` +
    `${analysis},function($f,$v){switch($f){${cases}}}${noSlot});`;
  // a hashbang line must stay first (and is a comment): start of line 2 then
  let at = 0;
  if (prepared.code.startsWith('#!')) {
    const m = /\r\n|[\n\r\u2028\u2029]/.exec(prepared.code);
    at = m ? m.index + m[0].length : prepared.code.length;
  }
  // the preamble is one more insertion, at the start of line 1 or 2
  const { at: offsets, lines, texts } = prepared.layout;
  const line = at ? 2 : 1;
  const layout: ScriptLayout = {
    at: [at, preamble.length, ...offsets.map((v, i) => (i % 2 === 0 && v >= at ? v + preamble.length : v))],
    lines: { ...lines, [line]: [0, preamble.length, ...(lines[line] ?? []).map((v, i) => (i % 2 === 0 ? v + preamble.length : v))] },
    texts: texts.map((v, i) => (i % 4 === 0 && v >= at ? v + preamble.length : v)),
  };
  return { ...prepared, code: prepared.code.slice(0, at) + preamble + prepared.code.slice(at), layout };
}
