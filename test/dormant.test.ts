// The dormant agent (node --import paranode/agent): attached at any later time
// through its owner-only Unix socket, probes placed by switching slots only
// (no SIGUSR1, no inspector port, no LiveEdit, no breakpoint), one tool at a
// time, dormant again after detach; the program's output unchanged; the
// start-up cache of prepared code.
import assert from 'node:assert/strict';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { AttachError, Session } from '../src/api';
import { dormantDir, dormantSocket } from '../src/agent/dormant-dir';
import { cacheLimit, DEFAULT_CACHE_MAX_MB, pruneCache } from '../src/agent/cache-prune';
import { PreparedCache } from '../src/agent/prepared-cache';
import { decodeRest, encodeRest, forgetDecoded, readOnce } from '../src/agent/prepared-codec';
import { prepareForLoad, prepareModuleForLoad } from '../src/instrument/transform';
import { AGENT, FIXTURES, lineRequests, listensOnTcp, ROOT, runNode, Target } from './support/helpers';

const target = path.join(FIXTURES, 'dormant-target.js');
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-dormant-test-'));
// targets inherit this: their cache goes to a private directory, not the user's
process.env.PARANODE_CACHE_DIR = path.join(TMP, 'cache');
after(() => fs.rmSync(TMP, { recursive: true, force: true }));

/** f is called n times by "n": the sum it prints is n(n-1). */
const sum = (n: number) => n * (n - 1);

/** The socket the dormant agent of pid listens on (this process's environment is the target's). */
const socketOf = (pid: number) => dormantSocket(dormantDir(), pid);

async function socketAppears(pid: number, child: Target): Promise<void> {
  // the agent listens before the program's first line; "ready" comes after that line
  await child.waitFor(/ready/);
  for (let i = 0; i < 500 && !fs.existsSync(socketOf(pid)); i++) await new Promise((r) => setImmediate(r));
  assert.ok(fs.existsSync(socketOf(pid)), `no socket at ${socketOf(pid)}`);
}

test('dormant: a warm start loads none of Node\'s modules that only a session uses (crypto, worker_threads, perf_hooks), nor the 5 MB of counter cells; a cold one hashes the preparing code with crypto', () => {
  const dir = path.join(TMP, 'load-list-cache');
  const env = { ...process.env, PARANODE_CACHE_DIR: dir };
  const run = (args: string[]) => {
    const r = spawnSync(process.execPath, [...args, 'load-list.js'], { cwd: FIXTURES, encoding: 'utf8', env });
    assert.equal(r.status, 0, r.stderr);
    const [, loaded, buffers] = /^loaded: \[(.*)\]\narrayBuffers: (\d+)\n$/.exec(r.stdout)!;
    return { loaded, buffers: Number(buffers) };
  };
  assert.equal(run(['-r', AGENT]).loaded, 'crypto');
  const plain = run([]);
  assert.equal(plain.loaded, '', 'nor does the plain program');
  for (let i = 0; i < 2; i++) {
    const warm = run(['-r', AGENT]);
    assert.equal(warm.loaded, '');
    // (the cells are 5 MB; what is left over plain is the cache's reads, not yet collected)
    assert.ok(warm.buffers - plain.buffers < 1 << 20, `${warm.buffers} bytes of ArrayBuffers against ${plain.buffers} plainly`);
  }
});

test('dormant: attached later, a probe counts exactly by slot; no inspector port, no signal; detach and attach again', async () => {
  // a warm start: the script comes from the prepared-code cache, its functions decoded at the
  // first attach, let go at detach and decoded again at the next
  assert.equal(runNode(['--import', AGENT, target]).status, 0);
  const t = new Target(target, [], ['--import', AGENT]);
  after(() => t.kill());
  await socketAppears(t.pid, t);
  const dir = fs.statSync(path.dirname(socketOf(t.pid)));
  assert.equal(dir.mode & 0o777, 0o700, 'the socket directory is owner-only');
  assert.equal(dir.uid, os.userInfo().uid);
  await t.request('1000', new RegExp(`done ${sum(1000)}\\n`));

  const s = await Session.attach(t.pid);
  assert.equal(s.usedInspectorPort, false);
  const r = await s.probe('/Code/dormant-target.js/f.entry: n++');
  assert.deepEqual({ bySlot: r.bySlot, byBreakpoint: r.byBreakpoint, byWrapping: r.byWrapping, notPlaced: r.notPlaced }, { bySlot: 1, byBreakpoint: 0, byWrapping: 0, notPlaced: 0 });
  await t.request('777', new RegExp(`done ${sum(777)}\\n`));
  await s.sample();
  assert.equal(s.value('n'), 777);
  assert.equal(listensOnTcp(t.pid), false, 'no inspector port during the session');
  assert.equal((await t.request('inspector', /inspector (\w+)/))[1], 'closed', 'the target\'s inspector was never opened');
  assert.deepEqual(s.notes.filter((n) => /LiveEdit|breakpoint/i.test(n)), []);
  await s.detach();

  // dormant again: slots off (the program's result is the same), and attachable again, counting from zero
  await t.request('50', new RegExp(`done ${sum(50)}\\n`));
  const s2 = await Session.attach(t.pid);
  const r2 = await s2.probe('/Code/dormant-target.js/caller.entry: c++');
  assert.equal(r2.bySlot, 1);
  await s2.probe('/Code/dormant-target.js/f.entry: n++');
  await t.request('3', new RegExp(`done ${sum(3)}\\n`));
  await t.request('4', new RegExp(`done ${sum(4)}\\n`));
  await s2.sample();
  assert.equal(s2.value('c'), 2);
  assert.equal(s2.value('n'), 7);
  await s2.detach();
  assert.equal(listensOnTcp(t.pid), false);
  assert.equal((await t.request('inspector', /inspector (\w+)/))[1], 'closed');
  assert.equal(t.err, '');
});

