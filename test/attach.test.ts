// Attach to a running process: LiveEdit slots, exact counts, clean detach.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import WebSocket from 'ws';
import { Interrupted, Session } from '../src/api';
import { CLOSE_PORT } from '../src/agent/port-close';
import { AttachError, withPortLock } from '../src/inspector/process-control';
import { deadline } from '../src/session/deadline';
import { CLI, FIXTURES, lineRequests, listensOnTcp, runNode, runNodeUntil, Target } from './support/helpers';

const counted = path.join(FIXTURES, 'counted.js');
const value = (s: Session, name: string) => s.value(name);

/** Read a script's source from the target the plain way (test oracle, not paranode). */
function scriptSourceOf(pid: number, file: string): Promise<string> {
  return withPortLock(() => readScriptSource(pid, file));
}

async function readScriptSource(pid: number, file: string): Promise<string> {
  const list = () => new Promise<any>((resolve) => http.get('http://127.0.0.1:9229/json/list', (r) => {
    let d = ''; r.on('data', (c) => (d += c)); r.on('end', () => resolve(JSON.parse(d)));
  }).on('error', () => resolve(null)));
  // another test's target may still have the port open (its tool killed at handshake, its port
  // guard closing it): the lock does not cover that
  for (let i = 0; i < 500 && (await list()); i++) await new Promise((r) => setTimeout(r, 20));
  (process as any)._debugProcess(pid);
  let targets: any;
  for (let i = 0; i < 200 && !targets; i++) {
    targets = await list();
    if (!targets) await new Promise((r) => setTimeout(r, 20));
  }
  assert.ok(targets, `the inspector of process ${pid} did not open`);
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  let id = 0;
  const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  let scriptId = '';
  ws.on('message', (m) => {
    const msg = JSON.parse(m.toString());
    if (msg.method === 'Debugger.scriptParsed' && msg.params.url.endsWith(file)) scriptId = msg.params.scriptId;
    if (msg.id) pending.get(msg.id)!.resolve(msg.result);
  });
  const closed = new Promise((r) => ws.once('close', r));
  void closed.then(() => { for (const p of pending.values()) p.reject(new Error('the inspector connection closed')); });
  const send = (method: string, params = {}) => new Promise<any>((resolve, reject) => { pending.set(++id, { resolve, reject }); ws.send(JSON.stringify({ id, method, params })); });
  const { result } = await send('Runtime.evaluate', { expression: 'process.pid' });
  assert.equal(result.value, pid, 'the oracle reached the process it signalled');
  await send('Debugger.enable');
  const { scriptSource } = await send('Debugger.getScriptSource', { scriptId });
  // closed the way paranode closes it: a close from a timer can be undone by the signal's second request (port-close.ts)
  await send('Runtime.evaluate', { expression: CLOSE_PORT });
  await closed;
  return scriptSource;
}

test('attach: exact counts through LiveEdit slots, then detach leaves the target as it was', async () => {
  const t = new Target(counted);
  after(() => t.kill());
  await t.waitFor(/ready/);
  const before = (await t.request('500', /done (\d+)/))[1];
  const s = await Session.attach(t.pid);
  assert.equal(listensOnTcp(t.pid), false, 'the inspector port is closed once the agent is connected');
  await s.probe('/Code/counted.js/f.entry: n++');
  await s.probe('/Code/counted.js/caller.call(f): sites++');
  await s.probe('/Code/counted.js/f.entry: if ($arg[0] > 10) big++');
  const during = (await t.request('500', /done (\d+)/))[1];
  await s.sample();
  assert.equal(value(s, 'n'), 500);
  assert.equal(value(s, 'sites'), 500);
  assert.equal(value(s, 'big'), 495);
  await s.detach();
  assert.equal(listensOnTcp(t.pid), false, 'detach leaves no port open');
  const afterDetach = (await t.request('500', /done (\d+)/))[1];
  assert.equal(during, before);
  assert.equal(afterDetach, before);
  assert.equal(await scriptSourceOf(t.pid, 'counted.js'), fs.readFileSync(counted, 'utf8'), 'original text restored byte for byte');
  assert.equal(t.err.includes('Error'), false, t.err);
});

