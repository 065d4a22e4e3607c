// A worker thread's own exit, told to the relay before Node takes the worker's
// inspector down. Node aborts the whole process when a CDP message reaches a
// worker whose inspector agent is already gone (CHECK in
// MainThreadInterface::Post, Node 22-26), and the tool learns that a worker has
// gone only after that. So a worker that ends by itself (its exit handlers run)
// tells the relay first and waits: the relay forwards nothing more to it and
// lets it go once what it forwarded already has reached it (see relay.ts).
// A worker ended by worker.terminate() runs no exit handler and cannot do this.
//
// The handshake lasts as long as the relay may still send to the worker, which
// is until its inspector session is detached, not until its runtime is switched
// off: a worker joining a session hands the relay a cell, and the relay sets it
// once nothing more can reach the worker (then the worker exits without waiting).
import { BroadcastChannel, threadId } from 'worker_threads';

/** The channel of one session's relay (named by its token: no other program's channel). */
export const exitChannel = (token: string): string => `paranode.worker-exit.${token}`;

/** What a leaving worker posts: its thread id and the cell the relay sets to let it go. */
export interface ExitNotice { workerId: string; cell: Int32Array }
/** What a worker posts when it joins a session: the cell the relay sets once it sends it nothing more. */
export interface JoinNotice { workerId: string; over: Int32Array }

/** This worker's part in one session: the relay's token and the cell it sets at the end. */
export interface ExitHandshake { token: string; over: Int32Array }

/** How long a leaving worker waits for the relay at most (a relay that does not answer is not waited for). */
export const EXIT_WAIT_MS = 1000;

// taken before any probe can wrap it (msgs counts the program's own messages)
const postMessage = BroadcastChannel.prototype.postMessage;

function post(token: string, message: ExitNotice | JoinNotice): boolean {
  const channel = new BroadcastChannel(exitChannel(token));
  try {
    postMessage.call(channel, message);
    return true;
  } catch {
    return false; // no relay to tell
  } finally {
    channel.close();
  }
}

/** This worker joins the session of `token`: the relay learns of the cell that ends the handshake. */
export function joinSession(token: string): ExitHandshake {
  const over = new Int32Array(new SharedArrayBuffer(4));
  if (!post(token, { workerId: String(threadId), over } satisfies JoinNotice)) Atomics.store(over, 0, 1);
  return { token, over };
}

/** At this worker's exit, while the relay of `current()` may still send to it: tell the relay and wait until it lets go. */
export function announceExit(current: () => ExitHandshake | undefined): void {
  process.on('exit', () => {
    const h = current();
    if (!h || Atomics.load(h.over, 0) !== 0) return;
    const cell = new Int32Array(new SharedArrayBuffer(4));
    if (post(h.token, { workerId: String(threadId), cell } satisfies ExitNotice)) Atomics.wait(cell, 0, 0, EXIT_WAIT_MS);
  });
}
