// What a function's exit wrapper costs in each of V8's tiers, without paranode:
// the shape a function prepared at load has today (a try/finally whose returns
// note their slot and value in two locals, the guard read in the finally), the
// same without the locals, and a try/catch that rethrows, against the bare
// function; each called 3·10⁷ times from a loop, 5 rounds, the last one timed.
// The guard is a global defined as the runtime defines it (a constant cell, 0).
//   node [--no-turbofan] [--no-maglev] [--no-sparkplug] exit-shapes.js <shape>
// shapes: plain, tfEmpty, tfGuard, tfFull, tcRethrow; tfBreak and tfFall (the return moved
// after the finally: left by a labeled break, or by falling through); and with one call inside
// (of a small helper): callPlain, callFinally (as prepared), callCatch; with two calls inside:
// twoPlain, twoPrepared (the guard, a global, read at entry, at each call site and in the finally,
// as prepared), twoLocalGuard (the same with the guard read once into a local at entry)
'use strict';
Object.defineProperty(globalThis, '$G', { value: 0, writable: true, configurable: true });
function plain(o) { return o.a + o.b; }
function tfEmpty(o) { try { return o.a + o.b; } finally { } }
function tfGuard(o) { try { return o.a + o.b; } finally { if ($G) $G(); } }
function tfFull(o) { var K = 1, R; try { return R = (0, o.a + o.b), K = 2, R; } finally { if ($G) $G(K, R); } }
function tfBreak(o) { var K = 1, R; L: try { R = (0, o.a + o.b); K = 2; break L; } finally { if ($G) $G(K, R); } return R; }
function tfFall(o) { var K = 1, R; try { R = (0, o.a + o.b); K = 2; } finally { if ($G) $G(K, R); } return R; }
function tcRethrow(o) { try { return o.a + o.b; } catch (e) { if ($G) $G(); throw e; } }
function h(o) { return o.a * 2; }
function callPlain(o) { return h(o) + o.b; }
function callFinally(o) { var K = 1, R; try { return R = (0, h(o) + o.b), K = 2, R; } finally { if ($G) $G(K, R); } }
function callCatch(o) { try { return h(o) + o.b; } catch (e) { if ($G) $G(); throw e; } }
function twoPlain(o) { return h(o) + h(o) + o.b; }
function twoPrepared(o) { if ($G) $G[0](o); var V, c0, K = 6, R; try { return R = (0, (c0 = $G && $G[6](), V = h(o), c0 && c0(V), V) + (c0 = $G && $G[8](), V = h(o), c0 && c0(V), V) + o.b), K = 2, R; } finally { if ($G) $G(K, R); } }
function twoLocalGuard(o) { var G = $G; if (G) G[0](o); var V, c0, K = 6, R; try { return R = (0, (c0 = G && G[6](), V = h(o), c0 && c0(V), V) + (c0 = G && G[8](), V = h(o), c0 && c0(V), V) + o.b), K = 2, R; } finally { if (G) G(K, R); } }
function loop(f, n) { let s = 0; const o = { a: 1, b: 2 }; for (let i = 0; i < n; i++) { o.a = i & 7; s += f(o); } return s; }
const shapes = { plain, tfEmpty, tfGuard, tfFull, tfBreak, tfFall, tcRethrow, callPlain, callFinally, callCatch, twoPlain, twoPrepared, twoLocalGuard };
const which = process.argv[2];
if (!shapes[which]) throw new Error(`usage: node exit-shapes.js ${Object.keys(shapes).join('|')}`);
for (let r = 0; r < 5; r++) {
  const t = performance.now();
  loop(shapes[which], 3e7);
  if (r === 4) console.log(`${process.version} ${which} ${((performance.now() - t) * 1e6 / 3e7).toFixed(2)} ns/call`);
}
