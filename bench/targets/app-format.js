// A formatter as a developer runs it: prettier formats a large real JavaScript
// file (esprima's 283 KB source) again and again until the given seconds have
// passed. Prints the rounds.
'use strict';
const fs = require('fs');
const prettier = require('prettier');

const seconds = Number(process.argv[2] ?? 20);
const src = fs.readFileSync(require.resolve('esprima'), 'utf8');
(async () => {
  const end = Date.now() + seconds * 1000;
  let rounds = 0, chars = 0;
  do {
    chars += (await prettier.format(src, { parser: 'babel', filepath: 'esprima.js' })).length;
    rounds++;
  } while (Date.now() < end);
  console.log(`format: ${rounds} rounds, ${chars} characters`);
})();
