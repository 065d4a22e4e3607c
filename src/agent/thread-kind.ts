// Whether this thread is the process's main thread, without loading
// node:worker_threads (1.2-2.6 ms of every dormant start, Node 22-26) where it
// can be told otherwise. Node gives a worker the process methods a thread cannot
// own as stubs marked `disabled` (process.abort, process.chdir: "not available
// in Worker threads"); the main thread's process.abort is Node's own `abort`. The
// agent's entry runs before any of the program's code, so neither is the
// program's yet. Anything else (a future Node) asks worker_threads.
let main: boolean | undefined;

export function isMainThread(): boolean {
  if (main === undefined) {
    const abort = process.abort as { disabled?: unknown; name?: string };
    main = abort.disabled === true ? false
      : abort.name === 'abort' && (process.chdir as { disabled?: unknown }).disabled === undefined ? true
        : (require('worker_threads') as typeof import('worker_threads')).isMainThread;
  }
  return main;
}