test('dormant: the debugger stays off where every module was prepared at load (Debugger.enable would stop the thread to announce every script); with a preload before the agent it goes on', async () => {
  for (const before of [false, true]) {
    const t = new Target(target, [], [...(before ? ['-r', './preload-before.js'] : []), '--import', AGENT]);
    after(() => t.kill());
    await socketAppears(t.pid, t);
    const s = await Session.attach(t.pid);
    assert.equal((await s.probe('/Code/dormant-target.js/f.entry: n++')).bySlot, 1);
    await t.request('30', new RegExp(`done ${sum(30)}\\n`));
    await s.sample();
    assert.equal(s.value('n'), 30);
    const off = s.notes.some((n) => /^main thread: every module was prepared at load, so the debugger stays off/.test(n));
    // the module loaded before the agent is the program's too: reached through the debugger
    assert.equal(off, !before, JSON.stringify(s.notes));
    if (before) assert.deepEqual((await s.resources('/Code/preload-before.js/*')).map((r) => r.path), ['/Code/preload-before.js/marker']);
    await s.detach();
    await t.request('3', new RegExp(`done ${sum(3)}\\n`));
    assert.equal(t.err, '');
  }
});

test('dormant: call sites switched on while their function runs (an async loop that never returns) count every call after the switch', async () => {
  const t = new Target(path.join(FIXTURES, 'running-loop.js'), [], ['--import', AGENT]);
  after(() => t.kill());
  await socketAppears(t.pid, t);
  for (let i = 0; i < 3; i++) await t.request('go', new RegExp(`turn ${i}\\n`));
  const s = await Session.attach(t.pid);
  assert.equal((await s.probe('/Code/running-loop.js/main.call(tick): n++')).bySlot, 1);
  assert.equal((await s.probe('/Code/running-loop.js/main.call(tick) postInsn: r++')).bySlot, 1);
  for (let i = 3; i < 8; i++) await t.request('go', new RegExp(`turn ${i}\\n`));
  await s.sample();
  assert.equal(s.value('n'), 5, 'pre-call: every call after the switch');
  assert.equal(s.value('r'), 5, 'post-call');
  await s.detach();
  await t.request('go', /turn 8\n/);
  assert.equal(t.err, '');
});

