// The dormant agent: `node --require paranode/agent app.js` (or --import, or in NODE_OPTIONS).
// Every module the program loads is prepared at load (slots at every point,
// all off, through module.registerHooks); nothing else runs. The main thread
// listens on a Unix socket named by its pid in an owner-only directory (see
// dormant-dir.ts), unref'd: no TCP port, no timer, nothing that keeps the
// process alive. `paranode attach <pid>` connects there, hands over its
// AgentServer's socket, token and configuration, and the agent starts as on
// attach (bootstrap's start: the relay connects back to the tool); probes are
// then placed by switching slots only. One tool at a time: the tool keeps this
// connection open for its session, a second one is told who holds it. On
// detach the runtime deactivates: slots off, the load hook stays (dormant again).
//
// Worker threads: the entry runs in each (execArgv and NODE_OPTIONS are
// inherited) and prepares the worker's modules the same way, slots off, with no
// socket of its own; on attach the tool starts the agent in every worker through
// the main thread's inspector session (NodeWorker), as for any attach.
// first: decides whether this thread is ours and switches V8's code cache on before the rest loads
import { dormantHere } from './dormant-thread';
import * as fs from 'fs';
import * as net from 'net';
import { fileURLToPath } from 'url';
import { AgentConfig, ToolIdentity } from './config';
import { dormantSocket, ensureDormantDir } from './dormant-dir';
import { withHeldTicks } from './held-ticks';
import { installLoadHooks } from './hooks';
import { scaleInliningBudgets } from './inlining-budget';
import { forgetOwnModules, isOwnCode, ownCodeDirs } from './own-code';
import { install } from './runtime';
import { isMainThread } from './thread-kind';

/** What a tool sends first on the dormant socket (one JSON line). */
export interface DormantRequest { attach: AgentConfig; tool: ToolIdentity }
/** The agent's answer (one JSON line). */
export type DormantReply = { ok: true; pid: number } | { ok: false; error: string; holder?: ToolIdentity };

if (dormantHere) {
  try {
    const rt = install();
    rt.active = false; // slots off (deactivate() is for a session's end: it clears what a session made)
    rt.preparedFromFirstLine = nothingLoadedBefore();
    installLoadHooks(rt, { always: true });
    if (isMainThread()) {
      scaleInliningBudgets((t) => rt.note(t));
      listen();
    }
  } catch (e) {
    process.stderr.write(`paranode: dormant agent not started: ${(e as Error).message}\n`);
  }
  forgetOwnModules();
}

/**
 * No module of the program loaded in this thread before this one: none in require's
 * cache but paranode's, and no other preload on the command line or in NODE_OPTIONS
 * (an --import before ours loads ES modules that cache does not list). Where one may
 * have, the tool switches the debugger on at attach to reach those modules.
 */
function nothingLoadedBefore(): boolean {
  const preloads = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader']);
  const own = ownCodeDirs();
  if (Object.keys(require.cache).some((f) => !isOwnCode(f, own))) return false;
  const args = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean)];
  const ours = (spec: string): boolean => {
    try {
      return isOwnCode(spec.startsWith('file:') ? fileURLToPath(spec) : require.resolve(spec, { paths: [process.cwd()] }), own);
    } catch {
      return false;
    }
  };
  for (let i = 0; i < args.length; i++) {
    const eq = args[i].indexOf('=');
    const flag = eq > 0 ? args[i].slice(0, eq) : args[i];
    if (!preloads.has(flag)) continue;
    const spec = eq > 0 ? args[i].slice(eq + 1) : args[++i] ?? '';
    if (!ours(spec)) return false;
  }
  return true;
}

function listen(): void {
  const dir = ensureDormantDir();
  if (!dir) return; // no directory we can trust: not attachable this way (attach falls back to the inspector)
  const file = dormantSocket(dir, process.pid);
  // a socket left by an earlier process with this pid (killed before its exit handler ran)
  try { fs.unlinkSync(file); } catch { /* none */ }
  const server = net.createServer((sock) => {
    sock.unref();
    sock.on('error', () => { /* the tool went away */ });
    let buf = '';
    const onData = (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl < 0) { if (buf.length > 1 << 20) sock.destroy(); return; }
      sock.off('data', onData);
      const reply = (r: DormantReply) => sock.write(JSON.stringify(r) + '\n');
      let req: DormantRequest;
      try { req = JSON.parse(buf.slice(0, nl)); } catch { sock.destroy(); return; }
      take(sock, req, reply);
    };
    sock.on('data', onData);
  });
  // one tool at a time (bootstrap's start refuses while another's session lasts)
  const take = (sock: net.Socket, req: DormantRequest, reply: (r: DormantReply) => void, tries = 20) => {
    try {
      const { start } = require('./bootstrap') as typeof import('./bootstrap');
      const { busy } = start({ ...req.attach, tool: req.tool });
      forgetOwnModules();
      if (busy) {
        // the last tool's relay ends a moment after its connection closed: wait for that, briefly
        if (tries > 0) { setTimeout(() => take(sock, req, reply, tries - 1), 50).unref(); return; }
        reply({ ok: false, error: `already attached by paranode (pid ${busy.pid}: ${busy.command})`, holder: busy });
        sock.end();
        return;
      }
    } catch (e) {
      reply({ ok: false, error: `the agent did not start: ${(e as Error).message}` });
      sock.end();
      return;
    }
    reply({ ok: true, pid: process.pid });
  };
  server.on('error', () => { /* cannot listen: not attachable this way */ });
  // 'listening' comes in a nextTick, queued before the program's first line under --require (held-ticks.ts)
  const owned = () => { try { fs.chmodSync(file, 0o600); } catch { /* the directory is owner-only anyway */ } };
  withHeldTicks(() => listenExclusive(server, file, owned));
  server.unref();
  process.on('exit', () => { try { fs.unlinkSync(file); } catch { /* gone */ } });
}

/**
 * `server.listen(path, cb)` without Node's cluster support: listen() loads the
 * cluster module (with child_process, ~9 ms of start-up) only to ask whether this
 * process is a cluster worker, and a worker's listen would be made by its primary.
 * This socket is this process's alone, so it takes listen's own exclusive path
 * (`_listen2`, the name Node keeps for it so that wrappers keep working), where the
 * running Node has it.
 */
function listenExclusive(server: net.Server, file: string, cb: () => void): void {
  const s = server as net.Server & { _listen2?: (address: string, port: number, addressType: number, backlog?: number) => void; _pipeName?: string };
  // only Node's own alias (not a deprecation wrapper, which would print a warning, nor a tool's patch)
  if (typeof s._listen2 !== 'function' || s._listen2.name !== 'setupListenHandle') { server.listen({ path: file, exclusive: true }, cb); return; }
  s._pipeName = file;
  server.once('listening', cb);
  s._listen2(file, -1, -1);
}
