// Benchmark target for the cost of triggering instrumentation (MDL paper, Figure 6).
// Each row is its own tiny function with its own driver loop, so that call
// sites and type feedback never mix between rows. Commands on stdin, one per line:
//   run <row> <n>   call the row's function n times, print "ns <row> <ns per call>"
//   exit
// Timing is taken inside this process with performance.now() around the loop.
//
// Layout: a distinct comment line before every function. Without it, the
// identical blank and "}" lines let V8's line diff pair lines of different
// functions, and the LiveEdit planner (correctly) leaves most of these small
// functions without slots on the attach path.
'use strict';
const path = require('path');

let sink = 0;
const hand = new Float64Array(4);
const hand32 = new Uint32Array(4);

// fEmpty: the uninstrumented call (and, under paranode, prepared with nothing on)
function fEmpty(e) {
  return e; // fEmpty
}

// fNop: gets an empty snippet at entry (the switch is on, the handler does nothing)
function fNop(z) {
  return z; // fNop
}

// fCount: gets an entry counter
function fCount(c) {
  return c; // fCount
}

// fPred: gets an entry counter under a predicate on its argument
function fPred(p) {
  return p; // fPred
}

// fTimer: gets a wall-clock timer from entry to exit
function fTimer(t) {
  return t; // fTimer
}

// fCpuTimer: gets a process-time timer from entry to exit
function fCpuTimer(u) {
  return u; // fCpuTimer
}

// fHand: a counter written by hand into the source (reference, not paranode)
function fHand(h) {
  hand[0]++;
  return h; // fHand
}

// fHand32: the same with a 32-bit integer cell, the kind paranode's `c++` uses (reference, not paranode)
function fHand32(k) {
  hand32[0]++;
  return k; // fHand32
}

// driver loops, one per row

// loopEmpty
function loopEmpty(n) {
  let s = 0; for (let i = 0; i < n; i++) s += fEmpty(i); return s;
}

// loopNop
function loopNop(n) {
  let s = 0; for (let i = 0; i < n; i++) s += fNop(i); return s;
}

// loopCount
function loopCount(n) {
  let s = 0; for (let i = 0; i < n; i++) s += fCount(i); return s;
}

// loopPred
function loopPred(n) {
  let s = 0; for (let i = 0; i < n; i++) s += fPred(i); return s;
}

// loopTimer
function loopTimer(n) {
  let s = 0; for (let i = 0; i < n; i++) s += fTimer(i); return s;
}

// loopCpuTimer
function loopCpuTimer(n) {
  let s = 0; for (let i = 0; i < n; i++) s += fCpuTimer(i); return s;
}

// loopHand
function loopHand(n) {
  let s = 0; for (let i = 0; i < n; i++) s += fHand(i); return s;
}

// loopHand32
function loopHand32(n) {
  let s = 0; for (let i = 0; i < n; i++) s += fHand32(i); return s;
}

// loopNow: clock read alone
function loopNow(n) {
  let s = 0; for (let i = 0; i < n; i++) s += performance.now(); return s;
}

// loopCpuUsage: process-time read alone
function loopCpuUsage(n) {
  let s = 0; for (let i = 0; i < n; i++) s += process.cpuUsage().user; return s;
}

// loopBuiltin: a built-in function called through its module's exports (wrapped by paranode)
function loopBuiltin(n) {
  let s = 0; for (let i = 0; i < n; i++) s += path.isAbsolute('/x') ? 1 : 0; return s;
}

// loopThreadCpu: the per-thread CPU clock paranode's process timers read (its native addon), alone
let threadCpuMs = () => 0;
try { threadCpuMs = require(path.join(__dirname, '..', '..', 'build', 'Release', 'thread_cpu.node')).threadCpuMs; } catch { /* not built */ }
function loopThreadCpu(n) {
  let s = 0; for (let i = 0; i < n; i++) s += threadCpuMs(); return s;
}

const rows = {
  empty: loopEmpty, nop: loopNop, count: loopCount, pred: loopPred, timer: loopTimer, cputimer: loopCpuTimer,
  hand: loopHand, hand32: loopHand32, now: loopNow, cpuusage: loopCpuUsage, threadcpu: loopThreadCpu, builtin: loopBuiltin,
};

// run: time one batch
function run(row, n) {
  const loop = rows[row];
  const t0 = performance.now();
  sink += loop(n);
  const t1 = performance.now();
  return ((t1 - t0) * 1e6) / n;
}

process.stdin.setEncoding('utf8');
let buf = '';
process.stdin.on('data', (d) => {
  buf += d;
  for (let i; (i = buf.indexOf('\n')) >= 0;) {
    const line = buf.slice(0, i).trim();
    buf = buf.slice(i + 1);
    const [cmd, row, n] = line.split(' ');
    if (cmd === 'exit') process.exit(0);
    if (cmd === 'run') process.stdout.write(`ns ${row} ${run(row, Number(n))} ${sink === 0 ? 0 : 1}\n`);
  }
});
process.stdout.write('ready\n');
