// The agent's relay, running in a worker thread of the target. It holds an
// inspector session to the main thread (connectToMainThread: messages are
// dispatched by interrupt, so the target answers even while it is busy) and
// relays CDP between it and the tool's Unix socket. No TCP port stays open.
//
// It is also the watchdog: if the tool goes away without saying goodbye, it
// puts the target back as it was on every thread (see watchdog() below), then
// ends by letting its event loop drain (never process.exit: a worker torn down
// with its inspector session's handles still alive can abort the process).
import { readlinkSync } from 'fs';
import * as inspector from 'inspector';
import * as net from 'net';
import { BroadcastChannel, parentPort, threadId, workerData } from 'worker_threads';
import { FORGET_REQUESTS } from '../inspector/safe-point';
import { CONDITION_URL } from '../instrument/breakpoint';
import { CLOSE_PORT } from './port-close';
import { exitChannel, ExitNotice, JoinNotice } from './worker-exit';

interface RelayData {
  socketPath: string; token: string; mainThreadId: number; connected: Int32Array; released: Int32Array; over: Int32Array;
  /** where the relay writes its thread's id in the OS (Linux), for the main thread to charge its CPU time to the observed cost */
  tid: Int32Array;
  /** the tool opened the inspector port for this attach: close it if the tool vanishes */
  openedPort: boolean;
  /** when the agent started (ms since the epoch): the runtime counts the tool's work from then */
  startedAt: number;
}

const data = workerData as RelayData;
// "<pid>/task/<tid>"; elsewhere than Linux none, and the relay's time is not counted
try { Atomics.store(data.tid, 0, Number(readlinkSync('/proc/thread-self').split('/').pop()) || 0); } catch { /* not Linux */ }
const session = new inspector.Session();
session.connectToMainThread();

/** LiveEdits the tool made, by thread session ('' for the main thread, else a NodeWorker sessionId): scriptId -> original text */
const plans = new Map<string, Map<string, string>>();
/** worker sessions the tool has through this session (NodeWorker domain) */
const workers = new Set<string>();
/** worker sessions announced waiting for the debugger at their start and not let go yet */
const waiting = new Set<string>();
/** the tool has gone (said goodbye and closed, or vanished): the relay lets waiting workers go itself */
let toolGone = false;

// A message for a worker that is gone aborts the process (see worker-exit.ts): a
// worker leaving by itself says so first; from then on nothing more is sent to it,
// and it is let go once every message forwarded to it before has reached it.
/** worker session -> its thread id, and back */
const workerOf = new Map<string, string>();
const sessionOf = new Map<string, string>();
/** worker session -> messages posted for it that the main thread has not dispatched yet */
const inFlight = new Map<string, number>();
/**
 * thread ids of workers leaving or gone -> the cell that lets a leaving one go (null once let go);
 * kept until the worker's session is detached (its notice may come before its session is announced)
 */
const leaving = new Map<string, Int32Array | null>();
/** thread id -> the cell of a worker that joined the session (set: the handshake is over for it) */
const joined = new Map<string, Int32Array>();
/** thread ids whose session is detached: nothing more reaches them */
const detachedIds = new Set<string>();
/** while the relay ends, a leaving worker is held until the main thread has taken the session down */
let holdLeaving = false;
const exits = new BroadcastChannel(exitChannel(data.token));
exits.onmessage = (e: unknown) => {
  const notice = (e as { data: ExitNotice | JoinNotice }).data;
  if ('over' in notice) {
    joined.set(notice.workerId, notice.over);
    if (detachedIds.has(notice.workerId) || ended) finishHandshake(notice.workerId);
    return;
  }
  const { workerId, cell } = notice;
  leaving.set(workerId, cell);
  const sessionId = sessionOf.get(workerId);
  if (!holdLeaving && (!sessionId || !inFlight.get(sessionId))) letGo(workerId);
};

/** Nothing more can reach this worker: it may exit without telling. */
function finishHandshake(workerId: string): void {
  detachedIds.add(workerId);
  const over = joined.get(workerId);
  if (!over) return;
  joined.delete(workerId);
  Atomics.store(over, 0, 1);
}
// (after onmessage, which refs it) the relay's life is the session's, not this channel's
exits.unref();

function letGo(workerId: string): void {
  const cell = leaving.get(workerId);
  if (!cell) return;
  leaving.set(workerId, null);
  Atomics.store(cell, 0, 1);
  Atomics.notify(cell, 0);
}

