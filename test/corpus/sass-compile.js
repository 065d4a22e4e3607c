// dart2js output: the pure-JavaScript `sass` package (Dart Sass compiled to a
// 5 MB JavaScript file) compiles fixed SCSS with modules, mixins, functions,
// @extend, @debug and @warn (through a logger), expanded and compressed;
// then reports a compile error.
'use strict';
const path = require('path');
const sass = require('sass');

const file = path.join(__dirname, 'inputs', 'style.scss');
const logger = {
  warn: (message, { span, deprecation }) => process.stderr.write(`WARNING${deprecation ? ' (deprecation)' : ''}: ${message}${span ? ` at line ${span.start.line + 1}` : ''}\n`),
  debug: (message, { span }) => process.stderr.write(`DEBUG line ${span.start.line + 1}: ${message}\n`),
};
for (const style of ['expanded', 'compressed']) {
  const r = sass.compile(file, { style, logger, sourceMap: true });
  process.stdout.write(`==== ${style} (${r.css.length} chars, ${r.sourceMap.mappings.length} map chars)\n${r.css}\n`);
}
const str = sass.compileString('$n: 3; @for $i from 1 through $n { .x-#{$i} { order: $i * 2; } } a { b { c: d } }', { style: 'expanded' });
process.stdout.write(`==== string\n${str.css}\n`);
try {
  sass.compileString('.a { @include respond(huge) { x: y } }\n@mixin respond($n) { @error "unknown breakpoint #{$n}"; }', { logger: sass.Logger.silent });
} catch (e) {
  process.stdout.write(`==== error\n${e.sassMessage}\n${e.span.start.line}:${e.span.start.column}\n${e.sassStack}\n`);
}
process.stderr.write(`sass ${sass.info.split('\t')[1]}\n`);
