// A Prometheus endpoint for a session: GET /metrics on 127.0.0.1 in the text
// exposition format (written by prom-client), asking for a bearer token as
// every listener of paranode does. A scrape reads the session's last sample.
// prom-client is loaded when an endpoint opens: the CLI does not pay for it otherwise.
import * as crypto from 'crypto';
import * as http from 'http';
import type * as PromClient from 'prom-client';
import { FAMILIES, readingsOf, type Reading, type ReadingSource } from './readings';

export interface MetricsEndpointOptions {
  /** 0 (the default): any free port */
  port?: number;
  /** the bearer token a scrape must send; a random one by default */
  token?: string;
}

export class MetricsEndpoint {
  readonly token: string;
  private readonly registry: PromClient.Registry;
  private readonly sources = new Set<ReadingSource>();
  private closed = false;

  private constructor(private readonly server: http.Server, readonly port: number, token: string, prom: typeof PromClient) {
    this.token = token;
    const { Counter, Gauge, Registry } = prom;
    this.registry = new Registry();
    for (const [name, f] of Object.entries(FAMILIES)) {
      const family = name as Reading['family'];
      const read = () => [...this.sources].flatMap((s) => readingsOf(s)).filter((r) => r.family === family);
      if (f.kind === 'gauge') {
        new Gauge({ name, help: f.help, labelNames: [...f.labels], registers: [this.registry], collect() { this.reset(); for (const r of read()) this.set(r.labels, r.value); } });
      } else {
        new Counter({ name, help: f.help, labelNames: [...f.labels], registers: [this.registry], collect() { this.reset(); for (const r of read()) this.inc(r.labels, r.value); } });
      }
    }
    server.on('request', (req, res) => { void this.serve(req, res); });
  }

  /** Listen on 127.0.0.1 (a port in use is said so, with what to do). */
  static async open(opts: MetricsEndpointOptions = {}): Promise<MetricsEndpoint> {
    if (opts.token !== undefined && opts.token.length < 16) throw new Error('a Prometheus endpoint\'s token must be at least 16 characters');
    const prom = await import('prom-client');
    const server = http.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e: NodeJS.ErrnoException) => {
        reject(new Error(e.code === 'EADDRINUSE'
          ? `the Prometheus port ${opts.port} on 127.0.0.1 is in use (choose another with --prometheus, or 0 for any free one)`
          : `the Prometheus endpoint could not listen on 127.0.0.1:${opts.port ?? 0}: ${e.message}`));
      });
      server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
    });
    return new MetricsEndpoint(server, (server.address() as { port: number }).port, opts.token ?? crypto.randomBytes(24).toString('base64url'), prom);
  }

  get url(): string { return `http://127.0.0.1:${this.port}/metrics`; }

  /** Serve what this source measures (a session, with its metric manager and call paths). */
  add(source: ReadingSource): void { this.sources.add(source); }

  remove(source: ReadingSource): void { this.sources.delete(source); }

  private authorized(req: http.IncomingMessage): boolean {
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const given = Buffer.from(m?.[1] ?? '');
    const want = Buffer.from(this.token);
    return given.length === want.length && crypto.timingSafeEqual(given, want);
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/metrics') { res.writeHead(404, { 'Content-Type': 'text/plain' }).end('paranode serves /metrics only\n'); return; }
    if (!this.authorized(req)) {
      res.writeHead(401, { 'Content-Type': 'text/plain', 'WWW-Authenticate': 'Bearer realm="paranode"' }).end('paranode: a scrape needs the bearer token paranode printed (Authorization: Bearer <token>)\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') { res.writeHead(405, { Allow: 'GET, HEAD' }).end(); return; }
    try {
      const body = await this.registry.metrics();
      res.writeHead(200, { 'Content-Type': this.registry.contentType, 'Cache-Control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body);
    } catch (e) {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`paranode: ${(e as Error).message}\n`);
    }
  }

  /** Stop listening; a scrape after this finds no port. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