test('attach leaves the target\'s stdout and stderr as they were (blocking pipes): its blocking writes stay whole, during the session and after', async () => {
  const t = new Target(path.join(FIXTURES, 'stdio-modes.js'));
  after(() => t.kill());
  const plain = (await t.waitFor(/ready: (.*)/))[1];
  assert.equal(plain, 'non-blocking stdout false, stderr false');
  const s = await t.attach();
  await s.probe('/Code/stdio-modes.js/report.entry: n++');
  assert.equal((await t.request('during', /during: (.*)/))[1], plain);
  assert.equal((await t.request('big', /big: (.*)/))[1], `${plain} wrote 1048576`);
  await s.sample();
  assert.equal(value(s, 'n'), 2);
  await s.detach();
  assert.equal((await t.request('after', /after: (.*)/))[1], plain);
});

test('two processes attached at once on one host', async () => {
  const a = new Target(counted);
  const b = new Target(counted);
  after(() => { a.kill(); b.kill(); });
  await Promise.all([a.waitFor(/ready/), b.waitFor(/ready/)]);
  const [sa, sb] = await Promise.all([Session.attach(a.pid), Session.attach(b.pid)]);
  await sa.probe('/Code/counted.js/f.entry: n++');
  await sb.probe('/Code/counted.js/f.entry: n++');
  await a.request('100', /done/);
  await b.request('250', /done/);
  await Promise.all([sa.sample(), sb.sample()]);
  assert.equal(value(sa, 'n'), 100);
  assert.equal(value(sb, 'n'), 250);
  await Promise.all([sa.detach(), sb.detach()]);
});

test('attach leaves a target started with --throw-deprecation running: paranode makes no deprecated call in it', async () => {
  const t = new Target(counted, [], ['--throw-deprecation']);
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await Session.attach(t.pid);
  await s.probe('/Code/counted.js/f.entry: n++');
  await t.request('25', /done/);
  await s.sample();
  assert.equal(value(s, 'n'), 25);
  await s.detach();
  await t.request('5', /done/);
  assert.equal(t.err.replace(/Debugger (listening|ending).*\n|For help, see.*\n|Debugger attached\.\n|Waiting for the debugger.*\n/g, ''), '');
});

test('two tools on one target: the second is refused, naming the first, and changes nothing; the first keeps its session', async () => {
  const t = new Target(counted);
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await Session.attach(t.pid);
  await s.probe('/Code/counted.js/f.entry: n++');
  // the second tool is another process: the CLI
  const second = runNode([CLI, 'attach', '-q', '-d', '60', '-p', '/Code/counted.js/f.entry: m++', String(t.pid)]);
  assert.notEqual(second.status, 0);
  assert.match(second.stderr, new RegExp(`process ${t.pid}: already attached by paranode \\(pid ${process.pid}: `));
  assert.equal(listensOnTcp(t.pid), false, 'the port the second tool opened is closed again');
  // and through the library, in this process
  await assert.rejects(Session.attach(t.pid), (e: Error) => e instanceof AttachError && e.message.includes(`already attached by paranode (pid ${process.pid}`));
  await t.request('40', /done/);
  await s.sample();
  assert.equal(value(s, 'n'), 40);
  await s.detach();
  // once the first has detached, the next attach is let in at once
  const again = await Session.attach(t.pid);
  await again.probe('/Code/counted.js/f.entry: n++');
  await t.request('7', /done/);
  await again.sample();
  assert.equal(value(again, 'n'), 7);
  await again.detach();
  assert.equal(listensOnTcp(t.pid), false);
});

test('a program launched by `paranode run` is held by that tool: an attach to it is refused, naming it', async () => {
  const s = await Session.launch([process.execPath, counted], ['/Code/counted.js/f.entry: n++'], { stdio: 'pipe', cwd: FIXTURES });
  after(() => s.child!.kill());
  const ask = lineRequests(s.child!);
  await ask('', /ready/);
  await assert.rejects(Session.attach(s.pid), (e: Error) => e instanceof AttachError && e.message.includes(`already attached by paranode (pid ${process.pid}`));
  await ask('12', /done/);
  await s.sample();
  assert.equal(value(s, 'n'), 12);
  assert.equal(listensOnTcp(s.pid), false);
});

