// SIGINT, SIGTERM and SIGHUP end a paranode command gracefully: the first
// detaches (or lets a launched program end) and writes everything; a second
// stops waiting and writes what was sampled so far.
import * as os from 'os';

export const STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** 128 + the signal's number: the status a shell shows for a process it ended */
export function signalStatus(sig: NodeJS.Signals): number {
  return 128 + (os.constants.signals[sig] ?? 0);
}

/**
 * Call `first` on the first stop signal and `again` on each later one, until
 * the returned function removes the handlers.
 */
export function onStopSignals(first: (sig: NodeJS.Signals) => void, again: (sig: NodeJS.Signals) => void): () => void {
  let seen = 0;
  const handler = (sig: NodeJS.Signals) => { if (seen++ === 0) first(sig); else again(sig); };
  for (const s of STOP_SIGNALS) process.on(s, handler);
  return () => { for (const s of STOP_SIGNALS) process.off(s, handler); };
}

/**
 * Stop signals caught from the start of a command, before the session that
 * handles them exists: one that came early is handled once `handle` is called
 * (a launched program is then still told; nothing is lost).
 */
export class EarlySignals {
  private readonly pending: NodeJS.Signals[] = [];
  private first: ((sig: NodeJS.Signals) => void) | null = null;
  private again: ((sig: NodeJS.Signals) => void) | null = null;
  readonly off: () => void;
  /**
   * @param exitEarly a signal before the session exists ends paranode at once
   * (attach: the port guard and the agent's watchdog put the target back)
   */
  constructor(exitEarly = false) {
    this.off = onStopSignals((sig) => {
      if (this.first) this.first(sig);
      else if (exitEarly) process.exit(signalStatus(sig));
      else this.pending.push(sig);
    }, (sig) => {
      if (this.again) this.again(sig);
      else process.exit(signalStatus(sig));
    });
  }
  handle(first: (sig: NodeJS.Signals) => void, again: (sig: NodeJS.Signals) => void): void {
    this.first = first;
    this.again = again;
    for (const s of this.pending.splice(0)) first(s);
  }
}
