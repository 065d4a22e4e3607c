// Finding a dormant agent (src/agent/dormant.ts) in a target and starting it:
// its Unix socket is named by pid in an owner-only directory, which the target
// chose from its own environment (read from /proc where we can, else ours).
// Nothing here signals the target or opens its inspector.
import * as fs from 'fs';
import * as net from 'net';
import * as os from 'os';
import type { AgentConfig, ToolIdentity } from '../agent/config';
import type { DormantReply, DormantRequest } from '../agent/dormant';
import { dormantDir, dormantSocket, untrustedDir } from '../agent/dormant-dir';
import type { AgentConnection, AgentServer } from './agent-server';

export class DormantAttachError extends Error {}

/** The sockets a dormant agent of `pid` may listen on, most likely first. */
export function dormantCandidates(pid: number): string[] {
  const dirs: string[] = [];
  if (os.platform() === 'linux') {
    try {
      const env: NodeJS.ProcessEnv = {};
      for (const kv of fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0')) {
        const eq = kv.indexOf('=');
        if (eq > 0) env[kv.slice(0, eq)] = kv.slice(eq + 1);
      }
      dirs.push(dormantDir(env));
    } catch { /* not readable: guess from ours */ }
  }
  dirs.push(dormantDir(process.env));
  return [...new Set(dirs)].filter((d) => untrustedDir(d) === null).map((d) => dormantSocket(d, pid));
}

/** This tool, as it is named to a second tool that finds the target held. */
export function toolIdentity(): ToolIdentity {
  return { pid: process.pid, command: process.argv.slice(1).join(' ') };
}

/**
 * Start the dormant agent of `pid`, if it has one: null when it has none (or
 * its socket is stale); throws when it has one that refuses (another tool holds it).
 * The returned connection's agent is the one that connected back to `server`;
 * the dormant socket stays open for the session and is
 * closed with the agent's connection.
 */
export async function attachDormant(server: AgentServer, pid: number, config: AgentConfig, timeoutMs = 10000): Promise<AgentConnection | null> {
  for (const file of dormantCandidates(pid)) {
    let st: fs.Stats;
    try { st = fs.lstatSync(file); } catch { continue; }
    if (!st.isSocket() || st.uid !== os.userInfo().uid) continue;
    const sock = await connect(file);
    if (!sock) continue;
    const waiting = agentOf(server, pid);
    try {
      const req: DormantRequest = { attach: config, tool: toolIdentity() };
      sock.write(JSON.stringify(req) + '\n');
      const reply = await firstLine(sock, timeoutMs);
      if (!reply) throw new DormantAttachError(`the dormant agent of process ${pid} did not answer within ${timeoutMs} ms`);
      if (!reply.ok) throw new DormantAttachError(`process ${pid}: ${reply.error}`);
      const agent = await Promise.race([waiting.agent, new Promise<null>((r) => { const t = setTimeout(() => r(null), timeoutMs); t.unref(); })]);
      if (!agent) throw new DormantAttachError(`the agent of process ${pid} did not connect within ${timeoutMs} ms`);
      // let go of the agent at once when the session closes its connection (detach), not when the relay has gone
      const close = agent.cdp.close.bind(agent.cdp);
      agent.cdp.close = () => { sock.destroy(); close(); };
      agent.cdp.on('close', () => sock.destroy());
      sock.unref();
      return agent;
    } catch (e) {
      sock.destroy();
      throw e;
    } finally {
      waiting.stop();
    }
  }
  return null;
}

/** The agent of `pid` once it connects to `server` (registered before it is asked to start, so it cannot be missed). */
function agentOf(server: AgentServer, pid: number): { agent: Promise<AgentConnection>; stop: () => void } {
  let on: (c: AgentConnection) => void = () => undefined;
  const agent = new Promise<AgentConnection>((resolve) => {
    on = (c) => { if (c.hello.pid === pid) resolve(c); };
    server.on('agent', on);
  });
  return { agent, stop: () => server.off('agent', on) };
}

function connect(file: string): Promise<net.Socket | null> {
  return new Promise((resolve) => {
    const sock = net.createConnection(file);
    sock.once('connect', () => { sock.removeAllListeners('error'); sock.on('error', () => { /* closes */ }); resolve(sock); });
    // ECONNREFUSED: a socket file left by a process that was killed
    sock.once('error', () => resolve(null));
  });
}

function firstLine(sock: net.Socket, timeoutMs: number): Promise<DormantReply | null> {
  return new Promise((resolve) => {
    let buf = '';
    const timer = setTimeout(() => done(null), timeoutMs);
    const done = (r: DormantReply | null) => { clearTimeout(timer); sock.off('data', onData); sock.off('close', onClose); resolve(r); };
    const onData = (c: Buffer) => {
      buf += c.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      try { done(JSON.parse(buf.slice(0, nl))); } catch { done(null); }
    };
    const onClose = () => done(null);
    sock.on('data', onData);
    sock.on('close', onClose);
  });
}