test('another local user cannot hold the attach lock: it is taken in a directory only this user can enter', async () => {
  // acting as another user needs root (CI runs as root)
  assert.equal(process.getuid!(), 0, 'this test plays another local user through setpriv, which needs root');
  const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-shared-'));
  fs.chmodSync(shared, 0o1777);
  after(() => fs.rmSync(shared, { recursive: true, force: true }));
  // user nobody takes every name a tool could use there: the host-wide lock of old, and this user's own directory
  const other = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'mkdir', '-m', '777',
    path.join(shared, 'paranode-inspector-9229.lock'), path.join(shared, `paranode-${process.getuid!()}`)], { encoding: 'utf8' });
  assert.equal(other.status, 0, other.stderr);
  const t = new Target(counted);
  after(() => t.kill());
  await t.waitFor(/ready/);
  const saved = { TMPDIR: process.env.TMPDIR, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR };
  process.env.TMPDIR = shared;
  delete process.env.XDG_RUNTIME_DIR;
  try {
    // the directory the other user made is not trusted: the lock goes to ~/.cache/paranode, and the attach goes through
    const s = await Session.attach(t.pid);
    await s.probe('/Code/counted.js/f.entry: n++');
    await t.request('9', /done/);
    await s.sample();
    assert.equal(value(s, 'n'), 9);
    await s.detach();
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
  }
  // let go by this process (another test's attach, beside this one, may hold it now: it is this user's lock for every tool)
  let owner = '';
  try { owner = fs.readFileSync(path.join(os.homedir(), '.cache', 'paranode', 'inspector-9229.lock', 'owner'), 'utf8'); } catch { /* not held */ }
  assert.notEqual(owner, String(process.pid), 'the lock is let go');
});

test('an attach that prepares several scripts for one request says how far it is, script by script', async () => {
  const t = new Target(path.join(FIXTURES, 'metrics-target.js'));
  after(() => t.kill());
  await t.waitFor(/ready/);
  // a second script of the program's, loaded before the attach
  await t.request('load', /loaded/);
  // detached by SIGINT once placed (a --duration could end before the placement does on a busy machine)
  const r = await runNodeUntil([CLI, 'attach', String(t.pid), '-p', '/Code/*.js/*.entry: n++'], /paranode: probe 1 placed at/);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stderr.split('\n').filter((l) => /^paranode: preparing \S+ \(script \d+ of \d+\)$/.test(l));
  // the main thread's two scripts in turn, LiveEdited or (no LiveEdit: Node 26) registered for breakpoints;
  // the worker thread has one script, which needs no line
  assert.deepEqual(lines.map((l) => l.replace(/^paranode: preparing \S+ /, '')), ['(script 1 of 2)', '(script 2 of 2)'], r.stderr);
  assert.deepEqual(lines.map((l) => /preparing (\S+)/.exec(l)![1]).sort(), ['late-module.js', 'metrics-target.js']);
  assert.match(r.stderr, /paranode: SIGINT: detached/);
  assert.equal((await t.request('calls 3', /calls (\d+)/))[1], '3', 'the target runs on');
});

