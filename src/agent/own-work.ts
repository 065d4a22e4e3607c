// The agent's own work in the program's threads: preparing a module as it loads
// (reading the start-up cache, loading the preparer) and serving the tool. The
// built-ins it calls then (fs, for one) are paranode's, not the program's: a
// wrapped built-in runs no handler while this is under way (fs_calls, sync_io).

const state = { depth: 0 };

/** Whether the agent's own work is under way in this thread. */
export const inOwnWork = (): boolean => state.depth > 0;

/** Run the agent's own work. */
export function asOwnWork<T>(work: () => T): T {
  state.depth++;
  try {
    return work();
  } finally {
    state.depth--;
  }
}
