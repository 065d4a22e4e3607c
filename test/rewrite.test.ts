// The rewrite keeps the program's behaviour: each shape that once broke it,
// reduced to a few lines, runs the same as written, prepared with slots off,
// and prepared with a counter at every point.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { count, preparedText, runVariant } from './support/prepared-run';

const CASES: Record<string, string> = {
  'return of a comma expression': `function f(){ var pos = 0, t; return pos += 3, t = pos * 2; } out.push(f());`,
  'bare yield': `function* g(){ yield; yield 1; var x = yield; out.push(x); } const it = g(); out.push(it.next(), it.next(), it.next(), it.next(5));`,
  'yield and await with no space before the operand': `function* g(){ yield[1]; yield"s"; } out.push([...g()]); async function h(){ return await"x"; } out.push(await h());`,
  'a directive with nothing after it': `function f(){ "use strict" } function s(){ "use strict"
 return this } function t(){ 'use strict'; } f(); t(); out.push(s() === undefined);`,
  'bare return in an async generator adds no await tick': `const log = [];
    async function* g(){ return; } async function* h(){ return 1; }
    const p = g().next().then(() => log.push('g')); const q = h().next().then(() => log.push('h'));
    Promise.resolve().then(() => log.push(1)).then(() => log.push(2)).then(() => log.push(3)).then(() => log.push(4));
    await p; await q; await new Promise((r) => setTimeout(r, 1)); out.push(log);`,
  'keywords glued to the operand': `function h(){ return"x"in{x:1} } function f(n){ if(n)return!0; else(0,h)(); return-1 } function g(){ return typeof"a" }
    function v(){ return void 0 } function k(){ const o = {a:1}; return delete o.a } out.push(f(1), f(0), h(), g(), v(), k());`,
  'arrow with no space after =>': `const id2=x=>x; const k=x=>id2(x); const m=(a,b)=>a+b; out.push(k(5), m(1,2), [1,2].map(x=>id2(x)*2));`,
  'await of a comma expression': `async function f(){ return await (0, Promise.resolve(7)); } out.push(await f());`,
  'bare return then a line starting with [': `function f(){ var a = [1]
  return
  [0].map(x=>x)
} out.push(f());`,
  'sloppy function of a parameter name': `function f(a){ function a(){} return typeof arguments[0]; } function g(a){ a = 2; return arguments[0]; } out.push(f(1), g(1));`,
  'optional chains short-circuit past calls': `const a = null; const o = { b(){ return null; }, c(){ return { d(){ return 4; } }; } };
    out.push(a?.b().c, a?.b.c(), o.b()?.c, o.c?.().d(), o.x?.().y, (a?.b)?.c);`,
  "a comment holding => in an arrow's parameters": `const f = (a /* => */) => a; const g = (a, // =>
  b) => a + b; out.push(f(1), g(1, 2));`,
  'an argument read once (a global getter)': `let reads = 0; Object.defineProperty(globalThis, 'pnGetterX', { get(){ reads++; return 1; }, configurable: true });
    function f(){ return id(pnGetterX); } f(); f(); delete globalThis.pnGetterX; out.push(reads);`,
  'with: nothing of ours is looked up on its object': `const log = []; const p = new Proxy({}, { has(t, k){ log.push(String(k)); return false; } });
    function f(){ with (p) { id(1); return id(2); } } function g(){ with (p) { return function(){ return id(3); }; } }
    out.push(f(), g()()); out.push(log);`,
  'this before super() is not read early': `const o = { get f(){ out.push('got f'); return () => 0; } };
    class A {} class B extends A { constructor(){ try { o.f(this); } catch (e) { out.push(e.constructor.name); } super(); } }
    new B();`,
  'class features': `class C { #x = id(1); static s = id(2); static { out.push(id(3)); } get x(){ return this.#x; } set x(v){ this.#x = id(v); }
    static #p(){ return 'p'; } static q(){ return C.#p(); } m(){ return super.toString === Object.prototype.toString; } }
    const c = new C(); c.x = 9; out.push(c.x, C.s, C.q(), c.m());`,
  'tagged templates, new.target, labels': `function t(s, ...v){ return s.raw.join('|') + v.join(','); } function N(){ return new.target === N; }
    function l(){ outer: for (const i of [1,2]) { for (const j of [1,2]) { if (j === 2) continue outer; if (i === 2) break outer; } } return 'l'; }
    out.push(t\`a\${id(1)}b\`, new N(), N(), l());`,
  'generators: return() and throw()': `function* g(){ try { yield 1; yield 2; } finally { out.push('fin'); } }
    const a = g(); a.next(); out.push(a.return(5)); const b = g(); b.next(); try { b.throw(new Error('x')); } catch (e) { out.push(e.message); }
    function* u(){ yield 1; } const c = u(); c.next(); try { c.throw(new Error('y')); } catch (e) { out.push(e.message); }`,
  'a generator closed early by for-of runs its end slot once': `function* g(){ try { yield 1; yield 2; yield; } finally { out.push('closed'); } }
    for (const v of g()) { if (v === 1) break; } const [a] = g(); out.push(a, [...g()].length);
    function* h(){ yield 1; return 2; } const it = h(); out.push(it.next(), it.next(), it.next());`,
  'async arrows, for await, async iteration': `const f = async x => await x; async function* gen(){ yield* [1, 2]; yield await f(3); }
    const r = []; for await (const v of gen()) r.push(v); out.push(r, await f(4));`,
  'exceptions keep their object and stack line': `function thrower(){ throw new RangeError('r'); } function f(){ try { thrower(); } catch (e) { return [e instanceof RangeError, e.message, e.stack.split('\\n')[1].replace(/\\(.*:(\\d+):\\d+\\)$/, 'line $1')]; } }
    out.push(f());`,
  'arguments, this, defaults and rest': `function f(a, b = a + 1, ...rest){ return [arguments.length, a, b, rest, this === undefined || this === globalThis]; } const o = { m(){ return this === o; } };
    out.push(f(1), f(1, 2, 3, 4), o.m(), f.length);`,
  'ASI around calls on the next line': `let x = 1
  const y = x
  ;(function(){ out.push('iife') })()
  const z = [1,2]
  ;[3].forEach(v => out.push(v))
  out.push(y, z)`,
  'getters, setters and computed methods': `const k = 'dyn'; const o = { get a(){ return 1; }, set a(v){ out.push('set ' + v); }, [k](){ return 'd'; }, async *ag(){ yield 1; } };
    o.a = 2; out.push(o.a, o.dyn(), (await o.ag().next()).value);`,
  'calls as operands of in, instanceof, typeof, void, delete': `function f(){ return {a:1}; } function g(){ return Object; }
    out.push('a'in f(), f()instanceof g(), typeof f(), void f(), delete f().a);`,
  'Error.stack shows the original lines and columns': `function thrower(){ return [1].map(() => { throw new Error('x'); }); }
    function f(){ try { id(0); thrower(); } catch (e) { return e.stack.split('\\n').slice(0, 4).map((l) => l.replace(/\\(?[^ (]*?:(\\d+:\\d+)\\)?$/, '$1')); } }
    out.push(f(), typeof Error.prepareStackTrace, Error.prepareStackTrace.name, Error.prepareStackTrace.length, String(Error.prepareStackTrace).slice(0, 40));`,
  'Function.prototype.toString gives the original text': `function add(a, b){ return a + b; } const arrow = x => id(x); const two = [function(){ return id(1); }, function(){ return id(1); }];
    class K extends Object { constructor(){ super(); id(1); } m(){ return 1; } static s(v){ return v ? id(v) : 0; } get g(){ return 1; } }
    class Bare { x = id(1); }
    out.push(String(add), String(arrow), String(K), String(K.prototype.m), String(K.s), String(Bare), String(two[0]) === String(two[1]),
      String(Object.getOwnPropertyDescriptor(K.prototype, 'g').get), Function.prototype.toString.toString(), String(async function*(){ yield 1; }),
      process.getBuiltinModule('vm').runInNewContext('(' + add + ')(1, 2)'));`,
  'returns through finally blocks: overridden, cancelled, rethrown': `function a(){ try { return id(1); } finally { out.push('fa'); } }
    function b(){ try { return 1; } finally { return id(2); } } function c(){ l: try { return 1; } finally { break l; } return; }
    function d(){ try { return id(1); } finally { throw new TypeError('t'); } } const e = () => { try { return 1; } finally { out.push('fe'); } };
    async function g(){ try { return await id(7); } finally { out.push('fg'); } }
    let r; try { d(); } catch (x) { r = x.message; } out.push(a(), b(), c(), r, e(), await g());`,
  'a returned anonymous function or class keeps its empty name, in stack frames too': `function f(){ return function(){}; } const g = () => () => 1; function h(){ return class {}; }
    async function k(){ return async () => 1; } function* m(){ return function*(){}; } const named = function(){ return function inner(){}; };
    out.push(f().name, g()().name === undefined, g()().length, g()().name, h().name, (await k()).name, m().next().value.name, named().name, named.name);
    const frame = (fn) => { try { fn(); } catch (e) { return e.stack.split('\\n')[1].replace(/\\(?[^ (]*?:\\d+:\\d+\\)?$/, '').trim(); } };
    function t(c){ return c ? function(){ throw new Error('a'); } : () => { throw new Error('b'); }; } const u = () => () => { throw new Error('c'); };
    out.push(frame(t(1)), frame(t(0)), frame(u()), frame(f()) === undefined);`,
  'loops: labels, bodies without braces, every way out': `function f(n){ const r = []; a: b: for (let i = 0; i < n; i++) { for (let j = 0; j < 3; j++) { if (j === 1) continue a; if (i === 3) break b; r.push(i, j); } } return r; }
    function g(){ let k = 0; if (k) for (;;) k++; else while (k < 3) k++; do k += 2; while (k < 9)
    for (const x of [1]) for (const y in {a: 1}) k += x + y.length; for (;k < 20;) k++
    return k; }
    function h(){ for (let i = 0; ; i++) if (i === 2) return i; } function t(){ try { for (const x of [1, 2]) { throw new Error('e' + x); } } catch (e) { return e.message; } }
    const fs = []; for (let i = 0; i < 3; i++) fs.push(() => i); function* gen(){ for (let i = 0; i < 3; i++) yield i; } const it = gen(); it.next();
    async function w(){ let s = 0; for await (const v of [Promise.resolve(1), 2]) s += await v; return s; }
    out.push(f(5), g(), h(), t(), fs.map((x) => x()), it.return(7), [...gen()], await w(), String(f).length, (function(){ for (var v = 0; v < 2; v++); return v; })());`,
  'for await: every way its loop ends': `async function* gen(n){ try { for (let i = 0; i < n; i++) yield i; } finally { out.push('closed'); } }
    async function all(){ let s = 0; L: for await(const x of(gen(4))) { if (x === 1) continue L; s += x; } return s; }
    async function brk(){ for await (const x of gen(4)) if (x === 1) break; return 'b'; }
    async function ret(){ for await (const x of [1, Promise.resolve(2), 3]) { if (x === 2) return x; } }
    async function thr(){ try { for await (const x of gen(2)) throw new Error('t' + x); } catch (e) { return e.message; } }
    async function rej(){ const it = { [Symbol.asyncIterator](){ return { next: () => Promise.reject(new Error('r')) }; } };
      try { for await (const x of it) void x; } catch (e) { return e.message; } }
    async function* relay(){ for await (const x of gen(3)) yield x * 10; }
    const it = relay(); const first = await it.next(); const closed = await it.return(7);
    out.push(await all(), await brk(), await ret(), await thr(), await rej(), first, closed, [1, 2].length);`,
  'call sites: nested, chained, at a statement start, in defaults, fields and static blocks': `function id2(x){ return x; } function mk(){ return () => id2; }
  var a = id2(1)
  id2(2)
  const b = mk()()(3)
  function d(p = id2(4), q = [id2(5)].map(id2)){ return p + q[0]; }
  class F { f = id2(6); static s = id2(id2(7)); static { out.push(id2(8)); } [id2('m')](){ return id2(17); } }
  function* g(){ const v = id2(yield id2(9)); return id2(v); } async function h(){ return id2(await id2(Promise.resolve(id2(10)))); }
  const it = g(); it.next(); switch (1) { case 1: id2(15) } lbl: id2(16)
  out.push(a, b, d(), new F().f, F.s, new F().m(), it.next(11), await h(), id2(id2(id2(12))) + id2(13), [1, 2].map(x => id2(x)).map(id2), \`\${id2(14)}\`)`,
};

