// The program `paranode calibrate` measures what one stack sample of V8's
// sampling profiler costs the thread it samples: V8's profiler thread stops
// the thread with a signal and walks its stack in the handler, on the thread's
// own time (paranode counts the profiler thread's CPU apart, class `sampler`).
// The same busy work runs profiled at 1 ms and at 0.25 ms, in turns: what the
// running profiler costs whatever its samples cancels, the extra samples' part
// stays. The thread's own CPU time (Linux: /proc/thread-self/schedstat;
// elsewhere the process's, which holds the profiler thread's too: the dear
// side) is read around the work only, after the profiler's start (which logs
// every compiled function once) and before its stop.
// Prints one line: JSON { ns: [low, high] } per sample, the mean of the turns'
// ratios less and plus two standard errors.
'use strict';
const fs = require('fs');
const inspector = require('inspector');

const TURNS = 8;
/** two intervals, both profiled: what the profiler costs while it runs whatever its samples cancels out */
const OFTEN_US = 250, SELDOM_US = 1000;

let threadClock = fs.existsSync('/proc/thread-self/schedstat');
/** ms of this thread's CPU time (of the process's, where the thread's is not known) */
function cpuMs() {
  if (threadClock) {
    try { return Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6; } catch { threadClock = false; }
  }
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

// a few frames deep, objects and strings: a program's stack, not an empty loop's
function work(n) {
  let x = 0;
  const a = [];
  for (let i = 0; i < n; i++) {
    a.push({ i, s: 'k' + (i & 1023) });
    x += a[a.length - 1].s.length;
    if (a.length > 1000) a.length = 0;
  }
  return x;
}
function deep(d, n) { return d === 0 ? work(n) : deep(d - 1, n) + 1; }

const s = new inspector.Session();
s.connect();
const post = (m, p) => new Promise((resolve, reject) => s.post(m, p, (e, r) => (e ? reject(e) : resolve(r))));

/** [ms of CPU time, samples V8 took] of one run of the work */
async function run(n, interval) {
  const profiled = interval > 0;
  if (profiled) {
    await post('Profiler.enable');
    await post('Profiler.setSamplingInterval', { interval });
    await post('Profiler.start');
  }
  const c = cpuMs();
  deep(30, n);
  const ms = cpuMs() - c;
  let samples = 0;
  if (profiled) {
    samples = (await post('Profiler.stop')).profile.samples.length;
    await post('Profiler.disable');
  }
  return [ms, samples];
}

(async () => {
  // about 0.2 s a run, once warm
  for (let i = 0; i < 3; i++) await run(1e6, 0);
  const [probe] = await run(1e6, 0);
  const n = Math.max(1e5, Math.round(1e6 * 200 / Math.max(probe, 1)));
  const per = [];
  for (let t = 0; t < TURNS; t++) {
    // seldom, often, seldom: the often-sampled run against the mean of its neighbours
    const [a, sa] = await run(n, SELDOM_US);
    const [on, samples] = await run(n, OFTEN_US);
    const [b, sb] = await run(n, SELDOM_US);
    const more = samples - (sa + sb) / 2;
    if (more > 0) per.push(((on - (a + b) / 2) * 1e6) / more);
  }
  s.disconnect();
  // no sample taken in any turn (a platform where V8's sampler does not run): none to price
  if (!per.length) { console.log(JSON.stringify({ ns: [0, 0], turns: 0, threadClock })); return; }
  const mean = per.reduce((x, y) => x + y, 0) / per.length;
  const sd = Math.sqrt(per.reduce((x, y) => x + (y - mean) ** 2, 0) / Math.max(1, per.length - 1));
  const se = sd / Math.sqrt(per.length);
  // a sample never makes the thread faster: below 0 is noise
  console.log(JSON.stringify({ ns: [Math.max(0, mean - 2 * se), Math.max(0, mean + 2 * se)], turns: per.length, threadClock }));
})();
