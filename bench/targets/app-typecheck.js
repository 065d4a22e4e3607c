// A compiler as a developer runs it: the TypeScript compiler type-checks and
// emits a real project (paranode's own src/, with its tsconfig.json's options) in memory,
// a new program each time, until the given seconds have passed. Prints the
// rounds and the diagnostics of the first.
'use strict';
const path = require('path');
const ts = require('typescript');

const seconds = Number(process.argv[2] ?? 20);
const root = path.resolve(__dirname, '..', '..');
const config = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')); } });
const end = Date.now() + seconds * 1000;
const files = config.fileNames.filter((f) => f.startsWith(path.join(root, 'src') + path.sep));
let rounds = 0, first = -1, bytes = 0;
do {
  const host = ts.createCompilerHost(config.options);
  host.writeFile = (_name, text) => { bytes += text.length; };
  const program = ts.createProgram(files, config.options, host);
  const diagnostics = ts.getPreEmitDiagnostics(program);
  if (first < 0) first = diagnostics.length;
  program.emit();
  rounds++;
} while (Date.now() < end);
console.log(`typecheck: ${rounds} rounds of ${files.length} files, ${first} diagnostics, ${bytes} bytes emitted`);
