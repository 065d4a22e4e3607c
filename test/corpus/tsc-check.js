// Type checker: the TypeScript compiler API (createProgram, 9 MB of compiler)
// checks a three-file project with deliberate errors; prints every
// diagnostic with its file, line and column, the emitted declarations and
// the count; exits 2 when there are errors, as tsc does.
'use strict';
const path = require('path');
const ts = require('typescript');

const dir = path.join(__dirname, 'inputs', 'tsproj');
const rel = (f) => path.relative(dir, f);
const options = {
  strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, noEmitOnError: false,
  lib: ['lib.es2015.d.ts'], types: [], declaration: true, noImplicitReturns: true,
};
const files = ['main.ts', 'shapes.ts', 'util.ts'].map((f) => path.join(dir, f));
const host = ts.createCompilerHost(options);
const emitted = [];
host.writeFile = (name, text) => { emitted.push([rel(name), text]); };
const program = ts.createProgram(files, options, host);
const diagnostics = ts.getPreEmitDiagnostics(program);
for (const d of diagnostics) {
  const text = ts.flattenDiagnosticMessageText(d.messageText, '\n  ');
  if (d.file) {
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    process.stdout.write(`${rel(d.file.fileName)}(${line + 1},${character + 1}): ${ts.DiagnosticCategory[d.category].toLowerCase()} TS${d.code}: ${text}\n`);
  } else process.stdout.write(`${ts.DiagnosticCategory[d.category].toLowerCase()} TS${d.code}: ${text}\n`);
}
program.emit();
for (const [name, text] of emitted.sort()) process.stdout.write(`==== ${name}\n${text}`);
const checker = program.getTypeChecker();
// the type of every identifier, as an editor's hover would show it
for (const file of files) {
  const sf = program.getSourceFile(file);
  ts.forEachChild(sf, function visit(node) {
    if (ts.isIdentifier(node)) {
      const { line, character } = sf.getLineAndCharacterOfPosition(node.getStart());
      const type = checker.typeToString(checker.getTypeAtLocation(node), node, ts.TypeFormatFlags.NoTruncation);
      process.stdout.write(`${rel(file)}(${line + 1},${character + 1}) ${node.text}: ${type}\n`);
    }
    ts.forEachChild(node, visit);
  });
}
process.stdout.write(`Found ${diagnostics.length} errors in ${new Set(diagnostics.map((d) => d.file && d.file.fileName)).size} files.\n`);
process.stderr.write(`typescript ${ts.version}: ${program.getSourceFiles().length} source files, ${program.getNodeCount()} nodes\n`);
process.exitCode = diagnostics.length ? 2 : 0;
