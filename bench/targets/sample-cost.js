// What V8's sampling profiler costs the thread it samples, without paranode:
// the same busy work (a few frames deep, objects and strings) with the profiler
// off and on at each interval given, in turns, 7 rounds; the thread's own CPU
// time (Linux schedstat) around the work only, after the profiler's start and
// before its stop. Prints per interval the median added share and, over the
// samples V8 took, the added µs per sample.
//   node sample-cost.js [interval µs ...]   (default 10000 1000 250)
// SAMPLE_COST_MS sets a run's length (default 500 ms of the thread's CPU time).
'use strict';
const fs = require('fs');
const inspector = require('inspector');

const s = new inspector.Session();
s.connect();
const post = (m, p) => new Promise((resolve, reject) => s.post(m, p, (e, r) => (e ? reject(e) : resolve(r))));
const cpuMs = () => Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
function work(n) {
  let x = 0;
  const a = [];
  for (let i = 0; i < n; i++) { a.push({ i, s: 'k' + (i & 1023) }); x += a[a.length - 1].s.length; if (a.length > 1000) a.length = 0; }
  return x;
}
function deep(d, n) { return d === 0 ? work(n) : deep(d - 1, n) + 1; }

async function run(n, interval) {
  if (interval) { await post('Profiler.enable'); await post('Profiler.setSamplingInterval', { interval }); await post('Profiler.start'); }
  const c = cpuMs();
  deep(30, n);
  const ms = cpuMs() - c;
  let samples = 0;
  if (interval) { samples = (await post('Profiler.stop')).profile.samples.length; await post('Profiler.disable'); }
  return { ms, samples };
}

(async () => {
  const intervals = process.argv.slice(2).map(Number).filter((x) => x > 0);
  if (!intervals.length) intervals.push(10000, 1000, 250);
  for (let i = 0; i < 3; i++) await run(1e6, 0);
  const n = Math.round(1e6 * Number(process.env.SAMPLE_COST_MS || 500) / Math.max(1, (await run(1e6, 0)).ms));
  const res = new Map([[0, []], ...intervals.map((iv) => [iv, []])]);
  for (let r = 0; r < 7; r++) for (const iv of intervals) { res.get(0).push(await run(n, 0)); res.get(iv).push(await run(n, iv)); }
  const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
  const off = med(res.get(0).map((x) => x.ms));
  console.log(`${process.version}: off ${off.toFixed(1)} ms of the thread's CPU a run (median of ${res.get(0).length})`);
  for (const iv of intervals) {
    const on = med(res.get(iv).map((x) => x.ms)), samples = med(res.get(iv).map((x) => x.samples));
    console.log(`every ${iv / 1000} ms: ${on.toFixed(1)} ms (+${((on / off - 1) * 100).toFixed(2)} %), ${samples} samples, ${(((on - off) * 1000) / samples).toFixed(1)} µs a sample`);
  }
})();
