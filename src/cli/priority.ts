// The tool's own CPU priority. paranode works beside the program it measures,
// often on the same cores: analysing a loaded server's 500 scripts for an
// attach takes seconds of CPU, and at normal priority that CPU came out of the
// server's (unprepared Node 22 on 2 cores under a load generator, requests in
// the 6 s after attach: 4,740 and 4,872 at niceness 0, 5,298 and 5,252 at 10;
// ~1,000 a second before). Lowered once the target runs, so a launched program
// does not inherit it; Linux gives each thread its own niceness, and threads
// the tool starts later inherit it.
import * as os from 'os';
import { InvalidArgumentError } from 'commander';

/** niceness the CLI takes by default */
export const DEFAULT_NICE = 10;

export function niceArg(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 19) throw new InvalidArgumentError('--nice must be a whole number from 0 (keep the priority) to 19');
  return n;
}

/** Run this process at niceness `nice` (0: unchanged); never raises its priority, never fails the command. */
export function yieldCpu(nice: number): void {
  if (!nice) return;
  try {
    if (os.getPriority() < nice) os.setPriority(nice);
  } catch { /* not permitted here: run at the priority we have */ }
}