test('a session\'s signal stops a request between the scripts it prepares: what it did is said, later requests are refused, the target runs on', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-stop-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  for (let k = 0; k < 8; k++) fs.writeFileSync(path.join(dir, `m${k}.js`), `function g0(x) { return x + ${k}; }\nfunction g1(x) { return g0(x); }\nmodule.exports = { g0, g1 };\n`);
  const t = new Target(path.join(FIXTURES, 'many-modules.js'), [dir]);
  after(() => t.kill());
  await t.waitFor(/ready/);
  await t.request('load 0 8', /loaded 8/);
  // the signal ends as the first of the request's eight scripts is begun (as --duration's end would)
  const ac = new AbortController();
  const said: string[] = [];
  const s = await Session.attach(t.pid, { signal: ac.signal, progress: (m) => { said.push(m); if (/\(script 1 of \d+\)$/.test(m)) ac.abort(); } });
  after(() => s.detach());
  await assert.rejects(s.probe('/Code/**/m*.js/g0.entry: n++'), (e: Error) => e instanceof Interrupted && /^stopped preparing scripts for \S+ after 1 of 8: the session's time ended$/.test(e.message));
  assert.equal(said.filter((m) => /^preparing /.test(m)).length, 1, said.join('\n'));
  await assert.rejects(s.probe('/Code/**/m0.js/g1.entry: c++'), (e: Error) => e instanceof Interrupted && /not placed: the session's time ended$/.test(e.message));
  await s.sample();
  await s.detach();
  // the script prepared before the end, and the others, run as they did
  assert.equal((await t.request('call 0 4', /called (\d+)/))[1], '6');
  assert.equal((await t.request('call 7 4', /called (\d+)/))[1], '34');
});

test('--duration that ended before the target is reached (paranode\'s own start took it): said, and the target is not touched', async () => {
  const t = new Target(counted);
  after(() => t.kill());
  await t.waitFor(/ready/);
  for (const args of [['attach', String(t.pid), '-d', '0.001', '-p', '/Code/counted.js/f.entry: n++'], ['diagnose', '-d', '0.001', 'attach', String(t.pid)]]) {
    const r = runNode([CLI, ...args]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^paranode: --duration 0\.001 s ended before the target was reached \(paranode took \d+\.\d\d s to start\)\n$/);
  }
  // no inspector was opened: the signal that opens it was never sent (a round trip lets any such line arrive first)
  await t.request('1', /done/);
  assert.doesNotMatch(t.err, /Debugger listening/);
});

test('a --duration\'s end fires after garbage collections: its timer holds the signal (AbortSignal.timeout\'s, inside AbortSignal.any, was collected on Node 20 and a diagnose ran on)', async () => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  // as diagnose() combines it with the caller's signal: nothing else holds it
  const end = AbortSignal.any([deadline(100), new AbortController().signal]);
  const fired = new Promise<unknown>((r) => end.addEventListener('abort', () => r(end.reason), { once: true }));
  for (let i = 0; i < 5; i++) gc();
  // (its timer keeps no process alive, as AbortSignal.timeout's: a session's work does, here this)
  const alive = setInterval(() => undefined, 1000);
  const reason = await fired.finally(() => clearInterval(alive));
  assert.ok(reason instanceof DOMException && reason.name === 'TimeoutError', String(reason));
});

test('attach: a port 9229 that another process closes as the tool connects is waited for, then the attach goes on', async () => {
  const t = new Target(counted);
  after(() => t.kill());
  await t.waitFor(/ready/);
  // another program's inspector: it lists a target whose socket refuses (its port just closed), then closes
  const gone = http.createServer();
  await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
  const deadPort = (gone.address() as import('node:net').AddressInfo).port;
  await new Promise((r) => gone.close(r));
  let served = 0;
  const other = http.createServer((req, res) => {
    served++;
    res.end(JSON.stringify([{ webSocketDebuggerUrl: `ws://127.0.0.1:${deadPort}/gone` }]));
    other.close();
    other.closeAllConnections();
  });
  await withPortLock(() => new Promise<void>((r) => other.listen(9229, '127.0.0.1', r)));
  const s = await Session.attach(t.pid);
  after(() => s.detach());
  assert.equal(served, 1);
  await s.probe('/Code/counted.js/f.entry: n++');
  await t.request('500', /done (\d+)/);
  await s.sample();
  assert.equal(value(s, 'n'), 500);
});

test('attach: a port 9229 held by a listener that does not answer is not taken for closed: no signal until it is free, then the attach goes on', async () => {
  const t = new Target(counted);
  after(() => t.kill());
  await t.waitFor(/ready/);
  // something on 9229 that accepts and never answers; it lets go once the tool has given up on
  // its first connection (before, a silent port was read as closed: the signal then made the
  // target's inspector fail to bind, and the attach waited 10 s for a port that never opened)
  let connections = 0;
  const silent = net.createServer((socket) => {
    connections++;
    socket.on('error', () => undefined);
    socket.resume();
    socket.once('close', () => { silent.close(); });
  });
  await withPortLock(() => new Promise<void>((r) => silent.listen(9229, '127.0.0.1', r)));
  const s = await Session.attach(t.pid);
  after(() => s.detach());
  assert.ok(connections >= 1);
  await s.probe('/Code/counted.js/f.entry: n++');
  await t.request('500', /done (\d+)/);
  await s.sample();
  assert.equal(value(s, 'n'), 500);
  assert.doesNotMatch(t.err, /failed|address already in use/, 'the target\'s inspector never tried the held port');
});

