// Call-path benchmark target (bench/call-paths.ts): f0 calls f1 ... calls f7,
// which adds. "run K M" calls f0 M times, K times over, and prints
// "ns <median ns per function call> <function calls>", a function call being
// any of the eight.
'use strict';
function f7(x) { return (x + 1) | 0; }
function f6(x) { return f7(x); }
function f5(x) { return f6(x); }
function f4(x) { return f5(x); }
function f3(x) { return f4(x); }
function f2(x) { return f3(x); }
function f1(x) { return f2(x); }
function f0(x) { return f1(x); }
function loop(m) {
  let s = 0;
  for (let i = 0; i < m; i++) s = f0(s);
  return s;
}
process.stdin.setEncoding('utf8');
let buf = '';
process.stdin.on('data', (d) => {
  buf += d;
  for (let nl; (nl = buf.indexOf('\n')) >= 0;) {
    const [cmd, k, m] = buf.slice(0, nl).split(' ');
    buf = buf.slice(nl + 1);
    if (cmd === 'exit') process.exit(0);
    if (cmd !== 'run') continue;
    const times = [];
    let sum = 0;
    for (let i = 0; i < Number(k); i++) {
      const t = process.hrtime.bigint();
      sum += loop(Number(m));
      times.push(Number(process.hrtime.bigint() - t) / (8 * Number(m)));
    }
    times.sort((a, b) => a - b);
    console.log(`ns ${times[times.length >> 1]} ${8 * Number(k) * Number(m)} ${sum}`);
  }
});
console.log('ready');
