// A program nearly always inside deep-backtracking regular expressions:
// bursts of argv[2] ms (default 200) of two regexps on a 200,001-character
// string, then its event loop; runs until killed. A tool's regexp run by
// interrupt inside them corrupted them (docs/BENCHMARKS.md section 16):
//   node bench/targets/regexp-bursts.js 200 & paranode diagnose -q --duration 5 attach $!
'use strict';
const ms = Number(process.argv[2] || 200);
const text = 'ab'.repeat(100000) + 'x';
let matched = 0;
function burst() {
  const end = Date.now() + ms;
  while (Date.now() < end) if (/^(?:a|b)*c/.test(text) || /^(?:a|b)+?y/.test(text)) matched++;
  setImmediate(burst);
}
console.log('ready');
burst();
setTimeout(() => console.log('matched', matched), 1e9);
