// The tool's listening side: a Unix socket in a private (0700) directory.
// Agents started in targets connect to it and must present the session token
// before anything else is accepted.
import { randomBytes } from 'crypto';
import { EventEmitter } from 'events';
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import * as path from 'path';
import { Cdp, IDLE_NUDGE_MS, Transport } from './cdp';

/** startedAt: when the agent started this session (ms since the epoch), from which its runtime counts the tool's work */
export interface AgentHello { pid: number; relayThreadId: number; cwd: string; argv: string[]; startedAt?: number }

export class AgentConnection {
  constructor(readonly cdp: Cdp, readonly hello: AgentHello) {}
}

class LineTransport implements Transport {
  private buf = '';
  private messageCb: (t: string) => void = () => {};
  private closeCb: () => void = () => {};
  constructor(private readonly sock: net.Socket, initial: string) {
    sock.on('data', (c) => this.feed(c.toString('utf8')));
    sock.on('close', () => this.closeCb());
    sock.on('error', () => { /* close follows */ });
    this.buf = initial;
  }
  start(): void { this.feed(''); }
  private feed(text: string): void {
    this.buf += text;
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      if (line) this.messageCb(line);
    }
  }
  send(text: string): void { if (!this.sock.destroyed) this.sock.write(text + '\n'); }
  onMessage(cb: (t: string) => void): void { this.messageCb = cb; }
  onClose(cb: () => void): void { this.closeCb = cb; }
  close(): void { this.sock.end(); }
}

export class AgentServer extends EventEmitter {
  readonly dir: string;
  readonly socketPath: string;
  readonly finalDir: string;
  readonly token = randomBytes(24).toString('hex');
  private readonly server: net.Server;

  private constructor() {
    super();
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-'));
    fs.chmodSync(this.dir, 0o700);
    this.socketPath = path.join(this.dir, 'agent.sock');
    this.finalDir = path.join(this.dir, 'final');
    fs.mkdirSync(this.finalDir, { mode: 0o700 });
    this.server = net.createServer((sock) => this.accept(sock));
  }

  static async open(): Promise<AgentServer> {
    const s = new AgentServer();
    await new Promise<void>((resolve, reject) => {
      s.server.once('error', reject);
      s.server.listen(s.socketPath, () => resolve());
    });
    s.server.unref();
    return s;
  }

  private accept(sock: net.Socket): void {
    let first = '';
    const onData = (chunk: Buffer) => {
      first += chunk.toString('utf8');
      const nl = first.indexOf('\n');
      if (nl < 0) {
        if (first.length > 4096) sock.destroy();
        return;
      }
      sock.off('data', onData);
      let hello: any;
      try { hello = JSON.parse(first.slice(0, nl)); } catch { sock.destroy(); return; }
      if (hello.hello !== this.token) { sock.destroy(); return; }
      const t = new LineTransport(sock, first.slice(nl + 1));
      const cdp = new Cdp(t, { nudgeAfterMs: IDLE_NUDGE_MS });
      t.start();
      this.emit('agent', new AgentConnection(cdp, hello as AgentHello));
    };
    sock.on('data', onData);
    sock.on('error', () => { /* ignore */ });
  }

  /** Wait for the agent of process `pid` (or any, if undefined) to connect. */
  waitForAgent(pid: number | undefined, timeoutMs: number, abort?: Promise<string>): Promise<AgentConnection> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { cleanup(); reject(new Error(`the agent did not connect within ${timeoutMs} ms`)); }, timeoutMs);
      const on = (c: AgentConnection) => {
        if (pid !== undefined && c.hello.pid !== pid) return;
        cleanup();
        resolve(c);
      };
      const cleanup = () => { clearTimeout(timer); this.off('agent', on); };
      this.on('agent', on);
      abort?.then((why) => { cleanup(); reject(new Error(why)); });
    });
  }

  readFinal(pid: number): { thread: number; sample: any }[] {
    const out: { thread: number; sample: any }[] = [];
    for (const f of fs.existsSync(this.finalDir) ? fs.readdirSync(this.finalDir) : []) {
      const m = /^(\d+)-(\d+)\.json$/.exec(f);
      if (!m || Number(m[1]) !== pid) continue;
      try { out.push({ thread: Number(m[2]), sample: JSON.parse(fs.readFileSync(path.join(this.finalDir, f), 'utf8')) }); } catch { /* partial write */ }
    }
    return out;
  }

  close(): void {
    this.server.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
