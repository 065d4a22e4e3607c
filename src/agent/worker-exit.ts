// A worker thread's own exit, told to the relay before Node takes the worker's
// inspector down. Node aborts the whole process when a CDP message reaches a
// worker whose inspector agent is already gone (CHECK in
// MainThreadInterface::Post, Node 22-26), and the tool learns that a worker has
// gone only after that. So a worker that ends by itself (its exit handlers run)
// tells the relay first and waits: the relay forwards nothing more to it and
// lets it go once what it forwarded already has reached it (see relay.ts).
// A worker ended by worker.terminate() runs no exit handler and cannot do this.
import { BroadcastChannel, threadId } from 'worker_threads';

/** The channel of one session's relay (named by its token: no other program's channel). */
export const exitChannel = (token: string): string => `paranode.worker-exit.${token}`;

/** What a leaving worker posts: its id (NodeWorker's workerId) and the cell the relay sets to let it go. */
export interface ExitNotice { workerId: string; cell: Int32Array }

/** How long a leaving worker waits for the relay at most (a relay that does not answer is not waited for). */
export const EXIT_WAIT_MS = 1000;

// taken before any probe can wrap it (msgs counts the program's own messages)
const postMessage = BroadcastChannel.prototype.postMessage;

/** At this worker's exit, while `inSession()`: tell the relay of `token()` and wait until it lets go. */
export function announceExit(token: () => string, inSession: () => boolean): void {
  process.on('exit', () => {
    if (!inSession()) return;
    const cell = new Int32Array(new SharedArrayBuffer(4));
    const channel = new BroadcastChannel(exitChannel(token()));
    try {
      postMessage.call(channel, { workerId: String(threadId), cell } satisfies ExitNotice);
    } catch {
      return; // no relay to tell
    } finally {
      channel.close();
    }
    Atomics.wait(cell, 0, 0, EXIT_WAIT_MS);
  });
}
