// /SyncObject resources: files and message channels, with one vectorized
// placement per kind and a cell per instance, against real targets.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { Session } from '../src/api';
import { MetricManager } from '../src/metrics/manager';
import { FIXTURES, lineRequests, Target } from './support/helpers';

const target = path.join(FIXTURES, 'sync-objects.js');

/** A directory with the files the target reads (a.txt is written). */
function files(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-files-'));
  for (const f of ['b.txt', 'c.txt', 'd.txt']) fs.writeFileSync(path.join(dir, f), 'data\n');
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Wait (on events, bounded) until the session knows both worker threads. */
async function workers(s: Session): Promise<void> {
  const deadline = Date.now() + 30000;
  while (s.threadIds.length < 3) {
    if (Date.now() > deadline) throw new Error(`the workers never got their agents; notes: ${s.notes.join(' | ')}`);
    await new Promise((r) => { const timer = setTimeout(r, 1000); s.once('thread', () => { clearTimeout(timer); r(undefined); }); });
  }
}

async function launch(requests: { metric: string; focus?: string }[]) {
  const { session: s, manager: mm, instances } = await MetricManager.launch([process.execPath, target], requests, { stdio: 'pipe', cwd: FIXTURES });
  after(() => s.child!.kill());
  after(() => s.detach());
  const announced = new Set<string>();
  s.on('resources', (r: { resources: string[] }) => { for (const p of r.resources) announced.add(p); });
  const request = lineRequests(s.child!);
  await request('', /ready/);
  await workers(s);
  return { s, mm, instances, request, announced };
}

const byFocus = (mm: MetricManager, name: string) => new Map(mm.values().filter((v) => v.name === name).map((v) => [v.focus, v.total]));

test('files: fs_calls per file from one placement, exact per instance, shared, summed over the kind; sync_io per file within the calls\' time', async () => {
  const dir = files();
  const F = `/SyncObject/File${dir}`;
  const { s, mm, instances, request, announced } = await launch([{ metric: 'fs_calls', focus: `${F}/*` }]);
  assert.equal(instances.length, 0, 'no file is touched before the first command');
  const io = await mm.enableAll('sync_io', `${F}/*`);
  assert.equal(io.length, 0);
  const d = await mm.enable('fs_calls', `${F}/d.txt`);
  const kind = await mm.enable('fs_calls', '/SyncObject/File');
  // in /SyncObject, * matches across /: every file
  await mm.enableAll('fs_calls', '/SyncObject/File/*');
  const [, msA, msB, msD] = (await request('files ' + dir + ' 50', /files (\S+) (\S+) (\S+)\n/)).map(Number);
  await s.sample();
  const calls = byFocus(mm, 'fs_calls');
  // writeFileSync's own openSync/writeSync/closeSync are Node's, not the program's: 1 call each
  assert.equal(calls.get(`${F}/a.txt`), 50);
  assert.equal(calls.get(`${F}/b.txt`), 50);
  assert.equal(calls.get(`${F}/c.txt`), 50, 'fs.promises.readFile, by path');
  // openSync by path, readSync and closeSync by descriptor
  assert.equal(calls.get(`${F}/d.txt`), 52);
  assert.equal(d.value().total, 52);
  // (the target's own script, read by the workers' loader, is a file too)
  const every = [...calls].filter(([f]) => f.startsWith('/SyncObject/File/'));
  assert.ok(every.some(([f]) => f === `/SyncObject/File${target}`), `files: ${every.map(([f]) => f).join(', ')}`);
  assert.equal(kind.value().total, every.reduce((a, [, v]) => a + v, 0), 'the kind sums every file');
  for (const p of ['a.txt', 'b.txt', 'c.txt', 'd.txt']) assert.ok(announced.has(`${F}/${p}`), `${p} announced`);
  assert.ok(s.syncObjects().some((o) => o.path === `${F}/d.txt` && o.threads.includes('main')));

  const time = byFocus(mm, 'sync_io');
  assert.equal(time.has(`${F}/c.txt`), false, 'fs.promises is not synchronous I/O');
  // within the time the target measured around each call; most of it where the call does real
  // work (a write). A 4-byte readSync by descriptor takes less than finding the descriptor's file
  // does, and reading a 4-byte file by path about as long as finding the path's file: 0.23-0.77 of
  // the calls' time over 8 runs on Node 22/24/26, and 0.094 once in a fresh-clone CI run (Node 26), so only a
  // twentieth is asked of it
  for (const [f, ms, most] of [['a.txt', msA, 0.3], ['b.txt', msB, 0.05], ['d.txt', msD, 0]] as const) {
    const v = time.get(`${F}/${f}`)!;
    assert.ok(v > most * ms / 1000 && v <= ms / 1000, `sync_io ${f} ${v} s in calls timed at ${ms} ms`);
  }

  // the instances share one placement: it goes with its last user
  await mm.disable(kind);
  await mm.disable(d);
  await request('files ' + dir + ' 10', /files/);
  await s.sample();
  assert.equal(byFocus(mm, 'fs_calls').get(`${F}/d.txt`), 64);
  const left = mm.all.filter((i) => i.metric.name === 'fs_calls');
  for (const i of left) await mm.disable(i);
  for (const i of mm.all) await mm.disable(i);
  assert.deepEqual(mm.all, []);
  await request('files ' + dir + ' 10', /files/);
  await s.sample();
  assert.deepEqual(s.metrics().filter((m) => m.name.startsWith('_pn')), []);
});

test('message channels: msgs and msg_bytes per channel, from both ends, with a thread or a procedure constraint too', async () => {
  const { s, mm, request, announced } = await launch([{ metric: 'msgs', focus: '/SyncObject/Message/*' }]);
  const bytes = await mm.enableAll('msg_bytes', '/SyncObject/Message/*');
  assert.equal(bytes.length, 0, 'Node\'s own messages (loading the workers, their stdio) are not channels of the program');
  const [, t1, t2] = await request('chan 3 5 4 6', /chan (\d+) (\d+)\n/);
  const main = await mm.enableAll('msgs', `/SyncObject/Message/*,/Thread/${s.pid}/main`);
  await request('chan 1 2 0 0', /chan/);
  await s.sample();
  const n = byFocus(mm, 'msgs');
  const M = '/SyncObject/Message';
  // each worker answers every message over its parentPort: the same channel, seen from the other end
  assert.equal(n.get(`${M}/worker/${t1}`), 2 * 4);
  assert.equal(n.get(`${M}/worker/${t2}`), 2 * 7);
  assert.equal(n.get(`${M}/port/1`), 4);
  assert.equal(n.get(`${M}/broadcast/news`), 6);
  assert.equal(n.get(`${M}/worker/${t1},/Thread/${s.pid}/main`), 1);
  assert.equal(n.get(`${M}/worker/${t2},/Thread/${s.pid}/main`), 2);
  assert.deepEqual(main.map((i) => i.focus), [], 'instances appear as channels are used');
  assert.deepEqual([...n.keys()].filter((k) => !k.includes(',')).sort(), [`${M}/broadcast/news`, `${M}/port/1`, `${M}/worker/${t1}`, `${M}/worker/${t2}`].sort());
  const b = byFocus(mm, 'msg_bytes');
  assert.equal(b.get(`${M}/port/1`), 4 * 10);
  assert.equal(b.get(`${M}/broadcast/news`), 6 * 7);
  assert.equal(b.get(`${M}/worker/${t1}`), 8 * 4, "'ping' and 'pong'");
  for (const c of [`worker/${t1}`, `worker/${t2}`, 'port/1', 'broadcast/news']) assert.ok(announced.has(`${M}/${c}`), `${c} announced`);
});

test('attached: channels of workers that started before, and bad /SyncObject requests', async () => {
  const t = new Target(target);
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await Session.attach(t.pid);
  after(() => s.detach());
  await workers(s);
  const mm = new MetricManager([s]);
  await mm.enableAll('msgs', '/SyncObject/Message/*');
  const one = await mm.enable('msgs', '/SyncObject/Message/broadcast/news');
  const [, t1, t2] = await t.request('chan 2 3 1 1', /chan (\d+) (\d+)\n/);
  await s.sample();
  const n = byFocus(mm, 'msgs');
  assert.equal(n.get(`/SyncObject/Message/worker/${t1}`), 4);
  assert.equal(n.get(`/SyncObject/Message/worker/${t2}`), 6);
  assert.equal(one.value().total, 1);
  await assert.rejects(mm.enableAll('msgs', '/SyncObject/File/*'), /metric msgs cannot be constrained to \/SyncObject\/File\/\*: it allows .*msgs_on \(\/SyncObject\/Message\)/);
  await assert.rejects(mm.enable('cpu', '/SyncObject/Message/port/1'), /metric cpu cannot be constrained to \/SyncObject\/Message\/port\/1/);
  await assert.rejects(mm.enable('msgs', '/SyncObject/Message/*'), /stands for every instance matching \/SyncObject\/Message\/\*: use enableAll/);
  await assert.rejects(mm.enableAll('msgs', '/SyncObject/Message/a,/SyncObject/File/b'), /names two resources of \/SyncObject/);
});
