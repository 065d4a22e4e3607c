// Anatomy of a switched-on slot: which part of paranode's generated code costs
// what, once a function has a handler (section 1 of docs/BENCHMARKS.md).
// Self-contained: the function bodies below are the shapes paranode's load-time
// preparation emits for `function f(e) { return e; }` (prepareForLoad in
// src/instrument/transform.ts), copied by hand and then taken apart; the
// handler is what the runtime compiles for `c++` (src/agent/runtime.ts).
// No tool, no agent.
//   node bench/targets/slot-anatomy.js
'use strict';

function noop() { /* a handler slot with nothing in it */ }
// the shared pass-through helper of exit slots as it was at cf550dd, and as the runtime installs it now
const P = function (G, s, v) { if (G) G[s](v); return v; };
const P2 = function (G, s, v) { if (G) { const h = G[s]; if (h !== noop) h(v); } return v; };
Object.defineProperty(globalThis, '$pnP', { value: P, writable: false, configurable: false, enumerable: false });
Object.defineProperty(globalThis, '$pnP2', { value: P2, writable: false, configurable: false, enumerable: false });
// in a real program every function's exit goes through the helper: make its call site megamorphic
for (const helper of [P, P2]) {
  for (let k = 0; k < 10; k++) {
    const a = new Array(8).fill(0).map(() => function () { /* other handlers */ });
    for (let i = 0; i < 1000; i++) helper(a, k % 8, i);
  }
}

const VARIANTS = [
  ['base', 'uninstrumented `return e`'],
  ['full', 'as prepared, switched on: entry handler `c++`, exit through the shared `$pnP`, end slot, try/catch'],
  ['notry', 'the same without the try/catch wrapper'],
  ['noexit', 'the same without the exit slot (`return e` instead of `return $pnP(G,2,e)`)'],
  ['entryonly', 'entry slot only'],
  ['ownhelper', 'as prepared, but the exit through a helper of its own (monomorphic)'],
  ['now', 'as prepared now, switched on: the helper skips empty handlers, the guard is a constant cell holding a frozen array'],
  ['nownop', 'the same with an empty snippet (`if (0) z++`)'],
  ['hand', 'reference: `C[0]++` written into the function by hand'],
];
for (const [n] of VARIANTS) Object.defineProperty(globalThis, '$g_' + n, { value: 0, writable: true, configurable: true, enumerable: false });

const src = `
function f_base(e) {
  return e;
}
function f_full(e) {if($g_full)$g_full[0](e);try{
  return $pnP($g_full,2,e);;if($g_full)$g_full[4]();}catch($pnE){if($g_full)$g_full[6]();throw $pnE};
}
function f_notry(e) {if($g_notry)$g_notry[0](e);
  return $pnP($g_notry,2,e);;if($g_notry)$g_notry[4]();
}
function f_noexit(e) {if($g_noexit)$g_noexit[0](e);try{
  return e;;if($g_noexit)$g_noexit[4]();}catch($pnE){if($g_noexit)$g_noexit[6]();throw $pnE};
}
function f_entryonly(e) {if($g_entryonly)$g_entryonly[0](e);
  return e;
}
function ownP(G, s, v) { if (G) G[s](v); return v; }
function f_ownhelper(e) {if($g_ownhelper)$g_ownhelper[0](e);try{
  return ownP($g_ownhelper,2,e);;if($g_ownhelper)$g_ownhelper[4]();}catch($pnE){if($g_ownhelper)$g_ownhelper[6]();throw $pnE};
}
function f_now(e) {if($g_now)$g_now[0](e);try{
  return $pnP2($g_now,2,e);;if($g_now)$g_now[4]();}catch($pnE){if($g_now)$g_now[6]();throw $pnE};
}
function f_nownop(e) {if($g_nownop)$g_nownop[0](e);try{
  return $pnP2($g_nownop,2,e);;if($g_nownop)$g_nownop[4]();}catch($pnE){if($g_nownop)$g_nownop[6]();throw $pnE};
}
function f_hand(e) {
  C[1]++;
  return e;
}
return { ${VARIANTS.map(([n]) => `l_${n}: function (k) { let s = 0; for (let i = 0; i < k; i++) s += f_${n}(i); return s; }`).join(',\n')} };`;

const C = new Float64Array(4);
const loops = new Function('C', src)(C);
// the handler the runtime compiles for the snippet `c++`
const counter = new Function('C', 'T', 'now', 'cpu', 'return function($0,$1,$2,$3,$4,$5,$6,$7){try{C[0]++}catch(e){}}')(C);
const empty = new Function('C', 'T', 'now', 'cpu', 'return function($0,$1,$2,$3,$4,$5,$6,$7){try{if(0)C[1]++}catch(e){}}')(C);
// warm every variant up with its guard off, as a prepared program runs before a probe comes
for (const [n] of VARIANTS) loops['l_' + n](1e6);
for (const [n] of VARIANTS) {
  if (n === 'base' || n === 'hand') continue;
  const handlers = new Array(8).fill(noop);
  handlers[0] = n === 'nownop' ? empty : counter;
  if (n === 'now' || n === 'nownop') {
    // what the runtime's setConstGlobal and rebuild do: a fresh cell, a frozen array
    delete globalThis['$g_' + n];
    Object.defineProperty(globalThis, '$g_' + n, { value: Object.freeze(handlers), writable: true, configurable: true, enumerable: false });
  } else globalThis['$g_' + n] = handlers;
}

const N = 2e7;
const ROUNDS = 11;
const times = Object.fromEntries(VARIANTS.map(([n]) => [n, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [n] of VARIANTS) {
    const t0 = performance.now();
    loops['l_' + n](N);
    times[n].push(((performance.now() - t0) * 1e6) / N);
  }
}
const median = (xs) => { const s = xs.slice(2).sort((a, b) => a - b); return s[s.length >> 1]; };
const base = median(times.base);
process.stdout.write(`| variant | ns per call | added to uninstrumented |\n| --- | --- | --- |\n`);
for (const [n, what] of VARIANTS) {
  const m = median(times[n]);
  process.stdout.write(`| ${what} | ${m.toFixed(2)} | ${n === 'base' ? '' : (m - base).toFixed(2)} |\n`);
}
process.stdout.write(`\n${N / 1e6}M calls per round, ${ROUNDS} rounds, median of the last ${ROUNDS - 2}; node ${process.version}.\n`);
