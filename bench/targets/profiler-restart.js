// What a restart of V8's sampling profiler costs the thread it profiles, as the heap's
// code grows: the TypeScript compiler checks and emits paranode's src/ (70 files), and
// between rounds the profile is ended and V8's profiler started again at a longer
// interval (V8 takes a new interval only with no profile running; the start logs every
// code object of the heap again). Prints each restart's time on this thread.
// Run: node bench/targets/profiler-restart.js (docs/BENCHMARKS.md section 63).
'use strict';
const inspector = require('inspector');
const path = require('path');
const ts = require('typescript');

const root = path.resolve(__dirname, '..', '..');
const s = new inspector.Session();
s.connect();
const post = (method, params) => { let failed = null; s.post(method, params, (err) => { failed = err; }); if (failed) throw failed; };
post('Profiler.enable');
const config = ts.getParsedCommandLineOfConfigFile(path.join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic() {} });
const files = config.fileNames.filter((f) => f.startsWith(path.join(root, 'src') + path.sep));
function round() {
  const host = ts.createCompilerHost(config.options);
  host.writeFile = () => {};
  const program = ts.createProgram(files, config.options, host);
  ts.getPreEmitDiagnostics(program);
  program.emit();
}
let interval = 10000;
const t0 = performance.now();
post('Profiler.setSamplingInterval', { interval });
inspector.console.profile('p0');
console.log(`first start at ${interval / 1000} ms: ${(performance.now() - t0).toFixed(1)} ms`);
for (let r = 1; r <= 4; r++) {
  round();
  const t1 = performance.now();
  inspector.console.profileEnd(`p${r - 1}`);
  const t2 = performance.now();
  interval += 10000;
  post('Profiler.setSamplingInterval', { interval });
  inspector.console.profile(`p${r}`);
  const t3 = performance.now();
  console.log(`after round ${r}: profile ended in ${(t2 - t1).toFixed(1)} ms, restarted at ${interval / 1000} ms in ${(t3 - t2).toFixed(1)} ms; rss ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`);
}
inspector.console.profileEnd('p4');
