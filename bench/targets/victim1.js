// A module of a long-running program, instrumented by the pause benchmark
// (copy 1 of 3: each copy is a separate script, so each gets its own first insertion).
'use strict';

// parseLine1
function parseLine1(line) {
  const parts = line.split(',');
  return parts.map((p) => p.trim());
}

// sumFields1
function sumFields1(fields) {
  let s = 0;
  for (const f of fields) s += Number(f) || 0;
  return s;
}

// formatRow1
function formatRow1(fields, total) {
  return fields.join(' | ') + ' = ' + total;
}

// checksum1
function checksum1(text) {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) | 0;
  return h;
}

// handle1
function handle1(line) {
  const fields = parseLine1(line);
  const total = sumFields1(fields);
  return checksum1(formatRow1(fields, total));
}

module.exports = { parseLine1, sumFields1, formatRow1, checksum1, handle1 };