/** cases in which no call throws: every call site's post-call slot runs once for each pre-call one */
const CALLS_RETURN = new Set(['call sites: nested, chained, at a statement start, in defaults, fields and static blocks', 'return of a comma expression', 'arrow with no space after =>']);

/** cases in which every suspension resumes (no generator is left suspended) */
const AWAITS_RESUME = new Set(['for await: every way its loop ends']);

/** cases where a call entered and its exit is not seen: a generator left suspended, a return inside `with` (reported unslotted) */
const SUSPENDED = new Set(['getters, setters and computed methods', 'with: nothing of ours is looked up on its object']);

for (const [name, body] of Object.entries(CASES)) {
  test(`rewrite keeps behaviour: ${name}`, async () => {
    const original = await runVariant(body, 'original');
    assert.doesNotMatch(original, /threw SyntaxError/, 'the case itself must be valid');
    const off = await runVariant(body, 'off');
    assert.equal(off, original, `slots off\n--- prepared:\n${preparedText(body)}`);
    const [entries, exits, loops, loopExits, trips, calls, rets] = [count('pn_entry'), count('pn_exit'), count('pn_loop'), count('pn_loopexit'), count('pn_trip'), count('pn_call'), count('pn_ret')];
    const [awaits, resumes] = [count('pn_await'), count('pn_resume')];
    const on = await runVariant(body, 'on');
    assert.equal(on, original, `slots on\n--- prepared:\n${preparedText(body)}`);
    assert.ok(count('pn_entry') > entries, 'the counters ran');
    if (/\b(for|while)\b/.test(body)) assert.ok(count('pn_trip') > trips, 'the loops\' counters ran');
    // every call that entered left once (by return, end or exception)
    if (!SUSPENDED.has(name)) assert.equal(count('pn_exit') - exits, count('pn_entry') - entries, 'exits against entries');
    // every loop that started ended once (by its condition, break, continue to an outer label, return, throw, a generator closed in it)
    if (!SUSPENDED.has(name)) assert.equal(count('pn_loopexit') - loopExits, count('pn_loop') - loops, 'loop exits against loop entries');
    // every suspension resumed once (an await or yield that threw, a for await's implicit ones)
    if (AWAITS_RESUME.has(name)) assert.equal(count('pn_resume') - resumes, count('pn_await') - awaits, 'resumptions against suspensions');
    if (CALLS_RETURN.has(name)) {
      assert.ok(count('pn_call') > calls, 'the call sites\' counters ran');
      assert.equal(count('pn_ret') - rets, count('pn_call') - calls, 'post-call against pre-call');
    }
  });
}
