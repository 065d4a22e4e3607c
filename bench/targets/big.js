// LiveEdit benchmark target: loads a large third-party script and waits; the
// busy loop of spin.js measures the stops of the main thread from the inside.
//   node big.js esprima|typescript    commands: work (use the library), spin, stop, exit
'use strict';
const fs = require('fs');
const { serve } = require('./spin');

const which = process.argv[2];
const lib = require(which);
const input = fs.readFileSync(__filename, 'utf8');

serve({
  work() {
    if (which === 'esprima') return lib.tokenize(input).length;
    return lib.createSourceFile('x.ts', input, lib.ScriptTarget.Latest).statements.length;
  },
});
process.stdout.write(`ready ${process.memoryUsage().heapUsed}\n`);
