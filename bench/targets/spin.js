// Shared by the pause targets: a line protocol on stdin and a busy loop that
// measures, from inside the process, how long the main thread stops.
//   spin   start a busy loop that reads performance.now() back to back and
//          records every gap over 0.1 ms between two consecutive reads (with
//          the time it started); it yields to the event loop every 10 ms (so
//          that stdin and the tool's messages get through), and that turn
//          counts as a gap too
//   stop   stop it and print one line: "gap <JSON>" with the largest gap, the
//          recorded gaps [[epoch ms, ms], ...] and the garbage collections
//          seen meanwhile [[epoch ms, ms], ...]
//   exit
// Times are epoch milliseconds (performance.timeOrigin + performance.now()),
// so that the tool can pick the gaps that fall inside its own action.
// Other commands go to the handlers given to serve().
'use strict';
const { PerformanceObserver } = require('perf_hooks');

const origin = performance.timeOrigin;
let spinning = false;
let maxGap = 0;
let spinStart = 0;
let last = 0;
let gaps = [];
let gcs = [];

new PerformanceObserver((list) => {
  if (!spinning) return;
  for (const e of list.getEntries()) gcs.push([origin + e.startTime, e.duration]);
}).observe({ entryTypes: ['gc'] });

// spinChunk: the busy loop, 10 ms at a time
function spinChunk() {
  const end = performance.now() + 10;
  let prev = last;
  for (;;) {
    const t = performance.now();
    const g = t - prev;
    if (g > 0.1) {
      if (g > maxGap) maxGap = g;
      if (gaps.length < 100000) gaps.push([origin + prev, g]);
    }
    prev = t;
    if (t > end) break;
  }
  last = prev;
  if (spinning) setImmediate(spinChunk);
}

// serve: read commands from stdin
function serve(handlers) {
  process.stdin.setEncoding('utf8');
  let buf = '';
  process.stdin.on('data', (d) => {
    buf += d;
    for (let i; (i = buf.indexOf('\n')) >= 0;) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      const [cmd, ...args] = line.split(' ');
      if (cmd === 'exit') process.exit(0);
      else if (cmd === 'spin' && !spinning) {
        spinning = true;
        maxGap = 0;
        gaps = [];
        gcs = [];
        spinStart = last = performance.now();
        setImmediate(spinChunk);
        process.stdout.write('spinning\n');
      } else if (cmd === 'stop' && spinning) {
        spinning = false;
        const res = { max: maxGap, spinMs: performance.now() - spinStart, gaps, gcs };
        process.stdout.write(`gap ${JSON.stringify(res)}\n`);
      } else if (handlers[cmd]) process.stdout.write(`${cmd} ${handlers[cmd](...args)}\n`);
    }
  });
}

module.exports = { serve };
