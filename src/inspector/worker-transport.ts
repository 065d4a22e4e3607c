// A worker thread's CDP session, carried inside its parent's session by the
// NodeWorker domain (no port of its own).
import { Cdp, Transport } from './cdp';

export class WorkerTransport implements Transport {
  private closed = false;
  constructor(private readonly parent: Cdp, private readonly sessionId: string) {}

  send(text: string): void {
    if (this.closed) return;
    this.parent.send('NodeWorker.sendMessageToWorker', { sessionId: this.sessionId, message: text }).catch(() => undefined);
  }

  onMessage(cb: (text: string) => void): void {
    this.parent.on('NodeWorker.receivedMessageFromWorker', (p: { sessionId: string; message: string }) => {
      if (p.sessionId === this.sessionId) cb(p.message);
    });
  }

  onClose(cb: () => void): void {
    const done = () => { if (!this.closed) { this.closed = true; cb(); } };
    this.parent.on('NodeWorker.detachedFromWorker', (p: { sessionId: string }) => { if (p.sessionId === this.sessionId) done(); });
    this.parent.on('close', done);
  }

  /** The agent (the relay) serves every thread's messages on the process's connection, told which session they are about. */
  agent(command: string, extra: Record<string, unknown>): Promise<unknown> {
    return this.parent.agent(command, { ...extra, sessionId: this.sessionId });
  }

  close(): void {
    if (this.closed) return;
    this.parent.send('NodeWorker.detach', { sessionId: this.sessionId }).catch(() => undefined);
  }
}
