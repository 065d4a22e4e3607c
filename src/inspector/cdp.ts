// A typed Chrome DevTools Protocol client over any line or frame transport:
// the bootstrap WebSocket on attach, the agent's Unix socket afterwards, or a
// worker thread's session nested in its parent's (NodeWorker domain).
import { randomBytes } from 'crypto';
import { EventEmitter } from 'events';
import type { ProtocolMapping } from 'devtools-protocol/types/protocol-mapping';
import { duplicateEvaluations } from './fault-injection';
import { atSafePoint, FORGET_REQUESTS, once, runNow, settled, SAFE_POINT_WAIT_MS } from './safe-point';

/** Node's own NodeWorker domain (not in devtools-protocol's mapping) */
interface NodeWorkerCommands {
  'NodeWorker.enable': { paramsType: [{ waitForDebuggerOnStart: boolean }]; returnType: void };
  'NodeWorker.disable': { paramsType: []; returnType: void };
  'NodeWorker.detach': { paramsType: [{ sessionId: string }]; returnType: void };
  'NodeWorker.sendMessageToWorker': { paramsType: [{ sessionId: string; message: string }]; returnType: void };
}

export type Commands = ProtocolMapping.Commands & NodeWorkerCommands;
export type Method = keyof Commands;
export type Params<M extends Method> = Commands[M]['paramsType'][0];
export type Result<M extends Method> = Commands[M]['returnType'];

export interface Transport {
  send(text: string): void;
  onMessage(cb: (text: string) => void): void;
  onClose(cb: () => void): void;
  close(): void;
  /** a message for the agent, where it does not travel the CDP way (a worker's session: through its parent's) */
  agent?(command: string, extra: Record<string, unknown>): Promise<unknown>;
}

export class CdpError extends Error {
  constructor(readonly method: string, message: string, readonly code?: number | string) {
    super(`${method}: ${message}`);
  }
}

export class TargetGoneError extends Error {}

export interface CdpOptions {
  /**
   * Nudge a request not answered within this many ms with a no-op request
   * (`Runtime.getIsolateId`), at most one a period while any is pending. Node 26
   * sometimes leaves a message to an idle worker undelivered until the next
   * one arrives: the request after `Debugger.enable` waited 10 s in 1 of 6
   * attaches to a dormant target's idle worker (0 of 20 on Node 22 and 24);
   * a second message delivers both at once. The agent's own session to its main
   * thread (the relay's connectToMainThread) is a worker's session too: a
   * dormant target's idle main thread left the detach's `NodeWorker.enable`
   * unanswered for good in 1 of about 80 attaches on Node 26.
   */
  nudgeAfterMs?: number;
  /**
   * Each expression runs once in the thread however often its request arrives
   * (safe-point.ts once; default). Off for the attach's bootstrap session, one
   * idempotent request that must leave nothing behind in a process not ours.
   */
  once?: boolean;
}

/** How long a request to an idle thread waits before a nudge (see CdpOptions.nudgeAfterMs). */
export const IDLE_NUDGE_MS = 300;

export class Cdp extends EventEmitter {
  private nextId = 1;
  private readonly pending = new Map<number, { method: string; resolve: (v: any) => void; reject: (e: Error) => void; at: number }>();
  private nudging: NodeJS.Timeout | null = null;
  /**
   * The ids of this client's expressions (see safe-point.ts once): unique in the
   * target across clients and sessions, whose threads keep the ids that ran.
   */
  private readonly idPrefix = `${randomBytes(6).toString('hex')}.`;
  private nextDeferred = 1;
  /** each expression runs once in its thread (CdpOptions.once) */
  private readonly guarded: boolean;
  /** fault injection: every evaluation sent twice (guarded sessions: see request) */
  private readonly duplicate: boolean;
  /** the thread is paused in the debugger: no program code runs, and a deferred expression would wait for a resume */
  private paused = false;
  closed = false;

  constructor(private readonly transport: Transport, private readonly opts: CdpOptions = {}) {
    super();
    this.guarded = opts.once !== false;
    // the attach's bootstrap session, whose one request closes it, gets no copy: the copy was seen on the agent's
    this.duplicate = this.guarded && duplicateEvaluations();
    // every worker's session rides on its process's connection and listens for its close
    this.setMaxListeners(0);
    transport.onMessage((text) => this.receive(JSON.parse(text)));
    transport.onClose(() => this.markClosed());
    this.on('Debugger.paused', () => { this.paused = true; });
    this.on('Debugger.resumed', () => { this.paused = false; });
  }

  send<M extends Method>(method: M, params?: Params<M>): Promise<Result<M>> {
    return this.raw(method, params ?? {}) as Promise<Result<M>>;
  }

  /** A message for the agent itself (not CDP). */
  agent(command: string, extra: Record<string, unknown> = {}): Promise<unknown> {
    if (this.transport.agent) return this.transport.agent(command, extra);
    return this.request({ agent: command, ...extra }, `agent ${command}`);
  }

  raw(method: string, params: object): Promise<unknown> {
    return this.request({ method, params }, method);
  }