/** No more messages go anywhere: let every leaving worker go, and hear of no more. */
function closeExits(): void {
  for (const workerId of leaving.keys()) letGo(workerId);
  for (const workerId of [...joined.keys()]) finishHandshake(workerId);
  exits.close();
}

/** Is this worker session's thread leaving (no message may go to it any more)? */
const isLeaving = (sessionId: string): boolean => leaving.has(workerOf.get(sessionId) ?? '');

/**
 * A command of the NodeWorker domain about one worker session, counted while in
 * flight; refused (callback with an error) once its worker is leaving.
 */
function postAboutWorker(method: string, params: { sessionId: string }, cb: (err: any, result?: unknown) => void): void {
  const sessionId = params.sessionId;
  if (method === 'NodeWorker.sendMessageToWorker' && String((params as { message?: unknown }).message).includes('"Runtime.runIfWaitingForDebugger"')) waiting.delete(sessionId);
  if (isLeaving(sessionId)) { cb({ message: 'the worker thread is exiting', code: 'ERR_INSPECTOR_CLOSED' }); return; }
  inFlight.set(sessionId, (inFlight.get(sessionId) ?? 0) + 1);
  session.post(method, params, (err, result) => {
    const n = (inFlight.get(sessionId) ?? 1) - 1;
    if (n > 0) inFlight.set(sessionId, n); else inFlight.delete(sessionId);
    const workerId = workerOf.get(sessionId);
    if (method === 'NodeWorker.detach' && workerId !== undefined) finishHandshake(workerId);
    if (n <= 0 && workerId !== undefined && leaving.get(workerId) && !holdLeaving) letGo(workerId);
    cb(err, result);
  });
}

let goodbye = false;
let ended = false;

const sock = net.createConnection(data.socketPath);
const send = (msg: unknown) => { if (!sock.destroyed) sock.write(JSON.stringify(msg) + '\n'); };

sock.on('connect', () => {
  send({ hello: data.token, pid: process.pid, relayThreadId: threadId, cwd: process.cwd(), argv: process.argv, startedAt: data.startedAt });
  Atomics.store(data.connected, 0, 1);
  Atomics.notify(data.connected, 0);
});
sock.on('error', () => {
  // the tool is not there: release a waiting main thread
  Atomics.store(data.connected, 0, 2);
  Atomics.notify(data.connected, 0);
});

/** A breakpoint condition's copy of a thread, announced at each hit (see CONDITION_URL): the tool has no use for it. */
function conditionScript(m: any): boolean {
  if (m.method === 'Debugger.scriptParsed') return m.params?.url === CONDITION_URL;
  if (m.method !== 'NodeWorker.receivedMessageFromWorker') return false;
  const text = String(m.params?.message ?? '');
  if (!text.includes(CONDITION_URL)) return false;
  const inner = JSON.parse(text);
  return inner.method === 'Debugger.scriptParsed' && inner.params?.url === CONDITION_URL;
}

session.on('inspectorNotification', (m: any) => {
  if (conditionScript(m)) return;
  if (m.method === 'NodeWorker.attachedToWorker') {
    workers.add(m.params.sessionId);
    // the thread id, as a leaving worker names itself: NodeWorker's workerId is a numbering of its own
    const workerId = /\[worker (\d+)\]/.exec(m.params.workerInfo?.title ?? '')?.[1] ?? `?${m.params.sessionId}`;
    workerOf.set(m.params.sessionId, workerId);
    sessionOf.set(workerId, m.params.sessionId);
    if (m.params.waitingForDebugger) waiting.add(m.params.sessionId);
    if (toolGone) letRun(m.params.sessionId);
  } else if (m.method === 'NodeWorker.detachedFromWorker') {
    const workerId = workerOf.get(m.params.sessionId);
    if (workerId !== undefined) { letGo(workerId); leaving.delete(workerId); sessionOf.delete(workerId); finishHandshake(workerId); }
    workerOf.delete(m.params.sessionId);
    inFlight.delete(m.params.sessionId);
    workers.delete(m.params.sessionId);
    waiting.delete(m.params.sessionId);
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
    const reply = (err: any, result: unknown) => {
      if (err) send({ id: msg.id, error: { message: String(err.message ?? err).replace(/^Inspector error -?\d+: /, ''), code: err.code } });
      else send({ id: msg.id, result: result ?? {} });
    };
    if (typeof msg.method === 'string' && msg.method.startsWith('NodeWorker.') && typeof msg.params?.sessionId === 'string') postAboutWorker(msg.method, msg.params, reply);
    else session.post(msg.method, msg.params ?? {}, reply);
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
    postAboutWorker('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) } as { sessionId: string }, (err) => {
      if (err) { workerCalls.delete(id); resolve(null); }
    });
  }), null).finally(() => workerCalls.delete(id));
}

