// Worker processes (started with --experimental-vm-modules, for
// vm.SourceTextModule), a queue of tests, and a watchdog: a worker silent for
// too long is killed, the run it was in is a "timeout" failure, and the test
// goes back to the queue with its decided runs so that the rest still run.
import { fork, type ChildProcess } from 'child_process';
import * as path from 'path';
import type { RunOutcome } from './execute';
import type { TestMeta } from './metadata';
import type { TaskMsg, WorkerMsg } from './protocol';

export interface TestResult {
  rel: string;
  meta?: TestMeta;
  metaError?: string;
  /** why the test was not run */
  skipped?: string;
  runs: Map<string, RunOutcome>;
}

export interface PoolOptions {
  jobs: number;
  root: string;
  harnessDir: string;
  asyncTimeoutMs: number;
  /** a worker silent this long is killed (sync hangs: infinite loops, endless microtask chains) */
  hangMs: number;
  /** tests per worker before it is replaced (bounds what a long-lived process accumulates) */
  recycleAfter: number;
  onTest: (r: TestResult) => void;
}

interface Slot {
  child: ChildProcess;
  task: TaskMsg | null;
  run: string | null;
  lastHeard: number;
  done: number;
  stderr: string;
  gone: boolean;
}

export async function runPool(rels: string[], opts: PoolOptions): Promise<void> {
  const queue: TaskMsg[] = rels.map((rel, id) => ({ type: 'task', id, file: path.join(opts.root, rel), rel, harnessDir: opts.harnessDir, asyncTimeoutMs: opts.asyncTimeoutMs, decided: {} }));
  const results = new Map<number, TestResult>();
  let remaining = queue.length;
  const slots = new Set<Slot>();
  let finish!: () => void;
  const finished = new Promise<void>((r) => { finish = r; });
  const workerJs = path.join(__dirname, 'worker.js');

  const result = (t: TaskMsg): TestResult => {
    let r = results.get(t.id);
    if (!r) results.set(t.id, (r = { rel: t.rel, runs: new Map() }));
    return r;
  };

  const feed = (s: Slot): void => {
    if (s.done >= opts.recycleAfter) { retire(s); spawn(); return; }
    const t = queue.shift();
    if (!t) { retire(s); return; }
    s.task = t;
    s.run = null;
    s.lastHeard = Date.now();
    s.child.send(t);
  };

  const retire = (s: Slot): void => {
    slots.delete(s);
    s.gone = true;
    s.child.removeAllListeners('exit');
    s.child.send({ type: 'exit' });
    if (slots.size === 0 && remaining === 0) finish();
  };

  /** The worker died or was killed: the run it was in failed; the test goes on in a new worker. */
  const lost = (s: Slot, phase: 'timeout' | 'crash', why: string): void => {
    if (s.gone) return;
    s.gone = true;
    slots.delete(s);
    const t = s.task;
    if (t) {
      const r = result(t);
      const run = s.run ?? 'setup';
      const tail = s.stderr.trim().split('\n').slice(-3).join(' | ');
      r.runs.set(run, { ok: false, phase, error: why + (tail && phase === 'crash' ? ` (${tail})` : '') });
      t.decided[run] = false;
      queue.unshift(t);
    }
    if (queue.length) spawn();
    else if (slots.size === 0 && remaining === 0) finish();
  };

  const spawn = (): void => {
    const child = fork(workerJs, [], {
      execArgv: ['--experimental-vm-modules', '--expose-gc', '--no-warnings', '--max-old-space-size=4096'],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    const s: Slot = { child, task: null, run: null, lastHeard: Date.now(), done: 0, stderr: '', gone: false };
    slots.add(s);
    child.stderr!.on('data', (d: Buffer) => { s.stderr = (s.stderr + d.toString()).slice(-4000); });
    child.on('message', (m: WorkerMsg) => {
      s.lastHeard = Date.now();
      const t = s.task;
      if (!t || m.id !== t.id) return;
      if (m.type === 'begin') s.run = m.run;
      else if (m.type === 'result') {
        result(t).runs.set(m.run, m.outcome);
        t.decided[m.run] = m.outcome.ok;
        s.run = null;
      } else if (m.type === 'end') {
        const r = result(t);
        r.meta = m.meta;
        r.metaError = m.metaError;
        r.skipped = m.skipped;
        results.delete(t.id);
        s.task = null;
        s.done++;
        remaining--;
        opts.onTest(r);
        if (m.rss > 2e9) s.done = opts.recycleAfter;
        feed(s);
      }
    });
    child.on('exit', (code, signal) => lost(s, 'crash', `worker exited (${signal ?? `code ${code}`})`));
    feed(s);
  };

  const watchdog = setInterval(() => {
    const now = Date.now();
    for (const s of [...slots]) {
      if (s.task && now - s.lastHeard > opts.hangMs) {
        s.child.removeAllListeners('exit');
        s.child.kill('SIGKILL');
        lost(s, 'timeout', `no answer within ${Math.round(opts.hangMs / 1000)} s: worker killed`);
      }
    }
  }, 500);
  for (let i = 0; i < Math.min(opts.jobs, queue.length); i++) spawn();
  if (remaining === 0) finish();
  await finished;
  clearInterval(watchdog);
}
