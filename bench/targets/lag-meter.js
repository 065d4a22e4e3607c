// A program that loads the TypeScript compiler (9 MB, 21,688 functions: large
// prepared scripts) and then only measures itself: a 2 ms timer records the
// largest lateness of its event loop. stdin: "reset" zeroes it, "worst" prints it;
// "heap" (under --expose-gc) collects all garbage and prints the heap in use, MB.
'use strict';
const ts = require('typescript');
let worst = 0, last = performance.now();
setInterval(() => { const n = performance.now(); worst = Math.max(worst, n - last - 2); last = n; }, 2);
process.stdin.setEncoding('utf8').on('data', (d) => {
  for (const line of d.split('\n')) {
    if (line === 'reset') { worst = 0; console.log('reset'); }
    else if (line === 'worst') console.log(`worst ${worst.toFixed(1)}`);
    else if (line === 'heap') { global.gc(); console.log(`heap ${(process.memoryUsage().heapUsed / 1048576).toFixed(1)}`); }
  }
});
console.log('ready', typeof ts.createSourceFile);
