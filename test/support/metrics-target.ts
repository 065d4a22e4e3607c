// The metric tests' target (fixtures/metrics-target.js): a main thread and one worker, driven by lines on stdin.
import * as path from 'node:path';
import { after } from 'node:test';
import { Session } from '../../src/api';
import { MetricManager } from '../../src/metrics/manager';
import { FIXTURES, lineRequests, Target } from './helpers';

export const METRICS_TARGET = path.join(FIXTURES, 'metrics-target.js');

/** The target with its worker, attached after it started, or launched under paranode (every function gets slots at load). */
export async function startMetricsTarget(how: 'attach' | 'launch' = 'launch') {
  let s: Session;
  let request: (line: string, re: RegExp) => Promise<RegExpMatchArray>;
  let pid: number;
  if (how === 'attach') {
    const t = new Target(METRICS_TARGET);
    after(() => t.kill());
    await t.waitFor(/ready/);
    s = await Session.attach(t.pid);
    request = (line, re) => t.request(line, re);
    pid = t.pid;
  } else {
    s = await Session.launch([process.execPath, METRICS_TARGET], [], { stdio: 'pipe', cwd: FIXTURES });
    after(() => s.child!.kill());
    request = lineRequests(s.child!);
    await request('', /ready/);
    pid = s.pid;
  }
  after(() => s.detach());
  // the worker: wait until it has its agent (an event, bounded so that a failure says why)
  const deadline = Date.now() + 30000;
  while (s.threadIds.length < 2) {
    if (Date.now() > deadline) throw new Error(`the worker never got its agent; notes: ${s.notes.join(' | ')}`);
    await new Promise((r) => { const timer = setTimeout(r, 1000); s.once('thread', () => { clearTimeout(timer); r(undefined); }); });
  }
  return { t: { pid, request }, s, mm: new MetricManager([s]) };
}

/** The worker thread's label. */
export const workerOf = (s: Session) => s.threadIds.find((x) => x !== 'main')!;
