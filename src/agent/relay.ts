// The agent's relay, running in a worker thread of the target. It holds an
// inspector session to the main thread (connectToMainThread: messages are
// dispatched by interrupt, so the target answers even while it is busy) and
// relays CDP between it and the tool's Unix socket. No TCP port stays open.
// If the tool goes away without saying goodbye, the relay puts the target
// back as it was: original script sources, runtime switched off.
import * as inspector from 'inspector';
import * as net from 'net';
import { parentPort, threadId, workerData } from 'worker_threads';

interface RelayData { socketPath: string; token: string; mainThreadId: number; connected: Int32Array; released: Int32Array }

const data = workerData as RelayData;
const session = new inspector.Session();
session.connectToMainThread();

/** scriptId -> original source, for LiveEdits the tool made */
const restorePlan = new Map<string, string>();
let goodbye = false;

const sock = net.createConnection(data.socketPath);
const send = (msg: unknown) => { if (!sock.destroyed) sock.write(JSON.stringify(msg) + '\n'); };

sock.on('connect', () => {
  send({ hello: data.token, pid: process.pid, relayThreadId: threadId, cwd: process.cwd(), argv: process.argv });
  Atomics.store(data.connected, 0, 1);
  Atomics.notify(data.connected, 0);
});
sock.on('error', () => {
  // the tool is not there: release a waiting main thread
  Atomics.store(data.connected, 0, 2);
  Atomics.notify(data.connected, 0);
});

session.on('inspectorNotification', (m: any) => send(m));

let buf = '';
sock.on('data', (chunk) => {
  buf += chunk.toString('utf8');
  let nl: number;
  while ((nl = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    if (line) handle(JSON.parse(line));
  }
});

function handle(msg: any): void {
  if (msg.agent) {
    if (msg.agent === 'restore-plan') {
      // only the main thread's scripts: this session cannot reach workers' isolates
      if (msg.thread) { if (msg.id !== undefined) send({ id: msg.id, result: {} }); return; }
      for (const s of msg.scripts as { scriptId: string; source: string | null }[]) {
        if (s.source === null) restorePlan.delete(s.scriptId); else restorePlan.set(s.scriptId, s.source);
      }
    } else if (msg.agent === 'goodbye') {
      goodbye = true;
    }
    if (msg.id !== undefined) send({ id: msg.id, result: {} });
    return;
  }
  try {
    session.post(msg.method, msg.params ?? {}, (err: any, result: unknown) => {
      if (err) send({ id: msg.id, error: { message: String(err.message ?? err).replace(/^Inspector error -?\d+: /, ''), code: err.code } });
      else send({ id: msg.id, result: result ?? {} });
    });
  } catch (err: any) {
    // let go of at exit (see bootstrap's release)
    send({ id: msg.id, error: { message: String(err?.message ?? err), code: err?.code ?? 'ERR_INSPECTOR_NOT_CONNECTED' } });
  }
}

function post(method: string, params: object): Promise<void> {
  return new Promise((resolve) => session.post(method, params, () => resolve()));
}

async function restoreAndQuit(): Promise<void> {
  if (!goodbye) {
    // the tool vanished: undo what it did
    await post('Runtime.evaluate', { expression: `(() => { const r = globalThis[Symbol.for('paranode.runtime')]; if (r) r.deactivate(); })()` });
    await post('Debugger.enable', {});
    for (const [scriptId, source] of restorePlan) await post('Debugger.setScriptSource', { scriptId, scriptSource: source });
    await post('Debugger.disable', {});
  }
  session.disconnect();
  process.exit(0);
}

sock.on('close', () => { void restoreAndQuit(); });

// the main thread is exiting: let go of its inspector (its last values are written already)
parentPort?.on('message', (m) => {
  if (m !== 'exit') return;
  try { session.disconnect(); } catch { /* gone */ }
  Atomics.store(data.released, 0, 1);
  Atomics.notify(data.released, 0);
});