test('dormant: a script list longer than one part of the runtime\'s answers (modules loaded before and after attach, two larger than a part) names every function once, in order; a probe in the last module counts exactly', async () => {
  // 12 modules of 300 functions, but m3 of 2,500 and m9 of 1,200: the runtime answers in parts
  // of at most 1,000 functions (Runtime.functionsOf) and 4,000 names (Runtime.scriptIndexSince), a module larger than that in several
  const size = (k: number) => (k === 3 ? 2500 : k === 9 ? 1200 : 300);
  const dir = fs.mkdtempSync(path.join(TMP, 'many-'));
  for (let k = 0; k < 12; k++) {
    const fns = Array.from({ length: size(k) }, (_, i) => `function g${i}(x) { return x + ${i}; }`);
    fs.writeFileSync(path.join(dir, `m${k}.js`), `${fns.join('\n')}\nmodule.exports = { ${fns.map((_, i) => `g${i}`).join(', ')} };\n`);
  }
  const t = new Target(path.join(FIXTURES, 'many-modules.js'), [dir], ['--import', AGENT]);
  after(() => t.kill());
  await socketAppears(t.pid, t);
  t.send('load 0 8');
  await t.waitFor(/loaded 8\n/);
  const s = await Session.attach(t.pid);
  const listed = async () => (await s.resources('/Code/**')).filter((r) => /\/m\d+\.js$/.test(r.module));
  const names = async () => (await listed()).map((r) => r.path);
  // one module first: only its script's functions are fetched (in three parts), the modules named by the index alone
  const m3 = (await s.modules()).find((m) => m.module.endsWith('/m3.js'))!.module;
  assert.equal((await s.modules()).filter((m) => /\/m\d+\.js$/.test(m.module)).length, 8);
  const one = await s.resources(`/Code/${m3}/*`);
  assert.deepEqual(one.map((r) => r.function), Array.from({ length: 2500 }, (_, i) => `g${i}`));
  assert.deepEqual(await s.resources(`/Code/${m3}`), [], 'a module is no function');
  const before = await names();
  assert.equal(before.length, 7 * 300 + 2500);
  assert.equal(new Set(before).size, before.length, 'no function listed twice');
  // loaded after attach: the tool's copy is brought up to date with what was added only
  t.send('load 8 12');
  await t.waitFor(/loaded 12\n/);
  const resources = await listed();
  const all = resources.map((r) => r.path);
  assert.equal(all.length, 10 * 300 + 2500 + 1200);
  assert.equal(new Set(all).size, all.length);
  // a module's functions in source order across the parts it came in: g<i> on line i + 1
  for (const k of [3, 9]) {
    const fns = resources.filter((r) => r.module.endsWith(`/m${k}.js`));
    assert.equal(fns.length, size(k));
    assert.ok(fns.every((r, i) => r.function === `g${i}` && r.line === i + 1), `m${k}.js: functions out of order`);
  }
  const last = all.find((p) => p.endsWith('m11.js/g0'))!;
  assert.ok(last, 'a function of the last module is named');
  assert.equal((await s.probe(`${last}.entry: n++`)).bySlot, 1);
  t.send('call 11 250');
  await t.waitFor(new RegExp(`called ${(250 * 249) / 2}\n`));
  await s.sample();
  assert.equal(s.value('n'), 250);
  await s.detach();
  assert.equal(t.err, '');
});

test('dormant: a second tool gets an error naming the first; the first keeps its session', async () => {
  const t = new Target(target, [], ['--import', AGENT]);
  after(() => t.kill());
  await socketAppears(t.pid, t);
  const s = await Session.attach(t.pid);
  await s.probe('/Code/dormant-target.js/f.entry: n++');
  // the second tool is another process: the CLI
  const second = runNode([path.join(ROOT, 'dist', 'src', 'cli', 'main.js'), 'attach', '-q', '-d', '60', String(t.pid)]);
  assert.notEqual(second.status, 0);
  assert.match(second.stderr, new RegExp(`process ${t.pid}: already attached by paranode \\(pid ${process.pid}: `));
  // and through the library, in this process
  await assert.rejects(Session.attach(t.pid), (e: Error) => e instanceof AttachError && e.message.includes(`already attached by paranode (pid ${process.pid}`));
  await t.request('10', new RegExp(`done ${sum(10)}\\n`));
  await s.sample();
  assert.equal(s.value('n'), 10);
  await s.detach();
  assert.equal(listensOnTcp(t.pid), false);
});

test('dormant: installed as a package, `--import paranode/agent` in NODE_OPTIONS; a worker thread is prepared too', async () => {
  const app = path.join(TMP, 'app');
  fs.mkdirSync(path.join(app, 'node_modules'), { recursive: true });
  fs.symlinkSync(ROOT, path.join(app, 'node_modules', 'paranode'));
  fs.copyFileSync(target, path.join(app, 'dormant-target.js'));
  const child: ChildProcess = spawn(process.execPath, ['dormant-target.js'], {
    cwd: app, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '--import paranode/agent' },
  });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d) => { err += d; });
  after(() => child.kill());
  const ask = lineRequests(child);
  await ask('', /ready/);
  await ask('start worker', /worker online/);
  assert.ok(fs.existsSync(socketOf(child.pid!)));
  const s = await Session.attach(child.pid!);
  assert.equal(s.usedInspectorPort, false);
  const r = await s.probe('/Code/dormant-target.js/f.entry: n++');
  // main thread and worker: both by slot
  assert.deepEqual({ bySlot: r.bySlot, byBreakpoint: r.byBreakpoint, notPlaced: r.notPlaced }, { bySlot: 2, byBreakpoint: 0, notPlaced: 0 }, s.notes.join('\n'));
  await ask('worker 30', new RegExp(`worker done ${sum(30)}\\n`));
  await ask('5', new RegExp(`done ${sum(5)}\\n`));
  await s.sample();
  assert.equal(s.value('n'), 35);
  assert.equal(s.value('n', 'main'), 5);
  await s.detach();
  assert.equal(listensOnTcp(child.pid!), false);
  await ask('stop worker', /worker stopped/);
  child.stdin!.end();
  const code = await new Promise((r) => child.once('exit', r));
  assert.equal(code, 0);
  assert.equal(err, '');
  assert.equal(fs.existsSync(socketOf(child.pid!)), false, 'the socket is removed at exit');
});

