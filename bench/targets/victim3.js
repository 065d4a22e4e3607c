// A module of a long-running program, instrumented by the pause benchmark
// (copy 3 of 3: each copy is a separate script, so each gets its own first insertion).
'use strict';

// parseLine3
function parseLine3(line) {
  const parts = line.split(',');
  return parts.map((p) => p.trim());
}

// sumFields3
function sumFields3(fields) {
  let s = 0;
  for (const f of fields) s += Number(f) || 0;
  return s;
}

// formatRow3
function formatRow3(fields, total) {
  return fields.join(' | ') + ' = ' + total;
}

// checksum3
function checksum3(text) {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) | 0;
  return h;
}

// handle3
function handle3(line) {
  const fields = parseLine3(line);
  const total = sumFields3(fields);
  return checksum3(formatRow3(fields, total));
}

module.exports = { parseLine3, sumFields3, formatRow3, checksum3, handle3 };
