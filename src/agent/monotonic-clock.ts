// The machine's monotonic clock in ms (process.hrtime): one clock for every
// thread of a process, and for the tool beside it (performance.now() counts from
// each thread's start, and its time origin is the wall clock's, read apart).

export function monotonicMs(): number {
  const [sec, ns] = process.hrtime();
  return sec * 1e3 + ns / 1e6;
}
