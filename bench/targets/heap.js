// Pause benchmark target: grows its heap to about <MB> megabytes of live small
// objects and loads three small modules the tool will instrument; the busy
// loop of spin.js measures the stops of the main thread from the inside.
//   node heap.js <MB>      commands: warm (call the modules' functions), spin, stop, exit
'use strict';
const { serve } = require('./spin');

const MB = Number(process.argv[2] || 10);
const keep = [];
// grow: arrays of 10,000 small objects each (about 0.5 MB per array)
for (let k = 0; ; k++) {
  if (k % 8 === 0 && process.memoryUsage().heapUsed >= MB * 1e6) break;
  const a = new Array(10000);
  for (let i = 0; i < a.length; i++) a[i] = { i, k, next: null };
  keep.push(a);
}
const victims = [require('./victim1'), require('./victim2'), require('./victim3')];

serve({
  warm() {
    let s = 0;
    for (let r = 0; r < 2000; r++) for (const [k, v] of victims.entries()) s += v[`handle${k + 1}`](`${r},2,3,x,${k}`);
    return s;
  },
});
process.stdout.write(`ready ${process.memoryUsage().heapUsed} ${keep.length}\n`);
