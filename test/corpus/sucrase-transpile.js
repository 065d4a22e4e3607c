// Transpiler: sucrase turns fixed TypeScript/JSX/ES-module sources into
// CommonJS; prints the code it produced for several transform sets, then runs
// one result to show the output is executable.
'use strict';
const fs = require('fs');
const path = require('path');
const { transform, getVersion } = require('sucrase');

const dir = path.join(__dirname, 'inputs');
const tsx = fs.readFileSync(path.join(dir, 'messy.tsx'), 'utf8');
const js = fs.readFileSync(path.join(dir, 'messy.js'), 'utf8');
const esm = `import a, {b as c, d} from './x';\nimport * as ns from "y";\nexport const e = a + c + d?.f ?? ns.g;\nexport default class K { static s = 1; #p = 2; m = () => this.#p; }\nexport * from './z';\nexport {e as ee};\nconst {x, ...rest} = {x: 1, y: 2, z: 3};\nlet n = 1_000n; n **= 2n;\nfor await (const v of []) {}\n`;

const jobs = [
  ['messy.tsx', tsx, { transforms: ['typescript', 'jsx', 'imports'], filePath: 'messy.tsx' }],
  ['messy.tsx (automatic jsx)', tsx, { transforms: ['typescript', 'jsx'], jsxRuntime: 'automatic', production: true, filePath: 'messy.tsx' }],
  ['messy.js', js, { transforms: ['imports'], filePath: 'messy.js' }],
  ['esm.js', esm, { transforms: ['imports'], filePath: 'esm.js' }],
  ['esm.js (jest hoist, legacy interop)', esm, { transforms: ['imports', 'jest'], enableLegacyBabel5ModuleInterop: true, filePath: 'esm.js' }],
  ['flow.js', '// @flow\ntype T = {a: number};\nfunction f(x: T): number { return x.a }\nexport opaque type O = string;\n', { transforms: ['flow', 'imports'], filePath: 'flow.js' }],
];
let total = 0;
for (const [name, src, opts] of jobs) {
  const r = transform(src, { ...opts, sourceMapOptions: { compiledFilename: name }, keepUnusedImports: false });
  total += r.code.length;
  process.stdout.write(`==== ${name}\n${r.code}\n---- map: ${r.sourceMap.mappings.length} chars, ${r.sourceMap.sources}\n`);
}
// pinned ES-module sources of an installed package (micromark's dev build, with JSDoc types) to CommonJS
const lib = path.join(__dirname, '..', '..', 'node_modules', 'micromark', 'dev', 'lib');
for (const f of fs.readdirSync(lib).filter((n) => n.endsWith('.js')).sort()) {
  const r = transform(fs.readFileSync(path.join(lib, f), 'utf8'), { transforms: ['imports'], filePath: f });
  total += r.code.length;
  process.stdout.write(`==== micromark/dev/lib/${f}\n${r.code}\n`);
}
// a syntax error (sucrase reports the position)
try {
  transform('let x = (1 + ;', { transforms: ['typescript'] });
} catch (e) {
  process.stdout.write(`syntax error: ${e.message}\n`);
}
// the transpiled messy.js runs
const { code } = transform(js, { transforms: ['imports'] });
const m = { exports: {} };
new Function('module', 'exports', 'require', code)(m, m.exports, require);
m.exports.main().then((v) => {
  process.stdout.write(`ran: ${JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? String(x) : x))}\n`);
  process.stderr.write(`sucrase ${getVersion()}: ${total} characters produced\n`);
});
