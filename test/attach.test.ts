// Attach to a running process: LiveEdit slots, exact counts, clean detach.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { after, test } from 'node:test';
import WebSocket from 'ws';
import { Session } from '../src/api';
import { withPortLock } from '../src/inspector/process-control';
import { FIXTURES, Target } from './support/helpers';

const counted = path.join(FIXTURES, 'counted.js');
const value = (s: Session, name: string) => s.value(name);

/** Is the default inspector port open? Asked under paranode's own lock, so no other attach is half-way. */
function portOpen(): Promise<boolean> {
  return withPortLock(() => new Promise((resolve) => {
    http.get('http://127.0.0.1:9229/json/list', (r) => { r.resume(); resolve(true); }).on('error', () => resolve(false));
  }));
}

/** Read a script's source from the target the plain way (test oracle, not paranode). */
function scriptSourceOf(pid: number, file: string): Promise<string> {
  return withPortLock(() => readScriptSource(pid, file));
}

async function readScriptSource(pid: number, file: string): Promise<string> {
  (process as any)._debugProcess(pid);
  let list: any;
  for (let i = 0; i < 200 && !list; i++) {
    list = await new Promise((resolve) => http.get('http://127.0.0.1:9229/json/list', (r) => {
      let d = ''; r.on('data', (c) => (d += c)); r.on('end', () => resolve(JSON.parse(d)));
    }).on('error', () => resolve(null)));
    if (!list) await new Promise((r) => setTimeout(r, 20));
  }
  const ws = new WebSocket(list[0].webSocketDebuggerUrl);
  await new Promise((r) => ws.once('open', r));
  let id = 0;
  const pending = new Map<number, (v: any) => void>();
  let scriptId = '';
  ws.on('message', (m) => {
    const msg = JSON.parse(m.toString());
    if (msg.method === 'Debugger.scriptParsed' && msg.params.url.endsWith(file)) scriptId = msg.params.scriptId;
    if (msg.id) pending.get(msg.id)!(msg.result);
  });
  const send = (method: string, params = {}) => new Promise<any>((r) => { pending.set(++id, r); ws.send(JSON.stringify({ id, method, params })); });
  await send('Debugger.enable');
  const { scriptSource } = await send('Debugger.getScriptSource', { scriptId });
  const closed = new Promise((r) => ws.once('close', r));
  await send('Runtime.evaluate', { expression: `setTimeout(() => process.getBuiltinModule('inspector').close(), 0)` });
  await closed;
  return scriptSource;
}

test('attach: exact counts through LiveEdit slots, then detach leaves the target as it was', async () => {
  const t = new Target(counted);
  after(() => t.kill());
  await t.waitFor(/ready/);
  const before = (await t.request('500', /done (\d+)/))[1];
  const s = await Session.attach(t.pid);
  assert.equal(await portOpen(), false, 'the inspector port is closed once the agent is connected');
  await s.probe('/Code/counted.js/f.entry: n++');
  await s.probe('/Code/counted.js/caller.call(f): sites++');
  await s.probe('/Code/counted.js/f.entry: if ($arg[0] > 10) big++');
  const during = (await t.request('500', /done (\d+)/))[1];
  await s.sample();
  assert.equal(value(s, 'n'), 500);
  assert.equal(value(s, 'sites'), 500);
  assert.equal(value(s, 'big'), 495);
  await s.detach();
  assert.equal(await portOpen(), false, 'detach leaves no port open');
  const afterDetach = (await t.request('500', /done (\d+)/))[1];
  assert.equal(during, before);
  assert.equal(afterDetach, before);
  assert.equal(await scriptSourceOf(t.pid, 'counted.js'), fs.readFileSync(counted, 'utf8'), 'original text restored byte for byte');
  assert.equal(t.err.includes('Error'), false, t.err);
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
