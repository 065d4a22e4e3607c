// Signals to paranode and to its targets: a graceful stop writes everything, a
// second signal writes what was sampled, and a launched program's fate is
// paranode's exit status. Also: nothing in the program can stop it under the
// debugger (a `debugger;` statement, running out of memory).
import assert from 'node:assert/strict';
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import { CLI, FIXTURES, Target } from './support/helpers';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-signals-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** paranode with piped stdio (a launched program shares its stdin and stdout) */
class Cli {
  readonly child: ChildProcess;
  out = '';
  err = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  constructor(args: string[]) {
    this.child = spawn(process.execPath, [CLI, ...args], { cwd: FIXTURES, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (d: string) => { this.out += d; });
    this.child.stderr!.setEncoding('utf8').on('data', (d: string) => { this.err += d; });
    this.exited = new Promise((r) => this.child.once('exit', (code, signal) => r({ code, signal })));
    after(() => this.child.kill('SIGKILL'));
  }
  /** resolves when stdout or stderr (as chosen) matches */
  async until(re: RegExp, stream: 'out' | 'err' = 'out'): Promise<RegExpMatchArray> {
    const s = stream === 'out' ? this.child.stdout! : this.child.stderr!;
    for (;;) {
      const m = this[stream].match(re);
      if (m) return m;
      await Promise.race([new Promise((r) => s.once('data', r)), this.exited.then(() => { throw new Error(`paranode exited; stderr:\n${this.err}`); })]);
    }
  }
  send(line: string): void { this.child.stdin!.write(line + '\n'); }
}

const total = (file: string, name: string): number | undefined =>
  (JSON.parse(fs.readFileSync(file, 'utf8')).metrics as { name: string; total: number }[]).find((m) => m.name === name)?.total;

test('a launched program ended by a signal or an abort: paranode exits as a shell would show it (128 + n)', async () => {
  for (const [code, expr] of [[143, 'process.kill(process.pid, "SIGTERM")'], [134, 'process.abort()'], [5, 'process.exitCode = 5']] as const) {
    const c = new Cli(['run', '-q', '--', process.execPath, '-e', expr]);
    assert.equal((await c.exited).code, code, c.err);
  }
});

test('SIGHUP to `paranode run` goes to the program; paranode waits, writes --json and exits with its status', async () => {
  const json = path.join(tmp, 'run-term.json');
  const c = new Cli(['run', '-q', '--json', json, '-p', '/Code/term-handler.js/f.entry: n++', '--', process.execPath, 'term-handler.js']);
  await c.until(/ready/);
  c.send('250');
  await c.until(/done 250/);
  // SIGHUP: the program's handler exits with 7
  c.child.kill('SIGHUP');
  assert.equal((await c.exited).code, 7, c.err);
  assert.match(c.out, /got SIGHUP 250/);
  assert.equal(total(json, 'n'), 250);
});

test('a second signal stops waiting for the program and still writes what was sampled', async () => {
  const json = path.join(tmp, 'run-twice.json');
  const c = new Cli(['run', '-q', '-i', '20', '--json', json, '-p', '/Code/term-handler.js/f.entry: n++', '--', process.execPath, 'term-handler.js']);
  const pid = Number((await c.until(/ready (\d+)/))[1]);
  after(() => { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } });
  c.send('40');
  await c.until(/done 40/);
  c.child.kill('SIGTERM');
  // the program survives SIGTERM: paranode waits for it...
  await c.until(/got SIGTERM 40/);
  await c.until(/SIGTERM: passed to the program/, 'err');
  // ...until the second one
  c.child.kill('SIGTERM');
  assert.equal((await c.exited).code, 143, c.err);
  const written = JSON.parse(fs.readFileSync(json, 'utf8'));
  assert.equal(written.pid, pid);
  const n = total(json, 'n');
  assert.ok(n === undefined || (n >= 0 && n <= 40), `n = ${n}`);
  process.kill(pid, 0); // the program lives on: it chose to survive SIGTERM
});

for (const sig of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) {
  test(`${sig} to \`paranode attach\` detaches and writes --json; the target runs on as before`, async () => {
    const t = new Target(path.join(FIXTURES, 'counted.js'));
    after(() => t.kill());
    await t.waitFor(/ready/);
    const json = path.join(tmp, `attach-${sig}.json`);
    const c = new Cli(['attach', String(t.pid), '--json', json, '-p', '/Code/counted.js/f.entry: n++']);
    await c.until(/probe 1 placed/, 'err');
    await t.request('321', /done/);
    c.child.kill(sig);
    assert.equal((await c.exited).code, 0, c.err);
    assert.equal(total(json, 'n'), 321);
    // detached: the program goes on, uncounted and unchanged
    assert.match((await t.request('5', /done (\d+)/))[0], /done 620/);
  });
}

