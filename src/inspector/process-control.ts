// Starting the agent in a target: launch (preload, no TCP port at all) or
// attach (SIGUSR1 opens the inspector on 127.0.0.1:9229 just long enough to
// start the agent, then it is closed again).
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import type WebSocket from 'ws';
import type { AgentConfig, ToolIdentity } from '../agent/config';
import { AGENT_ENV } from '../agent/config';
import { CLOSE_PORT } from '../agent/port-close';
import { AgentConnection, AgentServer } from './agent-server';
import { Cdp, TargetGoneError, Transport } from './cdp';
import { attachDormant, toolIdentity } from './dormant-channel';
import { faultPoint } from './fault-injection';
import { dormantDir, ensureOwnDir, untrustedDir } from '../agent/dormant-dir';
import { AttachError, checkNodeProcess, checkSignalable, processAlive } from './pid-check';
import { PortGuard } from './port-guard';
import { targetStdio } from './target-stdio';

export { AttachError };

const AGENT_DIR = path.resolve(__dirname, '..', 'agent');
const INSPECTOR_PORT = 9229;

export interface LaunchResult { child: ChildProcess; agent: AgentConnection }

export async function launchTarget(server: AgentServer, command: string[], config: Omit<AgentConfig, 'socketPath' | 'token' | 'finalPath'>,
  stdio: 'inherit' | 'pipe', cwd?: string, timeoutMs = 15000): Promise<LaunchResult> {
  if (command.length === 0) throw new AttachError('nothing to run: give a command after --, e.g. paranode run -- node app.js');
  const full: AgentConfig = { ...config, socketPath: server.socketPath, token: server.token, finalPath: server.finalDir, nodeOptions: process.env.NODE_OPTIONS ?? null, tool: toolIdentity() };
  const preload = path.join(AGENT_DIR, 'preload.js');
  // in the tool's private directory, not the environment: any number of probes fits
  const configFile = path.join(server.dir, 'agent-config.json');
  fs.writeFileSync(configFile, JSON.stringify(full), { mode: 0o600 });
  const env = {
    ...process.env,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(preload)}`.trim(),
    [AGENT_ENV]: `@${configFile}`,
  };
  const own = stdio === 'inherit' ? targetStdio() : null;
  let child: ChildProcess;
  try {
    child = spawn(command[0], command.slice(1), { stdio: own?.stdio ?? [stdio, stdio, stdio], env, cwd });
  } finally {
    own?.close();
  }
  const exited = new Promise<string>((resolve) => {
    child.once('error', (e) => resolve(`cannot start ${command[0]}: ${e.message}`));
    child.once('exit', (code, sig) => resolve(`${command.join(' ')} exited (${sig ?? `code ${code}`}) before its agent connected; is it a Node.js program?`));
  });
  const agent = await server.waitForAgent(undefined, timeoutMs, exited);
  return { child, agent };
}

/**
 * What answers on the inspector port: `closed` only where nothing listens (the
 * connection is refused). A listener that is slow or does not answer as an
 * inspector is not taken for closed: a loaded target's inspector can take over
 * the half second to list its targets, and a close read from that let an attach
 * go on while the port was still open, to be closed under the next attach.
 */
type PortState = { state: 'closed' } | { state: 'open'; targets: any[] } | { state: 'unknown'; why: string };

function probePort(timeoutMs = 500): Promise<PortState> {
  return new Promise((resolve) => {
    const req = http.get(`http://127.0.0.1:${INSPECTOR_PORT}/json/list`, { timeout: timeoutMs }, (res) => {
      let d = '';
      res.on('data', (c) => (d += c));
      res.on('end', () => {
        let targets: unknown;
        try { targets = JSON.parse(d); } catch { /* not JSON */ }
        resolve(Array.isArray(targets) ? { state: 'open', targets } : { state: 'unknown', why: 'answers HTTP, not as a Node inspector' });
      });
      res.on('error', (e) => resolve({ state: 'unknown', why: e.message }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED' ? { state: 'closed' } : { state: 'unknown', why: e.message }));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The directory of the attach lock: one only this user can enter, so no other
 * user can hold the lock, and the same for every tool of this user whatever its
 * TMPDIR or XDG_RUNTIME_DIR (~/.cache/paranode; else the dormant agents'
 * directory): tools whose locks were in different places attached at once, and
 * one found port 9229 open by the other's target.
 */
function lockDir(): string {
  const dirs = [path.join(os.homedir(), '.cache', 'paranode'), dormantDir()];
  for (const [k, dir] of dirs.entries()) if (ensureOwnDir(dir, k === 0)) return dir;
  throw new AttachError(`no directory for the attach lock that only this user can enter: ${dirs.map((d) => untrustedDir(d)).join('; ')}`);
}

/**
 * This user's lock around the shared default inspector port: attaches of one
 * user take turns (the port is one per host; a port another user's attach has
 * open is found by the pid check and refused).
 */
export async function withPortLock<T>(fn: () => Promise<T>): Promise<T> {
  const lock = path.join(lockDir(), `inspector-${INSPECTOR_PORT}.lock`);
  const deadline = Date.now() + 20000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'owner'), String(process.pid));
      break;
    } catch (e: any) {
      if (e.code !== 'EEXIST') throw e;
      let owner = 0;
      try { owner = Number(fs.readFileSync(path.join(lock, 'owner'), 'utf8')); } catch { /* being written */ }
      let alive = true;
      if (owner) { try { process.kill(owner, 0); } catch { alive = false; } }
      // no owner written a second after it was made: its maker died between the two
      else { try { alive = Date.now() - fs.statSync(lock).mtimeMs < 1000; } catch { alive = false; } }
      if (!alive) { fs.rmSync(lock, { recursive: true, force: true }); continue; }
      if (Date.now() > deadline) throw new AttachError(`another paranode (pid ${owner}) has held the inspector port lock for 20 s`);
      await sleep(25);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

class WsTransport implements Transport {
  constructor(private readonly ws: WebSocket) {}
  send(text: string): void { this.ws.send(text); }
  onMessage(cb: (t: string) => void): void { this.ws.on('message', (d) => cb(d.toString())); }
  onClose(cb: () => void): void { this.ws.on('close', cb); }
  // no closing handshake: the port is closed by then, and a client socket left waiting for the
  // inspector's close frame (up to ws's 30 s) would keep the target's InspectorIo thread alive
  // with it. (The InspectorIo thread CI's soak runs found after the last detach was the port
  // itself, opened again after its close: see agent/port-close.ts.)
  close(): void { this.ws.terminate(); }
}

async function portClosed(): Promise<boolean> {
  return (await probePort()).state === 'closed';
}

/** exposureMs: how long the inspector port was open (from the signal to closed), if paranode opened it */
export interface AttachResult { agent: AgentConnection; openedPort: boolean; exposureMs?: number }

export async function attachTarget(server: AgentServer, pid: number, config: Omit<AgentConfig, 'socketPath' | 'token' | 'finalPath'>, timeoutMs = 10000): Promise<AttachResult> {
  checkNodeProcess(pid);
  // a dormant agent (node --import paranode/agent): no signal, no inspector port
  const dormant = await attachDormant(server, pid, { ...config, socketPath: server.socketPath, token: server.token, finalPath: server.finalDir }, timeoutMs)
    .catch((e: Error) => { throw new AttachError(e.message); });
  if (dormant) return { agent: dormant, openedPort: false };
  // port 9229 open for another process (its own debugging, or another user's tool): that is
  // often a moment's use, so wait for it to close, then try again; for good, it is an error
  const once = () => withPortLock(() => attachOnce(server, pid, config, timeoutMs));
  try {
    return await once();
  } catch (e) {
    if (!(e instanceof PortTaken)) throw e;
    for (const deadline = Date.now() + 3000; !(await portClosed());) {
      if (Date.now() > deadline) throw new AttachError(e.message);
      await sleep(25);
    }
    try { return await once(); } catch (again) { throw again instanceof PortTaken ? new AttachError(again.message) : again; }
  }
}

/** The inspector port belongs to another process. */
class PortTaken extends AttachError {}

async function attachOnce(server: AgentServer, pid: number, config: Omit<AgentConfig, 'socketPath' | 'token' | 'finalPath'>, timeoutMs: number): Promise<AttachResult> {
  {
    let port = await probePort();
    // a listener that is no inspector (or one that does not answer): the signal would only make
    // the target's inspector fail to bind, with a line on its stderr
    if (port.state === 'unknown') throw new PortTaken(`port ${INSPECTOR_PORT} is held by a process that does not answer as a Node inspector (${port.why})`);
    let openedPort = false;
    let guard: PortGuard | null = null;
    let signalledAt = 0;
    if (port.state === 'closed') {
      checkSignalable(pid);
      guard = PortGuard.start(pid, INSPECTOR_PORT);
      signalledAt = performance.now();
      (process as any)._debugProcess(pid);
      openedPort = true;
      const deadline = Date.now() + timeoutMs;
      while ((port = await probePort()).state !== 'open') {
        try { process.kill(pid, 0); } catch { throw new AttachError(`process ${pid} exited while its inspector was being opened`); }
        if (Date.now() > deadline) throw new AttachError(`the inspector of process ${pid} did not open on 127.0.0.1:${INSPECTOR_PORT} within ${timeoutMs} ms`);
        await sleep(5);
      }
    }
    await faultPoint('handshake');
    const url = port.targets[0]?.webSocketDebuggerUrl;
    if (!url) throw new AttachError(`the inspector on port ${INSPECTOR_PORT} lists no target`);
    // loaded here: only an attach through the signal's port needs it (~10-15 ms of every launch's start)
    const { default: WebSocketClient } = await import('ws');
    const ws = new WebSocketClient(url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      // a port open for another process that closed it as we connected: wait for it and try again
      ws.once('error', (e) => reject(openedPort ? new AttachError(`the inspector of process ${pid} on 127.0.0.1:${INSPECTOR_PORT} refused the connection: ${e.message}`)
        : new PortTaken(`port ${INSPECTOR_PORT} was open for another process, whose inspector refused the connection (${e.message})`)));
    });
    const cdp = new Cdp(new WsTransport(ws), { once: false });
    try {
      const full: AgentConfig = { ...config, socketPath: server.socketPath, token: server.token, finalPath: server.finalDir, nodeOptions: process.env.NODE_OPTIONS ?? null, openedPort, tool: toolIdentity() };
      const bootstrap = path.join(AGENT_DIR, 'bootstrap.js');
      const waiting = server.waitForAgent(pid, timeoutMs);
      waiting.catch(() => undefined);
      // one round trip: check the pid, start the agent, which closes the port the signal opened
      // (closing ends this session too; the agent's own session lives on); a process another
      // tool holds answers with that tool and is not changed
      const load = `process.getBuiltinModule('module').createRequire(${JSON.stringify(bootstrap)})(${JSON.stringify(bootstrap)})`;
      const startAgent = `process.pid !== ${pid} ? { pid: process.pid } : ${load}.start(${JSON.stringify(full)})`;
      let started: { pid: number; busy?: ToolIdentity };
      try {
        started = await cdp.evaluate<{ pid: number; busy?: ToolIdentity }>(startAgent);
      } catch (e) {
        // The agent closes the port, and this session with it, a turn of the event loop after
        // it starts: on a loaded machine the inspector's own thread may not have sent the answer
        // by then (CI: "Runtime.evaluate: the target is gone" here, twice). An agent that
        // started says so on its own socket, with its pid: waited for as a start's answer
        if (!(e instanceof TargetGoneError) || !processAlive(pid)) throw e;
        started = { pid: (await waiting.catch(() => { throw e; })).hello.pid };
      }
      if (started.pid !== pid) {
        throw new PortTaken(`port ${INSPECTOR_PORT} belongs to the inspector of process ${started.pid}, not ${pid}; stop that debugging session and retry`);
      }
      // a tool that has just detached: its relay ends a moment after
      for (let i = 0; started.busy && i < 20; i++) { await sleep(50); started = await cdp.evaluate(startAgent); }
      if (started.busy && openedPort) await cdp.evaluate(`${CLOSE_PORT}, 0`);
      if (openedPort) {
        const deadline = Date.now() + 3000;
        while (!(await portClosed())) {
          if (Date.now() > deadline) throw new AttachError(`could not close the inspector port of process ${pid}`);
          await sleep(5);
        }
      }
      if (started.busy) throw new AttachError(`process ${pid}: already attached by paranode (pid ${started.busy.pid}: ${started.busy.command})`);
      const exposureMs = performance.now() - signalledAt;
      const agent = await waiting;
      return openedPort ? { agent, openedPort, exposureMs } : { agent, openedPort };
    } finally {
      cdp.close();
      guard?.done();
    }
  }
}
