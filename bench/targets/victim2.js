// A module of a long-running program, instrumented by the pause benchmark
// (copy 2 of 3: each copy is a separate script, so each gets its own first insertion).
'use strict';

// parseLine2
function parseLine2(line) {
  const parts = line.split(',');
  return parts.map((p) => p.trim());
}

// sumFields2
function sumFields2(fields) {
  let s = 0;
  for (const f of fields) s += Number(f) || 0;
  return s;
}

// formatRow2
function formatRow2(fields, total) {
  return fields.join(' | ') + ' = ' + total;
}

// checksum2
function checksum2(text) {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) | 0;
  return h;
}

// handle2
function handle2(line) {
  const fields = parseLine2(line);
  const total = sumFields2(fields);
  return checksum2(formatRow2(fields, total));
}

module.exports = { parseLine2, sumFields2, formatRow2, checksum2, handle2 };
