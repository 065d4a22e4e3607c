// A run's --duration counts from the start of the command (paranode's own start,
// a first calibration, attaching and placing included), so that it bounds the
// whole run; where it has passed before the target is reached, the target is
// not touched at all.
import { deadline } from '../session/deadline';

/** Milliseconds left of `duration` seconds counted from `since` (performance.now(); 0: the command's start). */
export function durationLeft(duration: number, since = 0): number {
  const left = Math.ceil(duration * 1000 - (performance.now() - since));
  if (left <= 0) throw new Error(`--duration ${duration} s ended before the target was reached (paranode took ${((performance.now() - since) / 1000).toFixed(2)} s to start)`);
  return left;
}

/** The end of a run's --duration as a signal (undefined: no --duration). */
export function durationEnd(duration: number | undefined, since = 0): AbortSignal | undefined {
  return duration ? deadline(durationLeft(duration, since)) : undefined;
}
