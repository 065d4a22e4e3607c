// Error stacks: js-yaml parses and dumps a fixed document, then rejects bad
// inputs; every error thrown inside the library (and from callbacks it calls)
// is printed with its full stack, paths relative to the working directory.
// The last error is left uncaught: Node prints it on stderr and exits with 1.
'use strict';
const path = require('path');
const yaml = require('js-yaml');

const cwd = process.cwd() + path.sep;
const rel = (s) => String(s).split(cwd).join('');
const show = (label, e) => {
  process.stdout.write(`---- ${label}: ${e.name}${e.code ? ` ${e.code}` : ''}\n${rel(e.stack)}\n`);
  if (e.mark) process.stdout.write(`mark: line ${e.mark.line} column ${e.mark.column} position ${e.mark.position}\n`);
  if (e.cause) process.stdout.write(`cause: ${rel(e.cause.stack)}\n`);
};

const doc = {
  name: 'corpus', version: 3, enabled: true, ratio: 0.125, nothing: null, when: new Date(Date.UTC(2024, 1, 29, 12, 30)),
  tags: ['a', 'b: c', '- d', 'multi\nline', '  padded  ', 'yes', 'no', '0x1F', '1e3', '#hash'],
  nested: Array.from({ length: 40 }, (_, i) => ({ id: i, label: `item ${i}`, parts: Array.from({ length: i % 5 }, (_, j) => j * i), flags: { odd: i % 2 === 1, big: i > 30 } })),
  text: 'A longer text that goes on for a while so that the dumper folds it at the line width, '.repeat(4),
};
const dumped = yaml.dump(doc, { lineWidth: 60, sortKeys: true });
process.stdout.write(`==== dump\n${dumped}`);
process.stdout.write(`==== flow\n${yaml.dump(doc, { flowLevel: 2, noRefs: true, quotingType: '"' })}`);
process.stdout.write(`round trip: ${JSON.stringify(yaml.load(dumped)) === JSON.stringify(doc)}\n`);
const multi = yaml.loadAll('--- a\n--- [1, 2]\n--- {x: &a 1, y: *a}\n---\nk: !!str 123\n');
process.stdout.write(`loadAll: ${JSON.stringify(multi)}\n`);

const bad = [
  ['unclosed flow', 'a: [1, 2\nb: 3\n'],
  ['bad indentation', 'a:\n  b: 1\n c: 2\n'],
  ['duplicate key', 'a: 1\na: 2\n'],
  ['unknown tag', 'a: !!nope 1\n'],
  ['tab indent', 'a:\n\tb: 1\n'],
  ['bad alias', 'a: *missing\n'],
  ['stray quote', 'a: "abc\n'],
];
for (const [label, src] of bad) {
  try {
    yaml.load(src);
    process.stdout.write(`---- ${label}: no error\n`);
  } catch (e) {
    show(label, e);
  }
}

// errors thrown by callbacks the library calls
const point = yaml.defineSequenceTag('!point', {
  create: () => [],
  addItem: (c, item, i) => { if (i > 1) throw new RangeError(`a point has 2 coordinates, not ${i + 1}`); c.push(item); },
  finalize: (c) => ({ x: c[0], y: c[1] }),
  identify: () => false,
});
const schema = yaml.CORE_SCHEMA.withTags(point);
process.stdout.write(`custom tag: ${JSON.stringify(yaml.load('p: !point [1, 2]', { schema }))}\n`);
try { yaml.load('p: !point [1, 2, 3]', { schema }); } catch (e) { show('custom tag addItem', e); }
try { yaml.dump({ f() {} }); } catch (e) { show('dump a function', e); }
try {
  yaml.dump({ a: [1, 2], b: { c: 3 } }, { transform: (docs) => yaml.visit(docs, (node) => { if (node.kind === 'sequence') throw new Error('visitor gave up', { cause: new TypeError('inner') }); }) });
} catch (e) { show('dump transform visitor', e); }
const limited = Error.stackTraceLimit;
Error.stackTraceLimit = 3;
try { yaml.load('x: [\n'); } catch (e) { show('stackTraceLimit 3', e); }
Error.stackTraceLimit = limited;
process.stderr.write(`js-yaml: ${bad.length} bad inputs rejected; the next one is not caught\n`);
yaml.load('key: value\n  nested: wrong\n');
