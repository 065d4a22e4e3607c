// diagnose(): launch or attach, run the Performance Consultant until its search
// is complete (or a duration, the target's exit, or stop()), and return the
// ranked diagnosis. The target is detached from (left running) at the end.
import { Session, SessionOptions } from '../session/session';
import { busySamples } from '../session/series';
import { TargetGoneError } from '../inspector/cdp';
import { MdlLibrary } from '../mdl/library';
import { MetricManager } from '../metrics/manager';
import { calleeName, loopName } from '../analysis/point-select';
import { parseLoop } from '../metrics/focus';
import { hypothesis, thresholds } from './hypotheses';
import { codeOf, sampleKey, threadLabel, threadOf } from './focus-parts';
import { diagnosis, Diagnosis, Hottest, HOTTEST } from './report';
import { ConsultantOptions, PerformanceConsultant, SearchNode } from './search';

export interface DiagnoseOptions extends ConsultantOptions, SessionOptions {
  /** stop after this many seconds (default: when the search is complete) */
  durationSeconds?: number;
  /** sampling interval, ms (default 200) */
  intervalMs?: number;
  /** messages about long steps (calibration) */
  progress?: (msg: string) => void;
  /** called with the consultant once it runs (live views listen to its 'node' and 'tick' events) */
  onStart?: (c: PerformanceConsultant, s: Session) => void;
  /** ends the search early (the diagnosis covers what was found) */
  signal?: AbortSignal;
  library?: MdlLibrary;
}

export type DiagnoseTarget = { pid: number } | { command: string[] };

export async function diagnose(target: DiagnoseTarget, opts: DiagnoseOptions = {}): Promise<{ diagnosis: Diagnosis; session: Session }> {
  // bad options fail before the target is touched
  thresholds(opts.thresholds);
  for (const n of opts.hypotheses ?? []) hypothesis(n);
  const mm = new MetricManager([], opts.library ?? MdlLibrary.standard());
  if (opts.progress) mm.on('progress', opts.progress);
  // measured before the program is touched, not while it runs
  await mm.costCalibration();
  const s = 'pid' in target ? await Session.attach(target.pid, opts) : await Session.launch(target.command, [], opts);
  mm.sessions.push(s);
  const c = new PerformanceConsultant(mm, opts);
  try {
    opts.onStart?.(c, s);
    s.startSampling(opts.intervalMs ?? 200);
    try {
      await c.start();
    } catch (e) {
      // a target that exits while the search starts: the diagnosis covers what there was
      if (!(e instanceof TargetGoneError)) throw e;
    }
    await new Promise<void>((resolve, reject) => {
      const done = () => { clearTimeout(timer); resolve(); };
      const timer = opts.durationSeconds ? setTimeout(done, opts.durationSeconds * 1000) : undefined;
      if (!opts.durationSeconds) c.once('complete', done);
      c.once('error', (e: Error) => { clearTimeout(timer); reject(e); });
      void s.waitForExit().then(done);
      if (opts.signal?.aborted) done();
      else opts.signal?.addEventListener('abort', done, { once: true });
    });
    await c.stop();
    const explains = await callGraph(s, c.nodes);
    const selfShare = (n: SearchNode) => {
      const st = s.stackSamples(threadLabel(n.focus));
      if (!st.samples) return undefined;
      const key = sampleKey(codeOf(n.focus)!);
      // less the time a timer found in functions V8 may have inlined into it (their samples are its)
      const inlined = c.nodes.filter((m) => m.state === 'true' && m.inlinedInto === key && threadLabel(m.focus) === threadLabel(n.focus)).reduce((a, m) => a + (m.value ?? 0), 0);
      return Math.max(0, (st.leaves.get(key) ?? 0) / busySamples(st) - inlined);
    };
    const d = diagnosis(c, s.pid, s.processFocus, explains, selfShare);
    if (s.fate) d.targetFate = s.fate;
    const hottest = hottestFunctions(s);
    if (hottest.length) d.hottest = hottest;
    return { diagnosis: d, session: s };
  } finally {
    await c.stop().catch(() => undefined);
    await s.detach().catch(() => undefined);
  }
}

