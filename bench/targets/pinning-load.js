// For bench/pinning.ts: two loops taking turns in the event loop, as in
// test/fixtures/pinning.js: hot() is an arithmetic loop (most of the thread's
// own code), cold() waits for a child process synchronously. "count" prints
// "count <hot loops> <cold loops> <ms>" (loops done since the start, and the
// time); "exit" ends it.
'use strict';
const cp = require('child_process');
const fs = require('fs');
const readline = require('readline');

function hot(n) {
  let s = fs.statSync(__filename).size;
  for (let i = 0; i < n; i++) s = (s + i * i) % 1000003;
  return s;
}

function cold() {
  return cp.execFileSync('true').length;
}

let sink = 0, hots = 0, colds = 0, running = true;
function hotLoop() {
  sink = (sink + hot(4e5)) % 1000003;
  hots++;
  if (running) setImmediate(hotLoop);
}
function coldLoop() {
  sink = (sink + cold()) % 1000003;
  colds++;
  if (running) setImmediate(coldLoop);
}
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'count') console.log('count', hots, colds, performance.now().toFixed(1));
  if (line === 'exit') { running = false; process.stdin.destroy(); }
});
console.log('ready');
hotLoop();
coldLoop();
