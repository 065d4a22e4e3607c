// The one WebSocket to the server, and requests that wait for their reply.
import type { ClientMsg, ReplyMsg, ServerMsg } from '../protocol';

/** a request as the views make it; the id is added here */
export type Request = ClientMsg extends infer T ? (T extends unknown ? Omit<T, 'id'> : never) : never;

export class Conn {
  private ws: WebSocket | null = null;
  private nextId = 1;
  private readonly waiting = new Map<number, (r: ReplyMsg) => void>();

  constructor(private readonly token: string, private readonly onMsg: (m: ServerMsg) => void, private readonly onState: (s: 'open' | 'closed') => void) {}

  open(): void {
    const proto = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${proto}://${location.host}/ws?token=${encodeURIComponent(this.token)}`);
    this.ws = ws;
    ws.onopen = () => this.onState('open');
    ws.onmessage = (e) => {
      let m: ServerMsg;
      try {
        m = JSON.parse(String(e.data)) as ServerMsg;
      } catch {
        return;
      }
      if (m.type === 'reply') {
        const done = this.waiting.get(m.id);
        this.waiting.delete(m.id);
        done?.(m);
      }
      this.onMsg(m);
    };
    // no reconnecting: the server stops listening when the session ends
    ws.onclose = () => {
      for (const [id, done] of this.waiting) done({ type: 'reply', id, error: 'the connection to paranode is closed' });
      this.waiting.clear();
      this.onState('closed');
    };
  }

  /** Send a request; the reply (or an error reply when the socket is gone) resolves it. */
  request(req: Request): Promise<ReplyMsg> {
    const id = this.nextId++;
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return Promise.resolve({ type: 'reply', id, error: 'not connected to paranode' });
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      ws.send(JSON.stringify({ ...req, id } as ClientMsg));
    });
  }
}
