// Starting the agent in a target: launch (preload, no TCP port at all) or
// attach (SIGUSR1 opens the inspector on 127.0.0.1:9229 just long enough to
// start the agent, then it is closed again).
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as os from 'os';
import * as path from 'path';
import WebSocket from 'ws';
import type { AgentConfig } from '../agent/config';
import { AGENT_ENV } from '../agent/config';
import { AgentConnection, AgentServer } from './agent-server';
import { Cdp, Transport } from './cdp';

export class AttachError extends Error {}

const AGENT_DIR = path.resolve(__dirname, '..', 'agent');
const INSPECTOR_PORT = 9229;

export interface LaunchResult { child: ChildProcess; agent: AgentConnection }

export async function launchTarget(server: AgentServer, command: string[], config: Omit<AgentConfig, 'socketPath' | 'token' | 'finalPath'>,
  stdio: 'inherit' | 'pipe', cwd?: string, timeoutMs = 15000): Promise<LaunchResult> {
  if (command.length === 0) throw new AttachError('nothing to run: give a command after --, e.g. paranode run -- node app.js');
  const full: AgentConfig = { ...config, socketPath: server.socketPath, token: server.token, finalPath: server.finalDir, nodeOptions: process.env.NODE_OPTIONS ?? null };
  const preload = path.join(AGENT_DIR, 'preload.js');
  const env = {
    ...process.env,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(preload)}`.trim(),
    [AGENT_ENV]: JSON.stringify(full),
  };
  const child = spawn(command[0], command.slice(1), { stdio: [stdio, stdio, stdio], env, cwd });
  const exited = new Promise<string>((resolve) => {
    child.once('error', (e) => resolve(`cannot start ${command[0]}: ${e.message}`));
    child.once('exit', (code, sig) => resolve(`${command.join(' ')} exited (${sig ?? `code ${code}`}) before its agent connected; is it a Node.js program?`));
  });
  const agent = await server.waitForAgent(undefined, timeoutMs, exited);
  return { child, agent };
}

/** Check that pid is a live Node.js process we may signal. */
export function checkNodeProcess(pid: number): void {
  if (!Number.isInteger(pid) || pid <= 0) throw new AttachError(`"${pid}" is not a process id`);
  try {
    process.kill(pid, 0);
  } catch (e: any) {
    if (e.code === 'ESRCH') throw new AttachError(`no process with pid ${pid}`);
    if (e.code === 'EPERM') throw new AttachError(`not allowed to attach to pid ${pid} (it belongs to another user)`);
    throw e;
  }
  if (pid === process.pid) throw new AttachError('paranode cannot attach to itself');
  if (os.platform() === 'linux') {
    let exe = '';
    let comm = '';
    try { exe = fs.readlinkSync(`/proc/${pid}/exe`); } catch { /* may be unreadable */ }
    try { comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim(); } catch { /* gone */ }
    const looksNode = /node/i.test(path.basename(exe)) || /node/i.test(comm) ||
      (exe !== '' && safeIncludes(`/proc/${pid}/maps`, 'libnode'));
    if (!looksNode) throw new AttachError(`process ${pid} (${comm || exe || 'unknown'}) is not a Node.js process`);
  }
}

function safeIncludes(file: string, needle: string): boolean {
  try { return fs.readFileSync(file, 'utf8').includes(needle); } catch { return false; }
}

function getJson(url: string, timeoutMs = 1000): Promise<any> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      let d = '';
      res.on('data', (c) => (d += c));
      res.on('end', () => { try { resolve(JSON.parse(d)); } catch (e) { reject(e); } });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Host-wide lock around the shared default inspector port. */
export async function withPortLock<T>(fn: () => Promise<T>): Promise<T> {
  const lock = path.join(os.tmpdir(), `paranode-inspector-${INSPECTOR_PORT}.lock`);
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
  close(): void { this.ws.close(); }
}

async function inspectorTargets(): Promise<any[] | null> {
  try { return await getJson(`http://127.0.0.1:${INSPECTOR_PORT}/json/list`, 500); } catch { return null; }
}

async function portClosed(): Promise<boolean> {
  return (await inspectorTargets()) === null;
}

export interface AttachResult { agent: AgentConnection; openedPort: boolean }

export async function attachTarget(server: AgentServer, pid: number, config: Omit<AgentConfig, 'socketPath' | 'token' | 'finalPath'>, timeoutMs = 10000): Promise<AttachResult> {
  checkNodeProcess(pid);
  return withPortLock(async () => {
    let targets = await inspectorTargets();
    let openedPort = false;
    if (targets === null) {
      (process as any)._debugProcess(pid);
      openedPort = true;
      const deadline = Date.now() + timeoutMs;
      while ((targets = await inspectorTargets()) === null) {
        try { process.kill(pid, 0); } catch { throw new AttachError(`process ${pid} exited while its inspector was being opened`); }
        if (Date.now() > deadline) throw new AttachError(`the inspector of process ${pid} did not open on 127.0.0.1:${INSPECTOR_PORT} within ${timeoutMs} ms`);
        await sleep(20);
      }
    }
    const url = targets[0]?.webSocketDebuggerUrl;
    if (!url) throw new AttachError(`the inspector on port ${INSPECTOR_PORT} lists no target`);
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
    const cdp = new Cdp(new WsTransport(ws));
    try {
      const remotePid = await cdp.evaluate<number>('process.pid');
      if (remotePid !== pid) {
        throw new AttachError(`port ${INSPECTOR_PORT} belongs to the inspector of process ${remotePid}, not ${pid}; stop that debugging session and retry`);
      }
      const full: AgentConfig = { ...config, socketPath: server.socketPath, token: server.token, finalPath: server.finalDir, nodeOptions: process.env.NODE_OPTIONS ?? null };
      const bootstrap = path.join(AGENT_DIR, 'bootstrap.js');
      const waiting = server.waitForAgent(pid, timeoutMs);
      await cdp.evaluate(`process.getBuiltinModule('module').createRequire(${JSON.stringify(bootstrap)})(${JSON.stringify(bootstrap)}).start(${JSON.stringify(full)})`);
      const agent = await waiting;
      if (openedPort) {
        // closing the port ends this bootstrap session too; the agent's session lives on
        await cdp.evaluate(`setTimeout(() => process.getBuiltinModule('inspector').close(), 0), 0`).catch(() => undefined);
        const deadline = Date.now() + 3000;
        while (!(await portClosed())) {
          if (Date.now() > deadline) throw new AttachError(`could not close the inspector port of process ${pid}`);
          await sleep(20);
        }
      }
      return { agent, openedPort };
    } finally {
      cdp.close();
    }
  });
}
