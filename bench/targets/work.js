// Workload benchmark target: the work of test/fixtures/esprima-run.js or
// marked-run.js, repeated and timed inside the program (module loading and,
// under paranode, load-time preparation happen before the timed part).
//   node work.js esprima|marked|typescript <reps> [hold|wait]
// prints "work <median ms per rep> <total ms> <output length (tokens or characters)>"; with "hold" it then
// waits for "exit" on stdin (so that the tool can look at it) instead of exiting;
// with "wait" it prints "loaded" and waits for "go" on stdin before the work
// (so that the tool can attach first); with "warm" it warms up, prints "warm" and waits
// for "go" before the timed part ("rewarm" warms up again first and prints
// "warm <ms of each repetition>"). WORK_TRACE=1 prints every repetition's ms on stderr,
// WORK_STAMPS=1 a line "rep <ms> <epoch ms at its end>" per repetition.
'use strict';
const fs = require('fs');
const path = require('path');

const which = process.argv[2];
const reps = Number(process.argv[3] || 10);
let job;
// marked needs about 20 repetitions before its times settle, esprima a few
const warmups = which === 'marked' ? 30 : which === 'typescript' ? 10 : 5;
if (which === 'esprima') {
  const esprima = require('esprima');
  const src = fs.readFileSync(require.resolve('esprima'), 'utf8');
  job = () => esprima.parseScript(src, { range: true, loc: true, tokens: true, comment: true }).tokens;
} else if (which === 'marked') {
  const { marked } = require('marked');
  const md = fs.readFileSync(path.join(path.dirname(require.resolve('marked/package.json')), 'README.md'), 'utf8');
  job = () => marked.parse(md.repeat(20));
} else if (which === 'typescript') {
  // the compiler's scanner, parser and printer over its own lib.es5.d.ts (218 KB)
  const ts = require('typescript');
  const src = fs.readFileSync(path.join(path.dirname(require.resolve('typescript')), 'lib.es5.d.ts'), 'utf8');
  const printer = ts.createPrinter();
  job = () => printer.printFile(ts.createSourceFile('lib.es5.d.ts', src, ts.ScriptTarget.Latest, true));
} else {
  throw new Error('usage: node work.js esprima|marked|typescript <reps>');
}

function warm() {
  for (let i = 0; i < warmups; i++) job(); // untimed: until the JIT has settled
}

function main(warmed = false) {
  let len = 0;
  if (!warmed) warm();
  const times = [];
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    len = job().length;
    times.push(performance.now() - t);
    if (process.env.WORK_TRACE) process.stderr.write(`${(performance.now() - t).toFixed(0)} `);
    if (process.env.WORK_STAMPS) process.stderr.write(`rep ${times[i]} ${Date.now()}\n`);
  }
  const total = performance.now() - t0;
  times.sort((a, b) => a - b);
  process.stdout.write(`work ${times[times.length >> 1]} ${total} ${len}\n`);
}

if (process.argv[4] === 'hold') {
  main();
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (d) => { if (d.includes('exit')) process.exit(0); });
} else if (process.argv[4] === 'wait') {
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (d) => { if (d.includes('go')) { main(); process.exit(0); } });
  process.stdout.write('loaded\n');
} else if (process.argv[4] === 'warm') {
  // warm up, say "warm" and wait for "go": the tool starts measuring in between
  warm();
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (d) => {
    if (d.includes('rewarm')) {
      // the warm-up again, each repetition's ms printed: what a change of the program's
      // code (slots switched on) costs until V8 has compiled it again
      const ms = [];
      for (let i = 0; i < warmups; i++) { const t = performance.now(); job(); ms.push(performance.now() - t); }
      process.stdout.write(`warm ${ms.map((x) => x.toFixed(3)).join(' ')}\n`);
    } else if (d.includes('go')) { main(true); process.exit(0); }
  });
  process.stdout.write('warm\n');
} else {
  main();
}