// (and the ids of the tool's requests that ran go, with its queued expressions that ran: FORGET_REQUESTS)
const DEACTIVATE = `(() => { const r = globalThis[Symbol.for('paranode.runtime')]; if (r) r.deactivate(); ${FORGET_REQUESTS}; })()`;

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

const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

/** Let a worker waiting for the debugger at its start run (nothing else is sent to it). */
function letRun(sessionId: string): void {
  if (!waiting.has(sessionId)) return;
  const message = JSON.stringify({ id: nextWorkerCall++, method: 'Runtime.runIfWaitingForDebugger', params: {} });
  postAboutWorker('NodeWorker.sendMessageToWorker', { sessionId, message } as { sessionId: string }, () => undefined);
}

const LIVE_WORKERS = `globalThis[Symbol.for('paranode.agent')]?.liveWorkers?.() ?? []`;

/**
 * The tool is gone: no worker may be left waiting for it, and each worker's
 * session is detached alone (NodeWorker.disable while a worker starts or waits
 * crashes the process, SIGSEGV on Node 22-26; a single session's detach does not).
 */
async function settleWorkers(): Promise<void> {
  toolGone = true;
  for (const w of [...waiting]) letRun(w);
  // a worker started while new ones had to wait is announced only once its thread runs:
  // every one the main thread has started is waited for (and let run when announced)
  const deadline = Date.now() + STEP_MS;
  for (;;) {
    const live: number[] = (await postMain('Runtime.evaluate', { expression: LIVE_WORKERS, returnByValue: true }))?.result?.value ?? [];
    if (live.every((id) => sessionOf.has(String(id)) || detachedIds.has(String(id))) || Date.now() > deadline) break;
    await sleep(10);
  }
  // A worker without the agent (not set up by the tool, or let run just now) cannot tell
  // of its exit, and a detach reaching it as it ends aborts the process: it is left to
  // end by itself (Node then detaches its session) or to join, for a while
  const joinedOrGone = () => [...workers].every((w) => joined.has(workerOf.get(w) ?? ''));
  while (!joinedOrGone() && Date.now() < deadline + STEP_MS) await sleep(10);
  await Promise.all([...workers].map((w) => new Promise((res) => postAboutWorker('NodeWorker.detach', { sessionId: w }, res))));
}

/** The tool vanished: put every thread back as it was, close the port it opened. */
async function watchdog(): Promise<void> {
  const done = new Set<string>();
  const undoWorkers = () => Promise.all([...workers].filter((w) => !done.has(w)).map((w) => {
    done.add(w);
    return undo((m, p) => postWorker(w, m, p), plans.get(w));
  }));
  // from now on a new worker does not wait for the debugger
  await postMain('NodeWorker.enable', { waitForDebuggerOnStart: false });
  await Promise.all([undo(postMain, plans.get('')), undoWorkers()]);
  // workers announced meanwhile (one may have been waiting for the debugger at its start)
  while ([...workers].some((w) => !done.has(w))) await undoWorkers();
  await settleWorkers();
  if (data.openedPort) {
    await postMain('Runtime.evaluate', {
      expression: CLOSE_PORT,
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
  // a worker leaving meanwhile waits until the main thread has taken its session down too
  holdLeaving = true;
  try { session.disconnect(); } catch { /* gone */ }
  sock.destroy();
  parentPort?.on('message', (m) => {
    if (m !== 'pong') return;
    closeExits();
    setImmediate(() => {
      parentPort?.removeAllListeners('message');
      parentPort?.unref();
    });
  });
  parentPort?.postMessage('ping');
}

sock.on('close', () => {
  if (ended) return;
  if (goodbye) { settleWorkers().catch(() => undefined).finally(end); return; }
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
  closeExits();
  Atomics.store(data.released, 0, 1);
  Atomics.notify(data.released, 0);
});