test('dormant: an idle worker answers at every attach (Node 26 can leave a message to it undelivered until the next: the tool nudges)', async () => {
  // a target with a worker that has just gone idle, attached: without the nudge, 1 attach in 6 on Node 26
  // (two at a time) waited 10 s for the worker and placed the probe in the main thread only
  const once = async (i: number) => {
    const child = spawn(process.execPath, ['--import', AGENT, target], { cwd: FIXTURES, stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const ask = lineRequests(child);
      await ask('', /ready/);
      await ask('start worker', /worker online/);
      const t0 = performance.now();
      const s = await Session.attach(child.pid!);
      const r = await s.probe('/Code/dormant-target.js/f.entry: n++');
      const ms = performance.now() - t0;
      assert.equal(r.bySlot, 2, `attach ${i}: ${s.notes.join('; ')}`);
      assert.ok(ms < 5000, `attach ${i} took ${ms.toFixed(0)} ms: ${s.notes.join('; ')}`);
      await ask(`worker ${i}`, new RegExp(`worker done ${sum(i)}\\n`));
      await s.sample();
      assert.equal(s.value('n'), i);
      await s.detach();
    } finally {
      child.kill();
    }
  };
  for (let i = 1; i <= 8; i += 2) await Promise.all([once(i), once(i + 1)]);
});

test('dormant: the program prints byte for byte what it prints plainly, cold and warm cache; it exits by itself', () => {
  for (const program of ['esprima-run.js', 'marked-run.js']) {
    const plain = runNode([program]);
    assert.equal(plain.status, 0);
    const cold = runNode(['--import', AGENT, program]);
    const entries = fs.readdirSync(process.env.PARANODE_CACHE_DIR!).length;
    const warm = runNode(['--import', AGENT, program]);
    assert.equal(fs.readdirSync(process.env.PARANODE_CACHE_DIR!).length, entries, 'the warm run found every script in the cache');
    for (const run of [cold, warm]) {
      assert.equal(run.status, plain.status, program);
      assert.equal(run.stderr, plain.stderr, program);
      assert.ok(run.stdout === plain.stdout, `${program}: output differs`);
    }
  }
  assert.ok(fs.readdirSync(process.env.PARANODE_CACHE_DIR!).some((f) => f.endsWith('.pnc')), 'cache entries written');
  assert.equal(fs.statSync(process.env.PARANODE_CACHE_DIR!).mode & 0o777, 0o700);
});

test('dormant: V8\'s code for the prepared modules is cached in paranode\'s directory (a warm start compiles from it); a compile cache of the program\'s own, NODE_DISABLE_COMPILE_CACHE, NODE_V8_COVERAGE and PARANODE_CODE_CACHE=off leave it off', () => {
  const cacheRoot = path.join(TMP, 'code-cache');
  const prog = path.join(TMP, 'compile-cache-dir.js');
  fs.writeFileSync(prog, "const m = require('module');\nfunction twice(x) { return x * 2; }\nconsole.log(JSON.stringify([m.getCompileCacheDir() ?? null, twice(21)]));\n");
  const run = (env: NodeJS.ProcessEnv) => {
    const r = spawnSync(process.execPath, ['--import', AGENT, prog], { cwd: TMP, encoding: 'utf8', env: { ...process.env, PARANODE_CACHE_DIR: cacheRoot, ...env } });
    assert.equal(r.status, 0, r.stderr);
    const [dir, answer] = JSON.parse(r.stdout) as [string | null, number];
    assert.equal(answer, 42);
    return { dir, log: r.stderr };
  };
  const cold = run({ NODE_DEBUG_NATIVE: 'COMPILE_CACHE' });
  assert.ok(cold.dir?.startsWith(path.join(cacheRoot, 'v8') + path.sep), `the agent's code cache: ${cold.dir}`);
  assert.equal(fs.statSync(cacheRoot).mode & 0o077, 0, 'inside the owner-only directory');
  const warm = run({ NODE_DEBUG_NATIVE: 'COMPILE_CACHE' });
  assert.equal(warm.dir, cold.dir);
  // Node's own log of its compile cache (NODE_DEBUG_NATIVE): the prepared program's code was read from it
  const read = new RegExp(`reading cache from \\S+ for CommonJS ${prog.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.\\.\\.[^\\n]*success`);
  assert.match(warm.log, read, 'the warm start read the prepared program\'s V8 code from the cache');
  const theirs = path.join(TMP, 'their-compile-cache');
  assert.ok(run({ NODE_COMPILE_CACHE: theirs }).dir?.startsWith(theirs + path.sep), 'NODE_COMPILE_CACHE: the program\'s own directory serves');
  assert.equal(run({ NODE_DISABLE_COMPILE_CACHE: '1' }).dir, null);
  assert.equal(run({ NODE_V8_COVERAGE: path.join(TMP, 'coverage') }).dir, null);
  assert.equal(run({ PARANODE_CACHE: 'off' }).dir, null);
  assert.equal(run({ PARANODE_CODE_CACHE: 'off' }).dir, null);
});

test('dormant: no socket in a directory that is not owner-only', async () => {
  const tmp = path.join(TMP, 'shared-tmp');
  const dir = dormantDir({ TMPDIR: tmp });
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  fs.chmodSync(dir, 0o755);
  const child = spawn(process.execPath, ['--import', AGENT, target], { cwd: FIXTURES, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, TMPDIR: tmp, XDG_RUNTIME_DIR: '' } });
  after(() => child.kill());
  const ask = lineRequests(child);
  await ask('', /ready/);
  await ask('3', new RegExp(`done ${sum(3)}\\n`));
  assert.deepEqual(fs.readdirSync(dir), [], 'the agent did not listen there');
  child.stdin!.end();
  assert.equal(await new Promise((r) => child.once('exit', r)), 0);
});