/**
 * Each sampled thread's HOTTEST functions by their own code, Node's code they
 * call counted as theirs (Diagnosis.hottest); and, by V8's profiler, its HOTTEST
 * functions of Node's own code (its JavaScript and natives such as
 * `writeUtf8String`) by their self time, as V8's profiles show them, each with
 * the program function that called it in most of its samples.
 */
function hottestFunctions(s: Session): Hottest[] {
  const out: Hottest[] = [];
  const top = <T extends [string, number]>(xs: T[]) => xs.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, HOTTEST);
  for (const thread of s.threadIds) {
    const st = s.stackSamples(thread);
    if (!st.samples) continue;
    const busy = busySamples(st);
    const by = st.profiled ? 'profiler' : 'interrupt';
    for (const [fn, n] of top([...st.leaves])) out.push({ thread, function: fn, self: n / busy, samples: busy, by });
    const node = top([...st.node].map(([fn, callers]): [string, number] => [fn, [...callers.values()].reduce((a, b) => a + b, 0)]));
    for (const [fn, n] of node) {
      const caller = top([...st.node.get(fn)!])[0][0];
      out.push({ thread, function: fn, self: n / busy, samples: busy, by, node: true, ...(caller ? { calledFrom: caller } : {}) });
    }
  }
  return out;
}

/**
 * a is explained by b: function a has a call site whose callee is function b
 * (by name, as `b(...)`, `x.b(...)` or `this.b(...)`), or a stack sample
 * caught b running in a call a made; or a and b are loops of one function and
 * b is nested in a.
 */
async function callGraph(s: Session, nodes: SearchNode[]): Promise<(a: SearchNode, b: SearchNode) => boolean> {
  const callees = new Map<string, Set<string>>();
  /** a true loop's span in its script: "<module>/<function>/loop@<line>" -> [pos, end] */
  const spans = new Map<string, [number, number]>();
  for (const n of nodes) {
    const code = codeOf(n.focus);
    if (n.state !== 'true' || !code) continue;
    const loop = parseLoop(`/Code/${code}`);
    if (loop && !spans.has(code)) {
      try {
        const r = (await s.resources(loop.fn)).find((x) => x.path === loop.fn);
        const p = r?.points.find((q) => q.kind === 'loop' && loopName(q, r.points) === loop.loop);
        if (p) spans.set(code, [p.pos, p.end]);
      } catch { /* the target is gone: no pruning */ }
      continue;
    }
    if (callees.has(code)) continue;
    try {
      const r = (await s.resources(`/Code/${code}`)).find((x) => x.path === `/Code/${code}`);
      if (r) callees.set(code, new Set(r.points.flatMap((p) => (p.kind === 'call' && p.callee ? [calleeName(p.callee) ?? p.callee] : []))));
    } catch { /* the target is gone: no pruning */ }
  }
  return (a, b) => {
    const ca = codeOf(a.focus), cb = codeOf(b.focus);
    if (!ca || !cb || ca === cb || threadOf(a.focus) !== threadOf(b.focus)) return false;
    const la = spans.get(ca), lb = spans.get(cb);
    if (la || lb) return !!la && !!lb && parseLoop(`/Code/${ca}`)!.fn === parseLoop(`/Code/${cb}`)!.fn && la[0] <= lb[0] && lb[1] <= la[1];
    const name = cb.slice(cb.lastIndexOf('/') + 1).replace(/^.*\./, '');
    if (callees.get(ca)?.has(name)) return true;
    // calls the code does not spell out (callbacks, fn.call(this)) show in stack samples
    return s.stackSamples(threadLabel(a.focus)).above.get(sampleKey(ca))?.has(sampleKey(cb)) ?? false;
  };
}
