// Counter-cost benchmark target for the dormant agent (bench/dormant.ts):
// "run K M" calls f M times, K times over, and prints "ns <median ns per call>
// <calls>"; meant to be started with --import dist/src/agent/dormant.js and
// attached to between runs.
'use strict';
function f(x) { return (x + 1) | 0; }
function loop(m) {
  let s = 0;
  for (let i = 0; i < m; i++) s = f(s);
  return s;
}
process.stdin.setEncoding('utf8');
let buf = '';
process.stdin.on('data', (d) => {
  buf += d;
  for (let nl; (nl = buf.indexOf('\n')) >= 0;) {
    const [cmd, k, m] = buf.slice(0, nl).split(' ');
    buf = buf.slice(nl + 1);
    if (cmd !== 'run') continue;
    const times = [];
    let sum = 0;
    for (let i = 0; i < Number(k); i++) {
      const t = process.hrtime.bigint();
      sum += loop(Number(m));
      times.push(Number(process.hrtime.bigint() - t) / Number(m));
    }
    times.sort((a, b) => a - b);
    console.log(`ns ${times[times.length >> 1]} ${Number(k) * Number(m)} ${sum}`);
  }
});
console.log('ready');
