// diagnose(): launch or attach, run the Performance Consultant until its search
// is complete (or a duration, the target's exit, or stop()), and return the
// ranked diagnosis. The target is detached from (left running) at the end.
import { Resource, Session, SessionOptions } from '../session/session';
import { busySamples, leavesByFunction } from '../session/series';
import { TargetGoneError } from '../inspector/cdp';
import { Interrupted, ParanodeError } from '../session/errors';
import { deadline } from '../session/deadline';
import { MdlLibrary } from '../mdl/library';
import { MetricManager } from '../metrics/manager';
import { calleeName, loopNamed } from '../analysis/point-select';
import type { PointInfo } from '../analysis/functions';
import { parseLoop } from '../metrics/focus';
import { hypothesis, thresholds } from './hypotheses';
import { codeOf, sampleKey, threadLabel, threadOf } from './focus-parts';
import { diagnosis, Diagnosis, Hottest, HOTTEST, HOTTEST_PATHS, hottestCut } from './report';
import { addNextSteps, sampledPaths } from './next-steps';
import { ConsultantOptions, PerformanceConsultant, SearchNode } from './search';

export interface DiagnoseOptions extends ConsultantOptions, SessionOptions {
  /**
   * stop after this many seconds from the call, calibration and attaching included
   * (default: when the search is complete)
   */
  durationSeconds?: number;
  /** sampling interval, ms (default 200) */
  intervalMs?: number;
  /** messages about long steps (calibration) */
  progress?: (msg: string) => void;
  /** called with the consultant once it runs (live views listen to its 'node' and 'tick' events) */
  onStart?: (c: PerformanceConsultant, s: Session) => void;
  /** ends the search early (the diagnosis covers what was found); a request placing code then stops between scripts */
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
  // the duration bounds the whole call; its end, or the caller's signal, ends the search
  const t0 = performance.now();
  const end = AbortSignal.any([...(opts.durationSeconds ? [deadline(Math.ceil(opts.durationSeconds * 1000))] : []), ...(opts.signal ? [opts.signal] : [])]);
  // measured before the program is touched, not while it runs
  await mm.costCalibration();
  if (end.aborted && !opts.signal?.aborted) {
    throw new ParanodeError(`the duration (${opts.durationSeconds} s) ended before the target was reached: measuring this machine's instrumentation costs took ` +
      `${((performance.now() - t0) / 1000).toFixed(1)} s (once: they are kept for the next runs)`);
  }
  const sopts = { ...opts, signal: end };
  const s = 'pid' in target ? await Session.attach(target.pid, sopts) : await Session.launch(target.command, [], sopts);
  mm.sessions.push(s);
  // (the duration's end: the samples' interval is chosen for the time left, see CpuSampler.nextInterval)
  const c = new PerformanceConsultant(mm, { ...opts, endsAt: opts.durationSeconds ? Date.now() - (performance.now() - t0) + opts.durationSeconds * 1000 : undefined });
  let made: Diagnosis | undefined;
  try {
    opts.onStart?.(c, s);
    s.startSampling(opts.intervalMs ?? 200);
    try {
      await c.start();
    } catch (e) {
      // a target that exits while the search starts, or the duration's end: the diagnosis covers what there was
      if (!(e instanceof TargetGoneError) && !(e instanceof Interrupted)) throw e;
    }
    await new Promise<void>((resolve, reject) => {
      const done = () => resolve();
      if (!opts.durationSeconds) c.once('complete', done);
      c.once('error', (e: Error) => reject(e));
      void s.waitForExit().then(done);
      if (end.aborted) done();
      else end.addEventListener('abort', done, { once: true });
    });
    await c.stop();
    const explains = await callGraph(s, c.nodes);
    const selfShare = (n: SearchNode) => {
      const st = s.stackSamples(threadLabel(n.focus));
      if (!st.samples) return undefined;
      const code = codeOf(n.focus)!;
      const key = sampleKey(code);
      // less the time a timer found in functions V8 may have inlined into it (their samples are its)
      const inlined = c.nodes.filter((m) => m.state === 'true' && m.inlinedInto === key && threadLabel(m.focus) === threadLabel(n.focus)).reduce((a, m) => a + (m.value ?? 0), 0);
      return Math.max(0, c.samplesOf(st, 'leaves', code) / busySamples(st) - inlined);
    };
    const d = made = diagnosis(c, s.pid, s.processFocus, explains, selfShare);
    addNextSteps(d.bottlenecks, c.nodes, (t) => s.stackSamples(t), 'pid' in target ? (s.fate ? null : target) : { command: target.command, cwd: opts.cwd });
    if (s.fate) d.targetFate = s.fate;
    const hottest = hottestFunctions(s);
    if (hottest.length) d.hottest = hottest;
    const sampling = s.notes.filter((n) => n.startsWith('stack samples'));
    if (sampling.length) d.sampling = sampling;
    return { diagnosis: d, session: s };
  } finally {
    await c.stop().catch(() => undefined);
    await s.detach().catch(() => undefined);
    // the detach comes after the report's last window: what it cost the main thread, beside it
    const dc = s.detachCost;
    if (made && dc && dc.seconds > 0) made.cost.detach = { at: (dc.startedAt - c.startedAt) / 1000, seconds: dc.seconds, main: dc.main, observed: Math.min(1, dc.main / dc.seconds) };
  }
}

