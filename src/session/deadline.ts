// A signal that aborts after a time. Not AbortSignal.timeout: its timer holds the
// signal only weakly, and AbortSignal.any() holds its sources weakly too (Node 20,
// nodejs/node#57736), so a garbage collection could take the timeout away and a
// --duration never end (seen: a diagnose that ran on after its 30 s). Here the timer
// holds the controller; like AbortSignal.timeout's, it keeps no process alive.

/** A signal aborted with a TimeoutError after `ms` milliseconds. */
export function deadline(ms: number): AbortSignal {
  const c = new AbortController();
  setTimeout(() => c.abort(new DOMException(`the time (${ms} ms) is up`, 'TimeoutError')), ms).unref();
  return c.signal;
}
