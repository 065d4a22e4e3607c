// The observed cost is judged against the time each thread could run
// (agent/runnable-time.ts): each thread's waits for a CPU come from cpu_wait.
import type { MetricInstance } from '../metrics/instance';

/** Each thread's time spent waiting for a CPU since a `cpu_wait` instance was enabled, in seconds (none: nothing known). */
export function waitTotals(wait: MetricInstance | undefined): Map<string, number> {
  return wait?.threadTotals() ?? new Map();
}
