// Bench target for the message metrics: N messages of SIZE bytes (0: a short string)
// to a worker and each back, 100 at a time. Each message carries its send time; its
// receiver adds up its wait. Prints "messages <us per message sent> <s waited>" (the
// messages both ways), then the worker ends by itself.
'use strict';
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');
function hr() { const [s, ns] = process.hrtime(); return s * 1e3 + ns / 1e6; }
const BATCH = 100;
if (isMainThread) {
  const n = Number(process.argv[2] ?? 20000), size = Number(process.argv[3] ?? 0);
  const w = new Worker(__filename, { workerData: size });
  const payload = size ? Buffer.alloc(size) : 'x';
  let sent = 0, back = 0, here = 0;
  const t0 = hr();
  const batch = () => { for (let i = 0; i < BATCH && sent < n; i++, sent++) w.postMessage({ p: payload, t: hr() }); };
  w.on('message', (m) => {
    here += hr() - m.t;
    if (m.there !== undefined) { console.log('messages', ((hr() - t0) * 1000) / (2 * n), (here + m.there) / 1000); return; }
    if (++back === sent) { if (sent < n) batch(); else w.postMessage({ end: true, t: hr() }); }
  });
  batch();
} else {
  let there = 0;
  parentPort.on('message', (m) => {
    there += hr() - m.t;
    if (m.end) { parentPort.postMessage({ there, t: hr() }); parentPort.close(); } else parentPort.postMessage({ p: m.p, t: hr() });
  });
}
