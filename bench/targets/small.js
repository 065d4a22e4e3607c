// Small benchmark target: idles on stdin; "call <n>" calls work() n times and
// prints "done <sum>". Used to time attach and probe placement.
'use strict';

// helper
function helper(x) {
  return x % 7;
}

// work
function work(i) {
  return helper(i) + 1;
}

// callMany
function callMany(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += work(i);
  return s;
}

process.stdin.setEncoding('utf8');
let buf = '';
process.stdin.on('data', (d) => {
  buf += d;
  for (let i; (i = buf.indexOf('\n')) >= 0;) {
    const line = buf.slice(0, i).trim();
    buf = buf.slice(i + 1);
    if (line === 'exit') process.exit(0);
    if (line.startsWith('call ')) process.stdout.write(`done ${callMany(Number(line.slice(5)))}\n`);
  }
});
process.stdout.write('ready\n');