test('a `debugger;` statement in the program does not pause it under paranode', async () => {
  const json = path.join(tmp, 'debugger.json');
  const c = new Cli(['run', '-q', '--json', json, '-p', '/Code/debugger-statement.js/tick.entry: n++', '--', process.execPath, 'debugger-statement.js']);
  assert.equal((await c.exited).code, 0, c.err);
  assert.match(c.out, /ticked 1000/);
  assert.equal(total(json, 'n'), 1000);
});

test('a `debugger;` statement does not pause an attached target either', async () => {
  const t = new Target(path.join(FIXTURES, 'debugger-on-request.js'));
  after(() => t.kill());
  await t.waitFor(/ready/);
  const json = path.join(tmp, 'debugger-attach.json');
  const c = new Cli(['attach', String(t.pid), '--json', json, '-p', '/Code/debugger-on-request.js/tick.entry: n++']);
  await c.until(/probe 1 placed/, 'err');
  await t.request('300', /ticked 300/);
  c.child.kill('SIGTERM');
  assert.equal((await c.exited).code, 0, c.err);
  assert.equal(total(json, 'n'), 300);
  await t.request('1', /ticked 301/);
});

test('a program that runs out of memory under paranode dies as it would without it (it does not hang)', async () => {
  const plain = spawn(process.execPath, ['--max-old-space-size=40', 'out-of-memory.js'], { cwd: FIXTURES, stdio: 'ignore' });
  const plainStatus = await new Promise<{ code: number | null; signal: string | null }>((r) => plain.once('exit', (code, signal) => r({ code, signal })));
  const c = new Cli(['run', '-q', '--', process.execPath, '--max-old-space-size=40', 'out-of-memory.js']);
  const { code } = await c.exited;
  // V8 aborts on a fatal out-of-memory error: SIGABRT (134)
  assert.equal(code, plainStatus.signal ? 128 + os.constants.signals[plainStatus.signal as NodeJS.Signals] : plainStatus.code);
  assert.match(c.err, /heap out of memory/);
});

test('a probe that matches nothing in a launched program is reported, not passed over', async () => {
  const json = path.join(tmp, 'unmatched.json');
  const c = new Cli(['run', '-q', '--json', json, '-p', '/Code/debugger-statement.js/tick.entry: n++', '-p', '/Code/debugger-statement.js/nosuch.entry: m++', '--', process.execPath, 'debugger-statement.js']);
  assert.equal((await c.exited).code, 0, c.err);
  const notes: string[] = JSON.parse(fs.readFileSync(json, 'utf8')).notes;
  assert.deepEqual(notes.filter((n) => /matched no function/.test(n)), [`probe "/Code/debugger-statement.js/nosuch.entry: m++" matched no function of the program (modules are named relative to ${FIXTURES}; see \`paranode resources\`)`]);
});

test('a target killed mid-search: diagnose ends at once and reports its fate; a launched one\'s signal is paranode\'s status', async () => {
  const demo = path.join(FIXTURES, '..', '..', 'demo', 'cpu-bound.js');
  // launched: paranode knows the signal
  const json = path.join(tmp, 'diagnose-killed.json');
  const c = new Cli(['diagnose', '-q', '--json', json, '--', process.execPath, demo, '120']);
  const pid = Number((await c.until(/diagnosing process (\d+)/, 'err'))[1]);
  process.kill(pid, 'SIGKILL');
  assert.equal((await c.exited).code, 128 + 9, c.err);
  assert.match(c.out, /paranode: the target killed by SIGKILL; the diagnosis covers what was sampled until then/);
  const d = JSON.parse(fs.readFileSync(json, 'utf8'));
  assert.equal(d.targetFate, 'killed by SIGKILL');
  assert.equal(d.pid, pid);
  assert.ok(d.searchHistory.length > 0, 'what was tested until then is reported');
  // attached: no exit handler ran, and paranode is not its parent
  const t = new Target(demo, ['120']);
  after(() => t.kill());
  const json2 = path.join(tmp, 'diagnose-killed-attached.json');
  const a = new Cli(['diagnose', '-q', '--json', json2, 'attach', String(t.pid)]);
  await a.until(/diagnosing process \d+/, 'err');
  t.child.kill('SIGKILL');
  assert.equal((await a.exited).code, 0, a.err);
  assert.match(a.out, /paranode: the target ended without running its exit handlers \(killed by a signal, or crashed\)/);
  assert.equal(JSON.parse(fs.readFileSync(json2, 'utf8')).targetFate, 'ended without running its exit handlers (killed by a signal, or crashed)');
});