/**
 * An entry read from the cache holds its layout lists as Int32Array views (compare as arrays), its
 * function count, and function records whose JSON is a fresh record's (compare as JSON).
 */
function plain(p: ReturnType<typeof prepareForLoad>): ReturnType<typeof prepareForLoad> {
  const { at, lines, texts } = p.layout;
  const { functionCount, ...rest } = p;
  assert.equal(functionCount, p.analysis.functions.length);
  const analysis = JSON.parse(JSON.stringify(p.analysis)) as typeof p.analysis;
  return { ...rest, analysis, layout: { at: Array.from(at), texts: Array.from(texts), lines: Object.fromEntries(Object.entries(lines).map(([k, v]) => [k, Array.from(v)])) } };
}

test('prepared-code cache: a hit renumbered for another script number is exactly a fresh preparation; corrupt entries are ignored', () => {
  const dir = path.join(TMP, 'unit-cache');
  const cache = PreparedCache.open({ PARANODE_CACHE_DIR: dir })!;
  assert.ok(cache);
  const file = require.resolve('esprima');
  const source = fs.readFileSync(file, 'utf8');
  const naming = { filename: file, cwd: FIXTURES };
  const req = (no: number) => ({ kind: 'script' as const, source, no, filename: file, cwd: FIXTURES });
  const prep = (n: number) => prepareForLoad(source, n, 'script', naming);
  const first = cache.prepared(req(12), prep);
  assert.deepEqual(cache.stats, { hits: 0, misses: 1, bypassed: 0, corrupt: 0, recovered: 0, lost: 0 });
  assert.deepEqual(first, prep(12));
  const second = cache.prepared(req(34), () => { throw new Error('not prepared again'); });
  assert.equal(cache.stats.hits, 1);
  // its functions are decoded when first read (a dormant program never reads them)
  assert.equal(typeof Object.getOwnPropertyDescriptor(second.analysis, 'functions')?.get, 'function');
  assert.equal(second.functionCount, 430);
  // listing every function for the tool reads their points without keeping them decoded (readOnce)
  const fns = second.analysis.functions;
  const listed = readOnce(() => JSON.stringify(fns));
  assert.ok(fns.every((f) => !Object.getOwnPropertyDescriptor(f, 'points')), 'points decoded again when next read');
  assert.equal(listed, JSON.stringify(prep(34).analysis.functions));
  assert.deepEqual(plain(second), prep(34));
  // at detach the decoded functions go back to their encoded form, and decode again the same
  assert.ok(forgetDecoded(second.analysis));
  assert.equal(typeof Object.getOwnPropertyDescriptor(second.analysis, 'functions')?.get, 'function');
  assert.equal(JSON.stringify(second.analysis.functions), JSON.stringify(prep(34).analysis.functions));
  assert.equal(forgetDecoded(prep(34).analysis), false);
  // more functions than a part of the call points' JSON (1000): a function's points read first from
  // a later part, then all, are what a fresh preparation gives
  const many = Array.from({ length: 2500 }, (_, i) => `function f${i}(a, b) { return f${(i + 7) % 2500}(a) + Math.max(a, b) + g${i % 3}(b, [a]); }`).join('\n');
  const mfile = path.join(TMP, 'many.js');
  const mprepared = (n: number) => prepareForLoad(many, n, 'script', { filename: mfile, cwd: TMP });
  cache.prepared({ kind: 'script', source: many, no: 5, filename: mfile, cwd: TMP }, mprepared);
  const hit = cache.prepared({ kind: 'script', source: many, no: 6, filename: mfile, cwd: TMP }, () => { throw new Error('not prepared again'); });
  const fresh = mprepared(6).analysis.functions;
  assert.deepEqual(JSON.parse(JSON.stringify(hit.analysis.functions[2400].points)), fresh[2400].points);
  assert.deepEqual(JSON.parse(JSON.stringify(hit.analysis.functions[999].points)), fresh[999].points);
  assert.equal(JSON.stringify(hit.analysis.functions), JSON.stringify(fresh));
  // an ES module: its preamble names the script number too
  const esm = 'export function g(a) { return a + 1; }\nexport const h = () => g(2);\n';
  const url = 'file:///x/m.mjs';
  const mreq = (no: number) => ({ kind: 'module' as const, source: esm, no, filename: '/x/m.mjs', cwd: '/x', url });
  // as the load hook prepares it, in the module's thread: the preamble carries no analysis (the hook hands it to the runtime)
  const mprep = (n: number) => prepareModuleForLoad(esm, n, url, { filename: '/x/m.mjs', cwd: '/x' }, false);
  assert.ok(mprep(3).code.startsWith(`var $pn3_0,$pn3_1;globalThis[Symbol.for('paranode.runtime')]?.registerModule(3,"file:///x/m.mjs",null,function($f,$v){`), mprep(3).code);
  assert.ok(!mprep(3).code.includes('"functions"'));
  cache.prepared(mreq(3), mprep);
  assert.deepEqual(plain(cache.prepared(mreq(7), () => { throw new Error('not prepared again'); })), mprep(7));
  // every entry damaged: ignored, prepared again and replaced
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.pnc'))) {
    const buf = fs.readFileSync(path.join(dir, f));
    buf[buf.length >> 1] ^= 1;
    fs.writeFileSync(path.join(dir, f), buf);
  }
  assert.deepEqual(cache.prepared(req(56), prep), prep(56));
  assert.equal(cache.stats.corrupt, 1);
  assert.deepEqual(plain(cache.prepared(req(78), () => { throw new Error('not prepared again'); })), prep(78));
  // a source holding the placeholder is not cached
  const odd = 'var $pn99_0 = 1; function k() { return $pn99_0; }';
  assert.deepEqual(cache.prepared({ ...req(42), source: odd }, (n) => prepareForLoad(odd, n)), prepareForLoad(odd, 42));
  assert.equal(cache.stats.bypassed, 1);
  assert.equal(PreparedCache.open({ PARANODE_CACHE: 'off', PARANODE_CACHE_DIR: dir }), null);
  fs.chmodSync(dir, 0o755);
  assert.equal(PreparedCache.open({ PARANODE_CACHE_DIR: dir }), null, 'a directory others can read is not used');
});

