// The program `paranode calibrate` measures instrumentation costs in. Each
// command runs one loop and prints its time; the tool places a probe, runs the
// loop, removes the probe, and compares with the same loop run bare.
//   run f|g|w N   N calls of f (optimized, inlined into its loop), of g (never
//                 optimized: the interpreter or baseline code) or of
//                 path.extname through the exports object (wrapped when probed)
//                 -> "ns <total ns>"
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
const loops = { f: loopF, g: loopG, w: loopW };

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
