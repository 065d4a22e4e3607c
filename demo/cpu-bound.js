// Demo: a CPU-bound batch job with a hot function buried a few calls deep.
'use strict';
const crypto = require('crypto');

function makeRecord(i) {
  return `record-${i}-${'x'.repeat(i % 60)}`;
}

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

function run(batches) {
  let total = 0;
  for (let b = 0; b < batches; b++) total += processBatch(b * 500, 500);
  return total;
}

console.log('checksum', run(Number(process.argv[2] || 20)));
