// Helpers for tests that drive real target processes.
import { ChildProcess, spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as inspector from 'inspector';
import * as path from 'path';
import * as vm from 'vm';
import { after } from 'node:test';
import { Session } from '../../src/session/session';

export const ROOT = path.resolve(__dirname, '..', '..', '..');
export const FIXTURES = path.join(ROOT, 'test', 'fixtures');
export const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
/** the dormant agent: `node --import <AGENT> app.js` */
export const AGENT = path.join(ROOT, 'dist', 'src', 'agent', 'dormant.js');

/** A target process that speaks line by line on stdin/stdout. */
export class Target {
  readonly child: ChildProcess;
  out = '';
  err = '';
  private waiters: { re: RegExp; from: number; resolve: (m: RegExpMatchArray) => void; reject: (e: Error) => void }[] = [];
  private readonly exited: Promise<number | null>;
  private gone: Error | null = null;

  constructor(script: string, args: string[] = [], nodeFlags: string[] = []) {
    this.child = spawn(process.execPath, [...nodeFlags, script, ...args], { stdio: ['pipe', 'pipe', 'pipe'], cwd: FIXTURES });
    this.child.stdout!.setEncoding('utf8').on('data', (d: string) => { this.out += d; this.check(); });
    this.child.stderr!.setEncoding('utf8').on('data', (d: string) => { this.err += d; });
    this.exited = new Promise((r) => this.child.once('exit', (c) => r(c)));
    // a target that ends while a test waits for its output fails the test with its stderr, instead of leaving it pending
    this.child.once('close', (code, signal) => {
      this.gone = new Error(`${script} exited (${signal ?? `code ${code}`}) while a test waited for its output; stderr:\n${this.err.slice(-3000)}`);
      for (const w of this.waiters) w.reject(this.gone);
      this.waiters = [];
    });
  }

  get pid(): number { return this.child.pid!; }

  /** Whether it still runs, else how it ended, and the end of its stderr: for a failure's message. */
  state(): string {
    const { exitCode, signalCode } = this.child;
    const how = exitCode === null && signalCode === null ? 'still running' : `exited (${signalCode ?? `code ${exitCode}`})`;
    return `target ${this.pid} ${how}; its stderr: ${JSON.stringify(this.err.slice(-2000))}`;
  }

  /** Session.attach to it; a failure says what became of the target. */
  async attach(opts?: Parameters<typeof Session.attach>[1]): Promise<Session> {
    try {
      return await Session.attach(this.pid, opts);
    } catch (e) {
      (e as Error).message += ` [${this.state()}]`;
      throw e;
    }
  }

  send(line: string): void { this.child.stdin!.write(line + '\n'); }

  /** Resolves when stdout (after the current position) matches. */
  waitFor(re: RegExp): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      this.waiters.push({ re, from: this.out.length, resolve, reject });
      this.check();
      if (this.gone && this.waiters.length) { this.waiters = []; reject(this.gone); }
    });
  }

  async request(line: string, re: RegExp): Promise<RegExpMatchArray> {
    const p = this.waitFor(re);
    this.send(line);
    return p;
  }

  private check(): void {
    this.waiters = this.waiters.filter((w) => {
      // look only at the tail that can hold a new match (outputs can be megabytes)
      const m = this.out.slice(Math.max(w.from, this.out.length - (1 << 16))).match(w.re);
      if (m) w.resolve(m);
      return !m;
    });
  }

  waitExit(): Promise<number | null> { return this.exited; }

  kill(): void { this.child.kill(); }
}

export function runNode(args: string[], cwd = FIXTURES): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 28 });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

/**
 * The CLI run until its stderr matches `re` (a placement said, say), then sent SIGINT
 * (it detaches at once): for a test of what an attach says, with no --duration to guess.
 */
export async function runNodeUntil(args: string[], re: RegExp, cwd = FIXTURES): Promise<{ stderr: string; status: number | null }> {
  const tool = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let sent = false;
  tool.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
    if (!sent && re.test(stderr)) { sent = true; tool.kill('SIGINT'); }
  });
  const status = await new Promise<number | null>((r) => tool.once('close', (c) => r(c)));
  return { stderr, status };
}

/** Output of a program launched by Session.launch(..., { stdio: 'pipe' }), awaitable by pattern. */
export function programOutput(child: ChildProcess): { until: (re: RegExp) => Promise<void>; send: (line: string) => void } {
  let out = '';
  let closed = child.stdout!.readableEnded;
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  child.stdout!.once('close', () => { closed = true; });
  return {
    // a program that ends without printing it fails the wait with what it printed (not a wait on nothing)
    until: async (re) => {
      while (!re.test(out)) {
        if (closed) throw new Error(`the program's output ended (exit ${child.exitCode ?? child.signalCode}) without ${re}: ${JSON.stringify(out)}`);
        await new Promise((r) => { child.stdout!.once('data', r); child.stdout!.once('close', r); });
      }
    },
    send: (line) => { child.stdin!.write(line + '\n'); },
  };
}

/**
 * Launch test/fixtures/workers.js counting f's entries in every thread from its first
 * line: the worker started at launch calls f 70 times, a new one 250 times at its top
 * level, the main thread 30 times; then the program ends. The ended session (350 in
 * all, 30 in the main thread).
 */
