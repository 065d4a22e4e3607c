// Demo: a CPU-bound batch job with a hot function buried a few calls deep
// (run -> processBatch -> hashRecord). Runs for argv[2] seconds (default 20),
// a batch at a time, and prints a checksum.
'use strict';
const crypto = require('crypto');

function makeRecord(i) {
  return `record-${i}-${'x'.repeat(i % 60)}`;
}

// the planted bottleneck: twenty rounds of SHA-256 per record
function hashRecord(record) {
  let h = record;
  for (let k = 0; k < 20; k++) h = crypto.createHash('sha256').update(h).digest('hex');
  return h;
}

function processBatch(start, size) {
  let acc = 0;
  for (let i = start; i < start + size; i++) acc += hashRecord(makeRecord(i)).charCodeAt(0);
  return acc;
}

function run(batches, done) {
  let total = 0, b = 0;
  const step = () => {
    total += processBatch(b * 100, 100);
    if (++b < batches) setImmediate(step);
    else done(total);
  };
  step();
}

const until = Date.now() + 1000 * Number(process.argv[2] || 20);
let checksum = 0;
(function again() {
  run(10, (t) => {
    checksum = (checksum + t) % 1000003;
    if (Date.now() < until) setImmediate(again);
    else console.log('checksum', checksum);
  });
})();
