// The program `paranode calibrate` measures instrumentation costs in. Each
// command runs one loop and prints its time; the tool places a probe, runs the
// loop, removes the probe, and compares with the same loop run bare.
//   run f|g|w N   N calls of f (optimized, inlined into its loop), of g (never
//                 optimized: the interpreter or baseline code) or of
//                 path.extname through the exports object (wrapped when probed)
//                 -> "ns <total ns>"
//   run p N       N parses of a 20 KB arithmetic text by a small recursive-descent
//                 parser whose scanner (`next`) V8 inlines into the parse functions:
//                 the tool switches `next`'s slot and times the runs after it (V8
//                 throws away the optimized code that depended on the guard)
'use strict';
const path = require('path');

function f(a, b) { return a + b.length; }
function g(a, b) { return a + b.length; }
// V8 intrinsics need --allow-natives-syntax; kept in a string so that parsers of this file do not see them
try { new Function('g', '%NeverOptimizeFunction(g)')(g); } catch { /* not started with the flag */ }

const FILE = path.join(__dirname, 'target.js');
function loopF(n) { let s = 0; for (let i = 0; i < n; i++) s += f(i, FILE); return s; }
function loopG(n) { let s = 0; for (let i = 0; i < n; i++) s += g(i, FILE); return s; }
function loopW(n) { let s = 0; for (let i = 0; i < n; i++) s += path.extname(FILE).length; return s; }

// the parser: numbers, names, + - * / and parentheses
let text = '', pos = 0, tok = '';
function next() {
  while (text.charCodeAt(pos) === 32) pos++;
  const c = text.charCodeAt(pos);
  if (c >= 48 && c <= 57) { const at = pos; while (text.charCodeAt(pos) >= 48 && text.charCodeAt(pos) <= 57) pos++; tok = text.slice(at, pos); }
  else if (c >= 97 && c <= 122) { const at = pos; while (text.charCodeAt(pos) >= 97 && text.charCodeAt(pos) <= 122) pos++; tok = text.slice(at, pos); }
  else tok = pos < text.length ? text[pos++] : '';
  return tok;
}
function factor() {
  if (tok === '(') { next(); const v = expr(); next(); return v; }
  const v = tok.charCodeAt(0) >= 97 ? tok.length : Number(tok);
  next();
  return v;
}
function term() { let v = factor(); while (tok === '*' || tok === '/') { const op = tok; next(); const r = factor(); v = op === '*' ? (v * r) % 9973 : v - r; } return v; }
function expr() { let v = term(); while (tok === '+' || tok === '-') { const op = tok; next(); const r = term(); v = op === '+' ? v + r : v - r; } return v; }
const TEXT = Array.from({ length: 800 }, (_, i) => `(${i} + abc * ${i % 7}) / (x - ${i % 13})`).join(' + ');
function loopP(n) { let s = 0; for (let i = 0; i < n; i++) { text = TEXT; pos = 0; next(); s += expr(); } return s; }
const loops = { f: loopF, g: loopG, w: loopW, p: loopP };

let sink = 0;
let rest = '';
process.stdin.setEncoding('utf8').on('data', (d) => {
  rest += d;
  for (let i; (i = rest.indexOf('\n')) >= 0;) {
    const [cmd, which, n] = rest.slice(0, i).split(' ');
    rest = rest.slice(i + 1);
    if (cmd !== 'run') continue;
    const t0 = process.hrtime.bigint();
    sink += loops[which](Number(n));
    console.log('ns', Number(process.hrtime.bigint() - t0), sink % 2);
  }
});
console.log('ready');