test('prepared-code cache: an entry\'s functions and layout are read when first needed; gone or damaged by then, they are made again from the source, or the script keeps running without them', () => {
  const dir = path.join(TMP, 'lazy-cache');
  const file = require.resolve('esprima');
  const source = fs.readFileSync(file, 'utf8');
  const naming = { filename: file, cwd: FIXTURES };
  const prep = (n: number, src: string) => prepareForLoad(src, n, 'script', naming);
  const fresh = prep(12, source);
  let reread: string | null = source;
  const req = { kind: 'script' as const, source, no: 12, filename: file, cwd: FIXTURES, reread: () => reread };
  const cache = PreparedCache.open({ PARANODE_CACHE_DIR: dir })!;
  cache.prepared(req, prep);
  const [entry] = fs.readdirSync(dir).filter((n) => n.endsWith('.pnc')).map((n) => path.join(dir, n));
  const hits = cache.stats.hits;
  const hit = (): ReturnType<typeof prep> => {
    const h = cache.stats.hits;
    const r = cache.prepared(req, prep);
    assert.equal(cache.stats.hits, h + 1, 'found in the cache');
    return r;
  };
  // read at load: the text and the head only; the rest from the file when first read
  const first = hit();
  assert.equal(first.functionCount, 430);
  assert.equal(typeof Object.getOwnPropertyDescriptor(first.layout, 'lines')?.get, 'function', 'layout not decoded at load');
  assert.deepEqual(plain(first), fresh);
  // its lines read as preparation's object does, and refuse writes (the runtime only reads them)
  const lines = first.layout.lines;
  const some = Object.keys(fresh.layout.lines)[7];
  assert.deepEqual(Array.from(lines[Number(some)]), fresh.layout.lines[Number(some)]);
  assert.equal(lines[0], undefined);
  assert.equal(JSON.stringify(Object.fromEntries(Object.entries(lines).map(([k, v]) => [k, Array.from(v)]))), JSON.stringify(fresh.layout.lines));
  assert.throws(() => { (lines as Record<number, number[]>)[1] = []; }, TypeError);
  assert.throws(() => Object.freeze(lines), TypeError);
  assert.deepEqual(cache.stats, { hits: hits + 1, misses: 1, bypassed: 0, corrupt: 0, recovered: 0, lost: 0 });
  // that part damaged after load: found by its own sum, prepared again from the source read again
  const damaged = hit();
  const buf = fs.readFileSync(entry);
  buf[buf.length - 3] ^= 1;
  fs.writeFileSync(entry, buf);
  assert.deepEqual(plain(damaged), fresh);
  assert.equal(cache.stats.recovered, 1);
  assert.deepEqual(plain(hit()), fresh);
  assert.equal(cache.stats.recovered, 1, 'the entry was written whole again');
  // a damaged head: prepared again at load, and stored again
  fs.writeFileSync(entry, buf.subarray(0, 10));
  assert.deepEqual(cache.prepared(req, prep), fresh);
  assert.equal(cache.stats.corrupt, 1);
  // gone after load: prepared again from the source
  const gone = hit();
  fs.unlinkSync(entry);
  assert.deepEqual(plain(gone), fresh);
  assert.equal(cache.stats.recovered, 2);
  // gone, and the source no longer the one of the key (changed on disk, or given by another hook): lost,
  // the script runs on with no function records and the prepared text's columns
  cache.prepared(req, prep);
  const changed = hit();
  fs.unlinkSync(entry);
  reread = source + '\n';
  assert.deepEqual(changed.analysis.functions, []);
  assert.deepEqual([Array.from(changed.layout.at), Array.from(changed.layout.texts), changed.layout.lines], [[], [], {}]);
  assert.equal(changed.functionCount, 430, 'its guards are still defined');
  assert.equal(cache.stats.lost, 1);
  // a stack trace formatted while the part is being read (an error made inside fs) maps nothing, and reads it once
  const encoded = encodeRest(fresh);
  let reads = 0;
  let inner: unknown;
  const decoded = decodeRest(encoded.head, () => {
    reads++;
    inner = [decoded.layout.lines, decoded.layout.texts, decoded.analysis.functions];
    return { json: Buffer.from(encoded.json, 'utf8'), ints: encoded.ints };
  });
  assert.deepEqual(Array.from(decoded.layout.texts), fresh.layout.texts);
  assert.deepEqual(inner, [{}, [], []]);
  assert.equal(JSON.stringify(decoded.analysis.functions), JSON.stringify(fresh.analysis.functions));
  assert.equal(reads, 1);
  // and where it cannot be read again at all
  reread = source;
  cache.prepared(req, prep);
  const unreadable = hit();
  fs.unlinkSync(entry);
  reread = null;
  assert.deepEqual(unreadable.analysis.functions, []);
  assert.equal(cache.stats.lost, 2);
});