test('attach to a program busy in long callbacks: the port the signal opened is closed for good, session after session', async () => {
  // Node's signal thread asks twice for the port; a close between the two was undone by the
  // second in 8 of 10 attaches to such a program (src/agent/port-close.ts)
  const t = new Target(path.join(FIXTURES, 'busy-port.js'), ['200']);
  after(() => t.kill());
  await t.waitFor(/ready/);
  for (let i = 1; i <= 5; i++) {
    const s = await Session.attach(t.pid);
    assert.equal((await s.probe('/Code/busy-port.js/f.entry: n++')).placed, 1);
    assert.equal((await t.request('300', /done (\d+)/))[1], String(300 * 301 / 2), `session ${i}: the program's result`);
    await s.sample();
    assert.equal(s.value('n'), 300, `session ${i}: exact count`);
    await s.detach();
    const state = JSON.parse((await t.request('state', /state (.*)\n/))[1]);
    assert.deepEqual(state, { url: null, opened: i }, `session ${i}: the port closed, and opened once per session`);
  }
  assert.equal(listensOnTcp(t.pid), false);
});

test('attach lists the program\'s functions from its files where they hold the text V8 compiled (its SHA-256), else from V8\'s text', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-names-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => fs.writeFileSync(path.join(dir, name), text);
  file('same.js', 'exports.alpha = function alpha(x) { return x + 1; };\nexports.beta = (x) => x * 2;\n');
  // a BOM (V8 compiles it with the text) and text outside ASCII (the hash is of UTF-8)
  file('bom.js', '\ufeff// café\nexports.gamma = function gamma(s) { return s + "é"; };\n');
  file('edited.js', 'exports.delta = function delta() { return 1; };\n');
  file('main.js', 'const m = [require("./same.js"), require("./bom.js"), require("./edited.js")];\n' +
    'setInterval(() => { m[0].alpha(1); m[0].beta(2); m[1].gamma("x"); m[2].delta(); }, 50);\nconsole.log("ready");\n');
  const t = new Target(path.join(dir, 'main.js'));
  after(() => t.kill());
  await t.waitFor(/ready/);
  // edited after it was loaded, to the same length: only the hash tells that V8 has another text
  file('edited.js', 'exports.omega = function omega() { return 1; };\n');
  const s = await t.attach();
  try {
    const mine = (list: { module: string; function: string }[]) => list.filter((f) => f.module.includes(path.basename(dir)))
      .map((f) => `${path.basename(f.module)}/${f.function}`).sort();
    const names = mine(await s.functionNames());
    assert.deepEqual(names, ['bom.js/gamma', 'edited.js/delta', 'main.js/<anonymous>@2', 'same.js/alpha', 'same.js/exports.beta'].sort(), JSON.stringify(names));
    const fetchedNow = () => [...(s as unknown as { threads: Map<number, { textsFetched: Set<string> }> }).threads.get(0)!.textsFetched].map((f) => path.basename(f)).sort();
    assert.deepEqual(fetchedNow(), ['edited.js'], 'V8\'s text fetched only where the file is not what V8 compiled');
    // the listing with points (what pricing and placing read) the same functions, from the same texts: nothing more fetched
    assert.deepEqual(mine(await s.resources('/Code/**')), names);
    assert.deepEqual(fetchedNow(), ['edited.js']);
    // several globs in one listing: each function any of them matches, once
    const globs = ['/Code/**/same.js/alpha', '/Code/**/bom.js/*', '/Code/**/same.js/*'];
    const each = (await Promise.all(globs.map(async (g) => mine(await s.resources(g))))).flat();
    assert.deepEqual(mine(await s.resources(globs)), [...new Set(each)].sort());
    assert.deepEqual(mine(await s.resources(globs)), ['bom.js/gamma', 'same.js/alpha', 'same.js/exports.beta']);
    // a probe is placed in V8's own text (a LiveEdit's or breakpoints' script), fetched then
    assert.equal((await s.probe('/Code/**/bom.js/gamma.entry: g++')).placed, 1);
    assert.deepEqual(fetchedNow(), ['bom.js', 'edited.js']);
  } finally {
    await s.detach();
  }
});