/**
 * Each sampled thread's HOTTEST functions (and those tied with the last: hottestCut) by their self time as V8's profiles
 * give it (their own code; Node's code they call is Node's functions'), each with
 * its share with that code too (Diagnosis.hottest; by inspector interrupt, which
 * sees no frames of Node's code, by their share with it); and, by V8's profiler, its HOTTEST
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
    // (ranked as V8 ranks them: a function whose time is in a built-in it calls, such as a file read,
    // is not hotter than one that computes; the built-in is in the list of Node's code, called from it)
    const leaves = new Map(leavesByFunction(st));
    for (const [i, [fn, n]] of hottestCut(leavesByFunction(st, st.profiled ? 'own' : 'leaves')).entries()) {
      const paths = i < HOTTEST_PATHS ? sampledPaths(st, fn).slice(0, 1) : [];
      const withNode = leaves.get(fn) ?? n;
      out.push({ thread, function: fn, self: n / busy, samples: busy, by, ...(withNode > n ? { withNode: withNode / busy } : {}), ...(paths.length ? { paths } : {}) });
    }
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
 * caught b running in a call a made; loop a has such a call site in it, or
 * b is a loop of the same function nested in it.
 */
export async function callGraph(s: Session, nodes: SearchNode[]): Promise<(a: SearchNode, b: SearchNode) => boolean> {
  const calleesOf = (points: PointInfo[]) => new Set(points.flatMap((p) => (p.kind === 'call' && p.callee ? [calleeName(p.callee) ?? p.callee] : [])));
  const callees = new Map<string, Set<string>>();
  /** a true loop's function and span in its script: "<module>/<function>/loop@<line>" -> ... (its callees are in callees) */
  const loops = new Map<string, { fn: string; pos: number; end: number }>();
  const codes = [...new Set(nodes.filter((n) => n.state === 'true').flatMap((n) => codeOf(n.focus) ?? []))];
  const fnOf = (code: string) => parseLoop(`/Code/${code}`)?.fn ?? `/Code/${code}`;
  // every function at once: on the loaded server one listing per function was ~75 round trips
  // into its main thread while the report was made, and it lost 10-37 % of its requests then
  let listed: Resource[] = [];
  if (codes.length) try { listed = await s.resources([...new Set(codes.map(fnOf))]); } catch { /* the target is gone: no pruning */ }
  for (const code of codes) {
    const loop = parseLoop(`/Code/${code}`);
    const r = listed.find((x) => x.path === fnOf(code));
    if (!r) continue;
    const p = loop && loopNamed(loop.loop, r.points);
    if (loop && !p) continue;
    if (p) loops.set(code, { fn: loop!.fn, pos: p.pos, end: p.end });
    callees.set(code, calleesOf(p ? r.points.filter((q) => p.pos <= q.pos && q.end <= p.end) : r.points));
  }
  return (a, b) => {
    const ca = codeOf(a.focus), cb = codeOf(b.focus);
    if (!ca || !cb || ca === cb || threadOf(a.focus) !== threadOf(b.focus)) return false;
    const la = loops.get(ca), lb = loops.get(cb);
    if (lb) return !!la && la.fn === lb.fn && la.pos <= lb.pos && lb.end <= la.end;
    const name = cb.slice(cb.lastIndexOf('/') + 1).replace(/^.*\./, '');
    if (callees.get(ca)?.has(name)) return true;
    // calls the code does not spell out (callbacks, fn.call(this)) show in stack samples
    return !la && (s.stackSamples(threadLabel(a.focus)).above.get(sampleKey(ca))?.has(sampleKey(cb)) ?? false);
  };
}
