// The port guard's process (see port-guard.ts): argv pid, port.
import * as http from 'http';
import WebSocket from 'ws';
import { CLOSE_PORT } from '../agent/port-close';

const [pid, port] = process.argv.slice(2).map(Number);
let said = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d: string) => { said += d; });
process.stdin.on('end', () => { if (!said.includes('done')) void closePort().finally(() => process.exit(0)); else process.exit(0); });
process.stdin.on('error', () => undefined);

function list(): Promise<{ webSocketDebuggerUrl?: string }[] | null> {
  return new Promise((resolve) => {
    const req = http.get(`http://127.0.0.1:${port}/json/list`, { timeout: 500 }, (res) => {
      let d = '';
      res.on('data', (c) => (d += c));
      res.on('end', () => { try { resolve(JSON.parse(d)); } catch { resolve(null); } });
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}

/** Wait up to 10 s for the port to open (the signal may still be on its way), then close it if it is pid's. */
async function closePort(): Promise<void> {
  const deadline = Date.now() + 10000;
  for (;;) {
    try { process.kill(pid, 0); } catch { return; }
    const targets = await list();
    const url = targets?.[0]?.webSocketDebuggerUrl;
    if (url) { await close(url); return; }
    if (Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

function close(url: string): Promise<void> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    const done = () => { try { ws.terminate(); } catch { /* gone */ } resolve(); };
    setTimeout(done, 5000).unref();
    ws.on('error', done);
    ws.on('close', done);
    ws.on('open', () => {
      // only the port of the process we signalled: another's debugging session is not ours to end
      const expression = `process.pid === ${pid} ? (${CLOSE_PORT}, true) : false`;
      ws.send(JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression } }));
    });
    ws.on('message', () => done());
  });
}
