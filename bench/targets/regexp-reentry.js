// Node's own bug, no paranode involved: JavaScript that an inspector request
// runs by interrupt, in the middle of the main thread's regular expression,
// and that runs a regexp itself corrupts the interrupted one (V8 keeps one
// regexp backtrack stack per isolate). A worker thread's in-process session
// (what paranode's relay uses) asks again and again.
//   node regexp-reentry.js <inner: off|nojs|plain|small|deep> [seconds]
// inner = what the request runs: no session at all, a request that runs no
// JavaScript (Runtime.runIfWaitingForDebugger), `1 + 1`, a regexp on 20
// characters, or one on 600,000. Exit 0: the main thread lived; a crash is a signal (SIGSEGV) or
// a malloc abort.
'use strict';
const wt = require('worker_threads');
if (wt.isMainThread) {
  const inner = process.argv[2] ?? 'deep';
  if (inner !== 'off') new wt.Worker(__filename, { workerData: inner }).unref();
  const text = 'ab'.repeat(200000) + 'x';
  const end = Date.now() + 1000 * Number(process.argv[3] ?? 8);
  let runs = 0;
  while (Date.now() < end) { /^(?:a|b)*c/.test(text); /^(?:a|b)+?y/.exec(text); runs++; }
  console.log(`lived: ${runs} rounds of the main thread's regexps, inner ${inner}`);
  process.exit(0);
} else {
  const inspector = require('inspector');
  const session = new inspector.Session();
  session.connectToMainThread();
  const expression = {
    plain: '1 + 1',
    small: `/^(?:b|a)*q/.test('ba'.repeat(10))`,
    deep: `/^(?:b|a)*q/.test('ba'.repeat(300000) + 'z')`,
  }[wt.workerData];
  const ask = () => (wt.workerData === 'nojs' ? session.post('Runtime.runIfWaitingForDebugger', () => setImmediate(ask))
    : session.post('Runtime.evaluate', { expression }, () => setImmediate(ask)));
  ask();
}