test('dormant: the preparer is loaded at the first script that needs it, leaves nothing of paranode in require.cache, and prepares nothing once its files changed on disk', async () => {
  // a copy of paranode's build, so that a file of its preparer can change under a running program
  const copy = path.join(TMP, 'agent-copy');
  fs.cpSync(path.join(ROOT, 'dist'), path.join(copy, 'dist'), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
  const agent = path.join(copy, 'dist', 'src', 'agent', 'dormant.js');
  const dir = path.join(TMP, 'late');
  fs.mkdirSync(dir);
  const main = path.join(dir, 'main.js');
  fs.writeFileSync(main, [
    "const guards = () => Object.getOwnPropertyNames(globalThis).filter((n) => /^\\$pn\\d+_/.test(n)).length;",
    "require('readline').createInterface({ input: process.stdin }).on('line', (file) => {",
    "  const before = guards();",
    "  const m = require(file);",
    "  const ours = Object.keys(require.cache).filter((f) => f.includes('agent-copy')).length;",
    "  console.log(`${file}: ${m(20)} guards +${guards() - before} ours ${ours}`);",
    "});",
    "console.log('ready');",
  ].join('\n'));
  const late = (name: string) => {
    const file = path.join(dir, `${name}.js`);
    fs.writeFileSync(file, `module.exports = function ${name}(n) { let s = 0; for (let i = 0; i < n; i++) s += i; return s; };\n`);
    return file;
  };
  const start = async () => {
    const t = new Target(main, [], ['-r', agent]);
    after(() => t.kill());
    await t.waitFor(/ready/);
    return t;
  };
  // a first run leaves main.js in the cache: the next runs start warm, with no preparer loaded
  (await start()).kill();
  const t1 = await start();
  const a = late('a');
  assert.match((await t1.request(a, /a\.js: .*\n/))[0], /: 190 guards \+1 ours 0\n/, 'prepared at its load, the preparer loaded then and out of require.cache');
  t1.kill();
  // paranode installed anew (a preparing file replaced) while a program runs, before its first miss
  const t2 = await start();
  const rewrite = path.join(copy, 'dist', 'src', 'instrument', 'transform.js');
  fs.writeFileSync(rewrite, fs.readFileSync(rewrite, 'utf8') + '\n// changed\n');
  const b = late('b');
  assert.match((await t2.request(b, /b\.js: .*\n/))[0], /: 190 guards \+0 ours 0\n/, 'left unprepared: a new preparer is not paired with the running agent');
  t2.kill();
});

test('prepared-code cache: the hash of the preparing code is kept under its files\' identity, and made again when it does not match', () => {
  const dir = path.join(TMP, 'build-id-cache');
  const idOf = () => (PreparedCache.open({ PARANODE_CACHE_DIR: dir }) as unknown as { id: string }).id;
  const id = idOf();
  assert.match(id, /^[0-9a-f]{64}$/);
  const [memo] = fs.readdirSync(dir).filter((n) => n.startsWith('build-id-')).map((n) => path.join(dir, n));
  const [identity, kept] = fs.readFileSync(memo, 'utf8').split('\n');
  assert.equal(kept, id);
  assert.equal((fs.statSync(memo).mode & 0o777), 0o600);
  // the memo is what a later start takes (it reads no preparing file's content)...
  fs.writeFileSync(memo, `${identity}\n${'e'.repeat(64)}\n`);
  assert.equal(idOf(), 'e'.repeat(64));
  // ...only while the files are those it was made for, and only a well-formed one
  fs.writeFileSync(memo, `${'0'.repeat(64)}\n${'e'.repeat(64)}\n`);
  assert.equal(idOf(), id);
  assert.equal(fs.readFileSync(memo, 'utf8'), `${identity}\n${id}\n`);
  fs.writeFileSync(memo, `${identity}\nnot a hash\n`);
  assert.equal(idOf(), id);
  fs.writeFileSync(memo, 'garbage');
  assert.equal(idOf(), id);
});

test('dormant by --require (-r paranode/agent): stack traces and functions\' text of CommonJS and ES module mains are byte for byte the plain ones, cold and warm cache; attached later, a probe counts exactly by slot', async () => {
  // (--import of any module makes Node load a CommonJS main through its ES module loader: other frames)
  for (const program of ['sees/stack.mjs', 'sees/worker-events.js', 'sees/columns.js']) {
    const input = 'count\nexit\n';
    const plain = spawnSync(process.execPath, [program], { cwd: FIXTURES, encoding: 'utf8', input });
    assert.equal(plain.status, 0, plain.stderr);
    // warm: the layout that maps columns and text back is read from the entry when first needed
    for (const start of ['cold', 'warm']) {
      const dormant = spawnSync(process.execPath, ['-r', AGENT, program], { cwd: FIXTURES, encoding: 'utf8', input });
      assert.deepEqual([dormant.status, dormant.stdout, dormant.stderr], [plain.status, plain.stdout, plain.stderr], `${program}, ${start}`);
    }
  }
  const t = new Target(target, [], ['-r', AGENT]);
  after(() => t.kill());
  await socketAppears(t.pid, t);
  const s = await Session.attach(t.pid);
  const r = await s.probe('/Code/dormant-target.js/f.entry: n++');
  assert.equal(r.bySlot, 1);
  await t.request('321', new RegExp(`done ${sum(321)}\\n`));
  await s.sample();
  assert.equal(s.value('n'), 321);
  assert.equal(s.usedInspectorPort, false);
  await s.detach();
});

test('start-up cache limit: over PARANODE_CACHE_MAX the entries used least recently are removed down to 3/4 of it, V8\'s code included; files of the last minute and other files stay', () => {
  const dir = path.join(TMP, 'prune');
  fs.mkdirSync(path.join(dir, 'v8', 'v24'), { recursive: true, mode: 0o700 });
  const MB = 1024 * 1024;
  const hoursAgo = (h: number) => (Date.now() - h * 3600_000) / 1000;
  const files: [string, number][] = [['a.pnc', 5], ['b.pnc', 4], [path.join('v8', 'v24', 'c'), 3], ['d.pnc', 2], ['e.pnc', 1], ['young.pnc', 0], ['build-id-0123', 10]];
  for (const [f, h] of files) {
    fs.writeFileSync(path.join(dir, f), Buffer.alloc(MB));
    if (h) fs.utimesSync(path.join(dir, f), hoursAgo(h), hoursAgo(h));
  }
  // under the limit: nothing removed
  assert.deepEqual(pruneCache(dir, 6 * MB), { removed: 0, freedBytes: 0, keptBytes: 6 * MB });
  // 6 MB over a 3 MB limit: down to 2.25 MB, oldest first (a, b, c, d); the young one is never a candidate
  assert.deepEqual(pruneCache(dir, 3 * MB), { removed: 4, freedBytes: 4 * MB, keptBytes: 2 * MB });
  const left = (d: string) => fs.readdirSync(d).sort();
  assert.deepEqual(left(dir), ['build-id-0123', 'e.pnc', 'v8', 'young.pnc']);
  assert.deepEqual(left(path.join(dir, 'v8', 'v24')), []);
  assert.equal(cacheLimit({}), DEFAULT_CACHE_MAX_MB * MB);
  assert.equal(cacheLimit({ PARANODE_CACHE_MAX: '0' }), null);
  assert.equal(cacheLimit({ PARANODE_CACHE_MAX: '1.5' }), 1.5 * MB);
  assert.equal(cacheLimit({ PARANODE_CACHE_MAX: 'lots' }), DEFAULT_CACHE_MAX_MB * MB);
});