  private request(body: Record<string, unknown>, label: string): Promise<unknown> {
    if (this.closed) return Promise.reject(new TargetGoneError(`${label}: the target is gone`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { method: label, resolve, reject, at: performance.now() });
      const text = JSON.stringify({ id, ...body });
      this.transport.send(text);
      // (the copy's answer has the same id: it finds nothing pending, and is dropped)
      if (this.duplicate && body.method === 'Runtime.evaluate') this.transport.send(text);
      this.armNudge();
    });
  }

  private armNudge(): void {
    const after = this.opts.nudgeAfterMs;
    if (after === undefined || this.nudging || this.closed) return;
    this.nudging = setTimeout(() => {
      this.nudging = null;
      if (this.closed || !this.pending.size) return;
      const oldest = Math.min(...[...this.pending.values()].map((p) => p.at));
      // at most one a period, whatever is pending (a busy thread gets a few no-ops, answered when it is free)
      if (performance.now() - oldest >= after) this.raw('Runtime.getIsolateId', {}).catch(() => undefined);
      this.armNudge();
    }, after);
    this.nudging.unref();
  }

  /**
   * Evaluate an expression in the target and return its value (by value), at
   * the thread's next safe point (see safe-point.ts).
   */
  async evaluate<T = unknown>(expression: string, awaitPromise = false): Promise<T> {
    if (awaitPromise || this.paused) return this.evaluateNow<T>(expression, awaitPromise);
    const id = this.idPrefix + this.nextDeferred++;
    const first = this.resultValue<{ now: 1; v: T } | { deferred: 1 }>(await this.send('Runtime.evaluate', { expression: atSafePoint(id, expression, this.guarded), returnByValue: true, silent: true }));
    if ('now' in first) return first.v;
    // queued for the thread's event loop: its value, or after a wait, run on top of the program's code as every request ran before
    const answer = this.send('Runtime.evaluate', { expression: this.runOnce(settled(id), true), returnByValue: true, awaitPromise: true, silent: true })
      // the thread ended with the expression still waiting (a worker's last task ran): it is gone, no failure of the expression
      .catch((e) => { throw e instanceof CdpError && e.message.includes('Execution context was destroyed') ? new TargetGoneError(`Runtime.evaluate: the thread ended first`) : e; });
    // handled from the start: where the forced run below fails first, its rejection is nobody's to crash the tool with
    answer.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      answer.then((r) => ({ r })),
      new Promise<null>((res) => { timer = setTimeout(() => res(null), SAFE_POINT_WAIT_MS); }),
    ]).finally(() => clearTimeout(timer));
    if (waited) return this.resultValue<T>(waited.r);
    const box = this.resultValue<{ ok: 1; v: T } | null>(await this.send('Runtime.evaluate', { expression: runNow(id), returnByValue: true, silent: true }));
    if (box) return box.v; // its queued copy settles at the thread's next microtask checkpoint; nobody waits for it
    return this.resultValue<T>(await answer);
  }

  /**
   * Evaluate on top of whatever the thread runs, as its request arrives: for
   * expressions that run no regular expression (reads of the runtime's state,
   * its clock, the quiet point's hold and release) and must answer without
   * waiting for the event loop (a sample's time, a thread held at its start).
   */
  async evaluateNow<T = unknown>(expression: string, awaitPromise = false): Promise<T> {
    return this.resultValue<T>(await this.send('Runtime.evaluate', { expression: this.runOnce(expression, awaitPromise), returnByValue: true, awaitPromise, silent: true }));
  }

  /** `expression` to run once under a new id of this client's (see CdpOptions.once). */
  private runOnce(expression: string, kept: boolean): string {
    return !this.guarded ? expression : once(this.idPrefix + this.nextDeferred++, expression, kept);
  }

  /** The session's last request to the thread: it forgets the ids of the requests that ran (safe-point.ts). */
  async forgetRequests(): Promise<void> {
    if (this.guarded) await this.send('Runtime.evaluate', { expression: FORGET_REQUESTS, silent: true });
  }

  private resultValue<T>(r: Result<'Runtime.evaluate'>): T {
    if (r.exceptionDetails) {
      const ex = r.exceptionDetails.exception;
      const message = (ex && (ex.description ?? String(ex.value))) || r.exceptionDetails.text;
      // V8's termination exception: the thread is being torn down (a worker exiting, process.exit)
      if (message === 'illegal access') throw new TargetGoneError('Runtime.evaluate: the thread is terminating');
      throw new CdpError('Runtime.evaluate', message);
    }
    return r.result.value as T;
  }

  /** The requests not answered yet, oldest first, each with its age: what a stalled caller waits for. */
  pendingRequests(): string[] {
    const now = performance.now();
    return [...this.pending.values()].map((p) => `${p.method} (${Math.round(now - p.at)} ms)`);
  }

  close(): void {
    this.transport.close();
    this.markClosed();
  }

  private receive(msg: any): void {
    if (msg.id !== undefined && this.pending.has(msg.id)) {
      const p = this.pending.get(msg.id)!;
      this.pending.delete(msg.id);
      // the relay let go of the inspector: the target is exiting
      if (msg.error && /^ERR_INSPECTOR_(CLOSED|NOT_CONNECTED)$/.test(msg.error.code ?? '')) p.reject(new TargetGoneError(`${p.method}: the target is gone`));
      else if (msg.error) p.reject(new CdpError(p.method, msg.error.message, msg.error.code));
      else p.resolve(msg.result);
    } else if (msg.method) {
      this.emit(msg.method, msg.params);
      this.emit('event', msg.method, msg.params);
    }
  }

  private markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.nudging) clearTimeout(this.nudging);
    for (const p of this.pending.values()) p.reject(new TargetGoneError(`${p.method}: the target is gone`));
    this.pending.clear();
    this.emit('close');
  }
}
