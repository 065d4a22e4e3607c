// Demo: worker threads with load imbalance. Each round the main thread hands
// four workers their share of the work and waits for all of them; the last
// worker gets eight times the work of the others, so it computes all the time
// while the others mostly wait. Runs for argv[2] seconds (default 20).
'use strict';
const { Worker, isMainThread, parentPort, threadId } = require('worker_threads');

// the planted bottleneck, in the overloaded worker
function crunch(units) {
  let x = 0;
  for (let u = 0; u < units; u++) for (let i = 0; i < 2e6; i++) x = (x * 31 + i) % 1000003;
  return x;
}

if (!isMainThread) {
  parentPort.on('message', (units) => parentPort.postMessage(crunch(units)));
} else {
  const shares = [1, 1, 1, 8];
  const workers = shares.map(() => new Worker(__filename, { argv: [] }));
  process.stderr.write(`heavy worker: thread ${workers[workers.length - 1].threadId}\n`);
  const until = Date.now() + 1000 * Number(process.argv[2] || 20);
  const round = () => Promise.all(workers.map((w, k) => new Promise((resolve) => { w.once('message', resolve); w.postMessage(shares[k]); })));
  (async () => {
    let rounds = 0;
    while (Date.now() < until) { await round(); rounds++; }
    for (const w of workers) await w.terminate();
    console.log('rounds', rounds > 0 ? 'done' : 'none');
  })();
}
