// Node queues process.nextTick callbacks inside some of its constructors and
// methods (a Worker's 'worker' event, a server's 'listening'). One queued by
// paranode's agent before the program's first line makes an ES module main
// start inside processTicksAndRejections, one more frame in every stack trace
// it takes; one queued on attach runs between the program's own ticks. So the
// agent runs such calls with the ticks held, and runs what they queued at once.
// Nothing of the program runs in between: this is synchronous.

/**
 * Run `make` with process.nextTick held, then the callbacks it queued, with the
 * `process` events `hide` names left out (the program's listeners never see them).
 */
export function withHeldTicks<T>(make: () => T, hide?: (made: T, event: string | symbol, args: unknown[]) => boolean): T {
  const nextTick = process.nextTick;
  const held: [(...a: unknown[]) => void, unknown[]][] = [];
  process.nextTick = ((cb: (...a: unknown[]) => void, ...args: unknown[]) => { held.push([cb, args]); }) as typeof process.nextTick;
  let made: T;
  try {
    made = make();
  } finally {
    process.nextTick = nextTick;
  }
  const emit = process.emit;
  if (hide) {
    process.emit = function (this: unknown, event: string | symbol, ...args: unknown[]) {
      return hide(made, event, args) ? false : (emit as (...a: unknown[]) => boolean).call(this, event, ...args);
    } as typeof process.emit;
  }
  try {
    for (const [cb, args] of held) {
      try { cb(...args); } catch { /* Node's own callback for our object: never the program's problem */ }
    }
  } finally {
    process.emit = emit;
  }
  return made;
}