export async function launchedWorkersCount(): Promise<Session> {
  const s = await Session.launch([process.execPath, path.join(FIXTURES, 'workers.js')], ['/Code/workers.js/f.entry: n++'], { stdio: 'pipe', cwd: FIXTURES });
  after(() => s.child!.kill());
  const { until } = programOutput(s.child!);
  await until(/ready/);
  s.child!.stdin!.write('spawn 250\nresident 70\nmain 30\n');
  await until(/spawned \d+ done 250/);
  await until(/resident done 70/);
  await until(/main done 30/);
  // terminate() runs no exit handler in the worker: what it did is known from samples taken before
  await s.sample();
  s.child!.stdin!.write('quit\n');
  await s.waitForExit();
  return s;
}

/** What a launchedWorkersCount session counted in each thread, and its notes: a failed count's message. */
export function workersCountReport(s: Session): string {
  return JSON.stringify({ n: s.metrics().filter((m) => m.name === 'n').map((m) => [m.focus, m.total]), notes: s.notes });
}

/** For a program launched with piped stdio: write a line (none if empty), resolve with the first match in what it prints after. */
export function lineRequests(child: ChildProcess): (line: string, re: RegExp) => Promise<RegExpMatchArray> {
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  return async (line, re) => {
    const from = out.length;
    if (line) child.stdin!.write(line + '\n');
    for (;;) {
      const m = out.slice(from).match(re);
      if (m) return m;
      await new Promise((r) => child.stdout!.once('data', r));
    }
  };
}

/**
 * Does this Node's V8 still have LiveEdit (Debugger.setScriptSource)? Node 26's
 * does not. Asked the way the tool asks a target: a dry run, answered at once by
 * this process's own inspector. Tests of LiveEdit itself check the fallback where
 * it is missing.
 */
/** The note a script gets where LiveEdit is missing (see LIVEEDIT). */
export function noLiveEdit(file: string): RegExp {
  return new RegExp(`^this Node's V8 has no LiveEdit \\(setScriptSource functionality no longer available\\): \\S*${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is reached by breakpoints`);
}

export const LIVEEDIT: boolean = (() => {
  const s = new inspector.Session();
  s.connect();
  let id = '';
  let answer = true;
  s.on('Debugger.scriptParsed', (m) => { if (m.params.url === 'paranode-liveedit-probe.js') id = m.params.scriptId; });
  s.post('Debugger.enable');
  vm.runInThisContext('0', { filename: 'paranode-liveedit-probe.js' });
  s.post('Debugger.setScriptSource', { scriptId: id, scriptSource: '0', dryRun: true }, (e) => { answer = !e || !/no longer available/.test(e.message); });
  s.post('Debugger.disable');
  s.disconnect();
  return answer;
})();

/**
 * Does process `pid` hold a listening TCP socket (its inspector port, say)?
 * Read from /proc (Linux): the listening sockets of the network namespace
 * matched to the process's own descriptors, so another target's port, open at
 * the same moment in a test running beside this one, does not count.
 */
export function listensOnTcp(pid: number): boolean {
  const inodes = new Set<string>();
  for (const table of [`/proc/${pid}/net/tcp`, `/proc/${pid}/net/tcp6`]) {
    let text = '';
    try { text = fs.readFileSync(table, 'utf8'); } catch { continue; }
    // columns: sl local_address rem_address st ... inode; st 0A is LISTEN
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] === '0A') inodes.add(f[9]);
    }
  }
  let fds: string[] = [];
  try { fds = fs.readdirSync(`/proc/${pid}/fd`); } catch { return false; }
  for (const fd of fds) {
    let link = '';
    try { link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`); } catch { continue; }
    const m = /^socket:\[(\d+)\]$/.exec(link);
    if (m && inodes.has(m[1])) return true;
  }
  return false;
}

/**
 * A step of a test that must finish within `ms`: else the test fails naming the step and
 * what the session still waits for from the target (its unanswered CDP requests), where a
 * bare test timeout would say nothing. A watchdog, not a wait: the step's own promise decides.
 */
export async function within<T>(label: string, step: Promise<T>, session?: object, ms = 60000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const cdp = (session as { cdp?: { pendingRequests(): string[] } } | undefined)?.cdp;
      reject(new Error(`${label}: not done after ${ms / 1000} s` + (cdp ? `; unanswered requests to the target: ${JSON.stringify(cdp.pendingRequests())}` : '')));
    }, ms);
  });
  try {
    return await Promise.race([step, stalled]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A fixture launched under paranode (every module prepared at load) with piped stdio,
 * once it has printed "ready"; detached and killed when the test ends.
 */
export async function launchedFixture(script: string): Promise<{ s: Session; request: (line: string, re: RegExp) => Promise<RegExpMatchArray> }> {
  const s = await Session.launch([process.execPath, script], [], { stdio: 'pipe', cwd: FIXTURES });
  after(() => s.child!.kill());
  after(() => s.detach());
  const request = lineRequests(s.child!);
  await request('', /ready/);
  return { s, request };
}
