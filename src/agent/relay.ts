// The agent's relay, running in a worker thread of the target. It holds an
// inspector session to the main thread (connectToMainThread: messages are
// dispatched by interrupt, so the target answers even while it is busy) and
// relays CDP between it and the tool's Unix socket. No TCP port stays open.
//
// It is also the watchdog: if the tool goes away without saying goodbye, it
// puts the target back as it was on every thread (see watchdog() below), then
// ends by letting its event loop drain (never process.exit: a worker torn down
// with its inspector session's handles still alive can abort the process).
import * as inspector from 'inspector';
import * as net from 'net';
import { parentPort, threadId, workerData } from 'worker_threads';

interface RelayData {
  socketPath: string; token: string; mainThreadId: number; connected: Int32Array; released: Int32Array; over: Int32Array;
  /** the tool opened the inspector port for this attach: close it if the tool vanishes */
  openedPort: boolean;
}

const data = workerData as RelayData;
const session = new inspector.Session();
session.connectToMainThread();

/** LiveEdits the tool made, by thread session ('' for the main thread, else a NodeWorker sessionId): scriptId -> original text */
const plans = new Map<string, Map<string, string>>();
/** worker sessions the tool has through this session (NodeWorker domain) */
const workers = new Set<string>();
let goodbye = false;
let ended = false;

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

session.on('inspectorNotification', (m: any) => {
  if (m.method === 'NodeWorker.attachedToWorker') workers.add(m.params.sessionId);
  else if (m.method === 'NodeWorker.detachedFromWorker') {
    workers.delete(m.params.sessionId);
    plans.delete(m.params.sessionId);
    for (const [id, w] of workerCalls) if (w.sessionId === m.params.sessionId) { workerCalls.delete(id); w.resolve(null); }
  } else if (m.method === 'NodeWorker.receivedMessageFromWorker' && workerCalls.size) {
    const reply = JSON.parse(m.params.message);
    const w = workerCalls.get(reply.id);
    if (w) { workerCalls.delete(reply.id); w.resolve(reply.result ?? null); return; }
  }
  send(m);
});
// V8 pauses the main thread near its heap limit while the debugger is on: resume at
// once from here (the tool may be slow or gone), so the program dies or lives as it would have
session.on('Debugger.paused', (m: any) => { if (m.params?.reason === 'OOM') session.post('Debugger.resume', () => undefined); });

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
      const key = (msg.sessionId as string | undefined) ?? '';
      const plan = plans.get(key) ?? new Map<string, string>();
      plans.set(key, plan);
      for (const s of msg.scripts as { scriptId: string; source: string | null }[]) {
        if (s.source === null) plan.delete(s.scriptId); else plan.set(s.scriptId, s.source);
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

/** one step of the watchdog, at most this long: a thread that does not answer is not waited for */
const STEP_MS = 2000;

function bounded<T>(p: Promise<T>, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<T>((r) => { timer = setTimeout(() => r(fallback), STEP_MS); })]).finally(() => clearTimeout(timer));
}

/** A command to the main thread; its result, or null on error or timeout. */
function postMain(method: string, params: object): Promise<any> {
  return bounded(new Promise((resolve) => {
    try { session.post(method, params, (err, r) => resolve(err ? null : (r ?? {}))); } catch { resolve(null); }
  }), null);
}

/** ids of the watchdog's own calls into worker sessions: far above the tool's */
let nextWorkerCall = 1 << 30;
const workerCalls = new Map<number, { sessionId: string; resolve: (r: any) => void }>();

/** A command to a worker thread through its NodeWorker session. */
function postWorker(sessionId: string, method: string, params: object): Promise<any> {
  const id = nextWorkerCall++;
  return bounded(new Promise((resolve) => {
    workerCalls.set(id, { sessionId, resolve });
    session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) }, (err) => {
      if (err) { workerCalls.delete(id); resolve(null); }
    });
  }), null).finally(() => workerCalls.delete(id));
}

const DEACTIVATE = `(() => { const r = globalThis[Symbol.for('paranode.runtime')]; if (r) r.deactivate(); })()`;

/**
 * Undo in one thread what the tool did there: slots off (and the load hook out),
 * LiveEdited scripts back to their text (retried briefly while a function of
 * theirs is active), breakpoints out and the thread resumed if paused (both by
 * Debugger.disable), and a new worker let go if it waits for the debugger.
 */
async function undo(post: (method: string, params: object) => Promise<any>, plan: Map<string, string> | undefined): Promise<void> {
  await post('Runtime.evaluate', { expression: DEACTIVATE });
  if (plan?.size) {
    await post('Debugger.enable', {});
    for (const [scriptId, scriptSource] of plan) {
      const deadline = Date.now() + STEP_MS;
      for (;;) {
        const r = await post('Debugger.setScriptSource', { scriptId, scriptSource });
        if (!r || !r.status || r.status === 'Ok' || Date.now() > deadline) break;
        await new Promise((res) => setTimeout(res, 20));
      }
    }
  }
  await post('Debugger.disable', {});
  await post('Runtime.runIfWaitingForDebugger', {});
}

/** The tool vanished: put every thread back as it was, close the port it opened. */
async function watchdog(): Promise<void> {
  const done = new Set<string>();
  const undoWorkers = () => Promise.all([...workers].filter((w) => !done.has(w)).map((w) => {
    done.add(w);
    return undo((m, p) => postWorker(w, m, p), plans.get(w));
  }));
  await Promise.all([undo(postMain, plans.get('')), undoWorkers()]);
  // workers announced meanwhile (one may be waiting for the debugger at its start)
  while ([...workers].some((w) => !done.has(w))) await undoWorkers();
  // no more: a worker started from now on does not wait for the debugger
  await postMain('NodeWorker.disable', {});
  if (data.openedPort) {
    await postMain('Runtime.evaluate', {
      expression: `(() => { const i = process.getBuiltinModule('inspector'); if (i.url()) setTimeout(() => i.close(), 0); })()`,
    });
  }
}

/**
 * Let go of the main thread's inspector, then of everything that keeps this
 * thread alive: it ends on its own. Not at once: the main thread takes the
 * session down later (when it next runs its interrupts) and then calls back
 * into this thread's inspector; had this thread ended meanwhile, Node aborts
 * the process (MainThreadInterface::Post, Node 22-26). A ping the main thread
 * answers from its event loop comes back after that call.
 */
function end(): void {
  if (ended) return;
  ended = true;
  // the session is over: another tool may start the agent again
  Atomics.store(data.over, 0, 1);
  try { session.disconnect(); } catch { /* gone */ }
  sock.destroy();
  parentPort?.on('message', (m) => {
    if (m !== 'pong') return;
    setImmediate(() => {
      parentPort?.removeAllListeners('message');
      parentPort?.unref();
    });
  });
  parentPort?.postMessage('ping');
}

sock.on('close', () => {
  if (ended) return;
  if (goodbye) { end(); return; }
  watchdog().catch(() => undefined).finally(end);
});

// the main thread is exiting: let go of its inspector (its last values are written already)
parentPort?.on('message', (m) => {
  if (typeof m?.exit !== 'number') return;
  ended = true;
  Atomics.store(data.over, 0, 1);
  // the tool tells how the program ended from this (a signal leaves no such message)
  send({ method: 'Paranode.exit', params: { code: m.exit } });
  try { session.disconnect(); } catch { /* gone */ }
  sock.destroy();
  Atomics.store(data.released, 0, 1);
  Atomics.notify(data.released, 0);
});
