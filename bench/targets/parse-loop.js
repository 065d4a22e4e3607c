// The UI benchmark's target: esprima parses this file every few milliseconds,
// so that many of its functions have calls to show; "exit" on stdin ends it.
'use strict';
const fs = require('fs');
const esprima = require('esprima');

const input = fs.readFileSync(__filename, 'utf8');
const timer = setInterval(() => { esprima.parseScript(input, { loc: true }); }, 5);
process.stdin.setEncoding('utf8').on('data', (d) => {
  if (d.includes('exit')) { clearInterval(timer); process.stdin.destroy(); }
});
process.stdout.write('ready\n');
