// Formatter: prettier 3 (CommonJS entry that imports its ES-module core and
// minified ES-module plugins) formats fixed JS, TSX, CSS, Markdown, YAML and
// JSON inputs at two styles; prints each result, and a summary on stderr.
'use strict';
const fs = require('fs');
const path = require('path');
const prettier = require('prettier');

const dir = path.join(__dirname, 'inputs');
const inputs = [
  ['messy.js', { parser: 'babel' }],
  ['messy.tsx', { parser: 'typescript' }],
  ['messy.css', { parser: 'css' }],
  ['notes.md', { parser: 'markdown', proseWrap: 'always' }],
];
const extra = [
  ['doc.yaml', 'yaml', 'a:   1\nlist: [ 1,2,  3 ]\nmap: {x: 1,   y: "two"}\n# comment\nnested:\n    - a: b\n      c:    d\n'],
  ['data.json', 'json', '{"b":[1,2,{"c":null}],"a":   true,"long":["aaaaaaaaaaaaaaaa","bbbbbbbbbbbbbbbbbbbbbb","cccccccccccccccccccccc","dddddddd"]}'],
];

async function main() {
  let chars = 0;
  for (const style of [{}, { semi: false, singleQuote: true, printWidth: 60, tabWidth: 4, trailingComma: 'none', bracketSpacing: false }]) {
    for (const [file, opts] of inputs) {
      const src = fs.readFileSync(path.join(dir, file), 'utf8');
      const out = await prettier.format(src, { ...opts, ...style, filepath: file });
      chars += out.length;
      process.stdout.write(`==== ${file} ${JSON.stringify(style)}\n${out}`);
      // formatting is idempotent
      const again = await prettier.format(out, { ...opts, ...style, filepath: file });
      process.stdout.write(`idempotent: ${again === out}\n`);
    }
    for (const [file, parser, src] of extra) {
      const out = await prettier.format(src, { parser, ...style });
      chars += out.length;
      process.stdout.write(`==== ${file} ${JSON.stringify(style)}\n${out}`);
    }
  }
  // a syntax error reported by the parser plugin (message and code frame, no paths)
  try {
    await prettier.format('const a = {;\nlet = ;', { parser: 'babel' });
  } catch (e) {
    process.stdout.write(`syntax error: ${e.constructor.name}: ${e.message}\n`);
  }
  const info = await prettier.getSupportInfo();
  process.stdout.write(`languages: ${info.languages.map((l) => l.name).join(', ')}\n`);
  process.stderr.write(`prettier ${prettier.version}: ${chars} characters formatted\n`);
}
main().catch((e) => { process.stderr.write(`failed: ${e.stack}\n`); process.exitCode = 1; });
