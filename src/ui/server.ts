// `paranode ui`'s server: the page and one WebSocket on 127.0.0.1 only, each
// request asked for the session's random token (the page and what it does
// reach the target: enabling a metric places code in it). It listens from
// open() to close(), which the session's owner calls when the session ends.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as http from 'http';
import * as path from 'path';
import { WebSocket, WebSocketServer } from 'ws';
import type { PerformanceConsultant } from '../consultant/search';
import { renderDiagnosis, type Diagnosis } from '../consultant/report';
import { MdlLibrary } from '../mdl/library';
import type { MetricManager } from '../metrics/manager';
import type { Session } from '../session/session';
import type { ClientMsg, ServerMsg } from './protocol';
import { excerpt, parseSourceAt, sourcePage } from './source-page';
import { UiState } from './state';

export interface UiOptions {
  /** the port on 127.0.0.1 (default 0: any free one) */
  port?: number;
  /** what the page's header says the session is */
  title?: string;
  /** the metric definitions the page offers (default: the standard library) */
  library?: MdlLibrary;
  /** how often the page gets new values, ms (default 500) */
  updateMs?: number;
  /** a Performance Consultant search will run (useConsultant): the page starts on its view */
  search?: boolean;
}

const STATIC = path.join(__dirname, 'static');
const TYPES: Record<string, string> = { '/app.js': 'text/javascript; charset=utf-8', '/app.css': 'text/css; charset=utf-8' };

export class UiServer {
  readonly token = crypto.randomBytes(24).toString('base64url');
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1 << 16 });
  readonly state: UiState;
  private readonly timer: NodeJS.Timeout;
  private flameAt = 0;
  private closed = false;

  private constructor(private readonly server: http.Server, readonly port: number, opts: UiOptions) {
    this.state = new UiState(opts.title ?? 'paranode', opts.library ?? MdlLibrary.standard(), (m) => this.broadcast(m), opts.search ?? false);
    server.on('request', (req, res) => this.serve(req, res));
    server.on('upgrade', (req, socket, head) => {
      if (!this.allowed(req) || new URL(req.url ?? '/', 'http://x').pathname !== '/ws') {
        socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.connected(ws));
    });
    this.timer = setInterval(() => this.tick(), opts.updateMs ?? 500);
    this.timer.unref();
  }

  /** Listen on 127.0.0.1 (a port in use is said so, with what to do). */
  static async open(opts: UiOptions = {}): Promise<UiServer> {
    const server = http.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e: NodeJS.ErrnoException) => {
        reject(new Error(e.code === 'EADDRINUSE'
          ? `the UI's port ${opts.port} on 127.0.0.1 is in use (choose another with --ui-port, or 0 for any free one)`
          : `the UI could not listen on 127.0.0.1:${opts.port ?? 0}: ${e.message}`));
      });
      server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
    });
    return new UiServer(server, (server.address() as { port: number }).port, opts);
  }

  /** the page's address, token included */
  get url(): string { return `http://127.0.0.1:${this.port}/?token=${this.token}`; }

  addSession(s: Session, label?: string): void { this.state.addSession(s, label); }
  useManager(mm: MetricManager): Promise<void> { return this.state.useManager(mm); }
  useConsultant(c: PerformanceConsultant): void { this.state.useConsultant(c); }

  /** The diagnosis, each bottleneck with the source lines around it (shown after the session has ended too). */
  report(d: Diagnosis): void {
    const bottlenecks = d.bottlenecks.map((b) => {
      const at = b.source ? parseSourceAt(b.source) : null;
      // named by the search's own listing of the program's functions
      const file = at ? this.state.noteModule(at.module, d.pid) : undefined;
      const ex = at && file ? excerpt(file, at.line) : null;
      return { hypothesis: b.hypothesis, focus: b.focus, value: b.value, threshold: b.threshold, source: b.source, thread: b.thread, ...(ex && at ? { excerpt: { file: at.module, line: at.line, ...ex } } : {}) };
    });
    this.state.setReport({ type: 'report', bottlenecks, text: renderDiagnosis(d) });
  }

  /** The last values to every page, then 'ended', then nothing listens. */
  async close(why: string): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.tick(true);
    this.broadcast({ type: 'ended', why });
    for (const ws of this.wss.clients) ws.close(1000, 'session ended');
    this.wss.close();
    await new Promise<void>((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
    // a socket whose close handshake does not finish is cut
    for (const ws of this.wss.clients) ws.terminate();
  }

  private tick(final = false): void {
    if (!this.wss.clients.size) return;
    const now = Date.now();
    const flame = final || now - this.flameAt >= 2000;
    if (flame) this.flameAt = now;
    for (const m of this.state.updates(flame)) this.broadcast(m);
  }

  private broadcast(m: ServerMsg): void {
    if (!this.wss.clients.size) return;
    const text = JSON.stringify(m);
    for (const ws of this.wss.clients) if (ws.readyState === WebSocket.OPEN) ws.send(text);
  }

  private send(ws: WebSocket, m: ServerMsg): void {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(m));
  }

  /** the token, and a Host that is this server (a page of another site that rebinds a name to 127.0.0.1 names itself) */
  private allowed(req: http.IncomingMessage): boolean {
    const host = req.headers.host ?? '';
    if (host !== `127.0.0.1:${this.port}` && host !== `localhost:${this.port}`) return false;
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${host}`) return false;
    const given = Buffer.from(new URL(req.url ?? '/', 'http://x').searchParams.get('token') ?? '');
    const want = Buffer.from(this.token);
    return given.length === want.length && crypto.timingSafeEqual(given, want);
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const headers = {
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'",
    };
    if (!this.allowed(req) || req.method !== 'GET') {
      res.writeHead(403, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' }).end('paranode: this page needs the token from the URL paranode printed\n');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://x');
    try {
      if (url.pathname === '/') {
        const html = fs.readFileSync(path.join(STATIC, 'index.html'), 'utf8').replaceAll('__PARANODE_TOKEN__', this.token);
        res.writeHead(200, { ...headers, 'Content-Type': 'text/html; charset=utf-8' }).end(html);
      } else if (TYPES[url.pathname]) {
        res.writeHead(200, { ...headers, 'Content-Type': TYPES[url.pathname] }).end(fs.readFileSync(path.join(STATIC, url.pathname.slice(1))));
      } else if (url.pathname === '/source') {
        const at = parseSourceAt(url.searchParams.get('at') ?? '');
        // only the program's own modules, as the resources listed them: not any file
        const file = at ? this.state.fileOf(at.module) : undefined;
        if (!at || !file) {
          res.writeHead(404, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' }).end(`paranode: no module of the program is "${url.searchParams.get('at')}" (expected <module>:<line>)\n`);
          return;
        }
        res.writeHead(200, { ...headers, 'Content-Type': 'text/html; charset=utf-8' }).end(sourcePage(file, at.module, at.line));
      } else {
        res.writeHead(404, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' }).end('paranode: not found\n');
      }
    } catch (e) {
      res.writeHead(500, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' }).end(`paranode: ${(e as Error).message}\n`);
    }
  }

  private connected(ws: WebSocket): void {
    for (const m of this.state.snapshot()) this.send(ws, m);
    ws.on('message', (data) => {
      let msg: ClientMsg;
      try {
        msg = JSON.parse(String(data));
      } catch {
        return;
      }
      void this.state.handle(msg).then((reply) => { if (reply) this.send(ws, reply); });
    });
    ws.on('error', () => undefined);
  }
}
