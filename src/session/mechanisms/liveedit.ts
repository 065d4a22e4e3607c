// Slots for scripts loaded before the agent, in one thread: one LiveEdit per
// script (planned off thread by instrument/liveedit.ts), refused when its
// pause would be too long or a function of it stays active (the script is
// then reached by breakpoints), verified after, and undone at restore.
import { Cdp } from '../../inspector/cdp';
import { LiveEditPlan, planLiveEditOffThread, PlanTimeout, predictPauseMs } from '../../instrument/liveedit';
import { AppliedEdit, findOldClosures } from '../../instrument/liveedit-verify';
import { positionMap } from '../../instrument/breakpoint';
import { ParanodeError } from '../errors';
import { R } from '../target-runtime';
import type { ScriptRef, ThreadBreakpoints } from './breakpoints';

/** A LiveEdit that will not be made (its pause, a function that stays active): fall back. */
export class LiveEditRefused extends ParanodeError {}

/**
 * V8 leaves Maglev code stale across a LiveEdit: a Fastify server on Node 24 under load
 * died (SIGSEGV, in JIT code) in 3 of 3 attaches; with Maglev switched off at run time
 * alone, or all code deoptimized alone, it still died (Maglev code already there, or
 * compiled again at once); with both, 0 of 3 (docs/BENCHMARKS.md section 16). So before
 * a thread's first LiveEdit: Maglev off for the process (unless the program's own flags
 * keep it off), then all of the thread's code deoptimized (starting V8's precise coverage
 * does that; it is stopped at once, unless NODE_V8_COVERAGE has coverage running).
 */
const MAGLEV_OFF = `(() => {
  const flags = process.execArgv.join(' ') + ' ' + (process.env.NODE_OPTIONS || '');
  const coverage = !!process.env.NODE_V8_COVERAGE;
  if (/--no-maglev|--jitless/.test(flags)) return { switched: false, coverage };
  process.getBuiltinModule('v8').setFlagsFromString('--no-maglev');
  return { switched: true, coverage };
})()`;
/** Maglev back on (after every LiveEdited script of every thread has its text back). */
export const MAGLEV_ON = `process.getBuiltinModule('v8').setFlagsFromString('--maglev')`;

/** V8 refused a LiveEdit because a function of the script is running */
const blocked = (status: string) => status === 'BlockedByActiveFunction' || status === 'BlockedByActiveGenerator';

/** What LiveEdits may do to a thread (ThreadLimits of the same names, defaults applied). */
export interface LiveEditLimits { maxPauseMs: number; activeWaitMs: number; planLimitMs: number; quietPoint: boolean }

export class ThreadLiveEdits {
  /** scriptId -> its original text and runtime number */
  private readonly edited = new Map<string, { original: string; no: number }>();

  /**
   * @param thread 0 for the main thread, else the worker's threadId
   * @param announced every scriptId announced to the debugger (LiveEdit's hidden old copies never are)
   * @param breakpoints where the points LiveEdit gives no slot are reached
   * @param notes where to report what could not be done
   */
  constructor(private readonly thread: number, private readonly cdp: Cdp, private readonly cwd: string, private readonly limits: LiveEditLimits,
    private readonly announced: Set<string>, private readonly breakpoints: ThreadBreakpoints, private readonly notes: string[]) {}

  /** Whether a script was LiveEdited (it is prepared). */
  has(scriptId: string): boolean {
    return this.edited.has(scriptId);
  }

  /**
   * Microseconds this thread was stopped by LiveEdits and the deoptimization before them, as
   * the tool saw them: round trips of the commands, a high bound (they include the wait for the
   * thread to take them), charged to the observed cost (the runtime's tool class), and a
   * quiet-point hold from its asking to its release (the runtime charges that one itself while
   * the session is on; the detach's figure, after it is off, counts it from here).
   */
  chargedUs = 0;

  /** A command that stops the thread: its round trip is charged to the observed cost. */
  private async stopping<T>(work: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await work();
    } finally {
      const us = Math.round((performance.now() - t0) * 1000);
      if (await this.cdp.evaluateNow(`${R}.chargeTool(${us})`).then(() => true, () => false)) this.chargedUs += us;
    }
  }

  /** Maglev was switched off (by this thread's first LiveEdit): the session turns it on again at the end */
  switchedMaglev = false;
  private jitQuiet: Promise<void> | null = null;

  /** Once, before the first LiveEdit: no Maglev code in this thread, and none compiled (see MAGLEV_OFF). */
  private quietJit(): Promise<void> {
    this.jitQuiet ??= (async () => {
      const r = await this.cdp.evaluate<{ switched: boolean; coverage: boolean }>(MAGLEV_OFF);
      this.switchedMaglev = r.switched;
      if (r.coverage) {
        this.notes.push(`thread ${this.thread}: NODE_V8_COVERAGE is collecting coverage, so code was not deoptimized before LiveEdit (V8 may crash on stale Maglev code)`);
        return;
      }
      await this.cdp.send('Profiler.enable');
      await this.stopping(() => this.cdp.send('Profiler.startPreciseCoverage', { callCount: true, detailed: false }));
      await this.cdp.send('Profiler.stopPreciseCoverage');
      await this.cdp.send('Profiler.disable');
      if (r.switched && this.thread === 0) {
        this.notes.push('Maglev (V8\'s mid-tier compiler) is off in the target while LiveEdited code is in place, and its code was deoptimized first: V8 leaves Maglev code stale after a LiveEdit (a loaded Node 24 server crashed); it is switched on again at detach');
      }
    })();
    return this.jitQuiet;
  }

  /** Does this thread's V8 still have LiveEdit? (asked once; Node 26's V8 answers that it does not) */
  private available: Promise<string | null> | null = null;

  /** null when LiveEdit works here, else why not: a dry run of the script's own text tells, at no cost. */
  unavailable(sc: ScriptRef, source: string): Promise<string | null> {
    this.available ??= this.cdp.send('Debugger.setScriptSource', { scriptId: sc.scriptId, scriptSource: source, dryRun: true })
      .then(() => null, (e: Error) => (/no longer available/i.test(e.message) ? e.message.replace(/^.*?:\s*/, '') : null));
    return this.available;
  }

  /**
   * Why a LiveEdit of this script would be refused before it is tried (this V8
   * has none, or its predicted pause is over the limit), or null: what the cost
   * system predicts with. Planning time and active functions are only known by trying.
   */
  async refusal(sc: ScriptRef, length: number, source: () => Promise<string>): Promise<string | null> {
    const missing = await (this.available ?? this.unavailable(sc, await source()));
    if (missing) return `this Node's V8 has no LiveEdit (${missing})`;
    const t = performance.now();
    if (!this.heap || t - this.heap.at > 1000) this.heap = { at: t, used: (await this.cdp.send('Runtime.getHeapUsage')).usedSize };
    return predictPauseMs(this.heap.used, length) > this.limits.maxPauseMs ? 'its predicted LiveEdit pause is over the limit (--max-pause)' : null;
  }

  private heap?: { at: number; used: number };

  /** Prepare an already-loaded script by one LiveEdit; LiveEditRefused if it will not be made. */
  async prepare(sc: ScriptRef, source: string): Promise<AppliedEdit> {
    const { maxPauseMs, activeWaitMs, planLimitMs } = this.limits;
    const missing = await this.unavailable(sc, source);
    if (missing) throw new LiveEditRefused(`this Node's V8 has no LiveEdit (${missing}): ${sc.module} is reached by breakpoints`);
    const heap = await this.cdp.send('Runtime.getHeapUsage');
    // refuse before planning: the prediction itself is costly on a huge script
    const predicted = predictPauseMs(heap.usedSize, source.length);
    if (predicted > maxPauseMs) {
      throw new LiveEditRefused(`refused to LiveEdit ${sc.module}: it would pause the target for about ${Math.round(predicted)} ms ` +
        `(script ${(source.length / 1e6).toFixed(1)} MB, heap ${(heap.usedSize / 1e6).toFixed(0)} MB), over the limit of ${maxPauseMs} ms (--max-pause)`);
    }
    const no = await this.cdp.evaluate<number>(`${R}.allocScript(${JSON.stringify(`liveedit:${sc.filename}:${sc.scriptId}`)})`);
    let plan: LiveEditPlan;
    try {
      plan = await planLiveEditOffThread(source, no, heap.usedSize, { filename: sc.filename, cwd: this.cwd }, planLimitMs);
    } catch (e) {
      if (e instanceof PlanTimeout) throw new LiveEditRefused(`LiveEdit of ${sc.module} not made: ${e.message} (planLimitMs)`);
      throw e;
    }
    await this.cdp.evaluate(`${R}.defineGlobals(${no}, ${plan.analysis.functions.length})`);
    await this.quietJit();
    // every attempt, refused ones too, leaves V8 a copy of the script under its name, which
    // later sessions are told of as a script: the runtime (which outlives the session) keeps
    // which one is the program's
    await this.cdp.evaluate(`${R}.noteLiveEdit(${JSON.stringify(sc.filename)}, ${JSON.stringify(sc.scriptId)})`);
    const status = await this.setSource(sc.scriptId, plan.code, activeWaitMs);
    if (blocked(status)) {
      throw new LiveEditRefused(`LiveEdit of ${sc.module} not applied: a function of it stayed active for ${activeWaitMs / 1000} s, also between the program's callbacks (${status})`);
    }
    if (status !== 'Ok') throw new ParanodeError(`LiveEdit of ${sc.module} not applied: ${status}`);
    // verified: the script holds the new text (closures are checked per batch, see verify)
    if ((await this.cdp.send('Debugger.getScriptSource', { scriptId: sc.scriptId })).scriptSource !== plan.code) {
      throw new LiveEditRefused(`LiveEdit of ${sc.module} answered Ok but the script kept its old text`);
    }
    this.edited.set(sc.scriptId, { original: source, no });
    await this.cdp.agent('restore-plan', { thread: this.thread, scripts: [{ scriptId: sc.scriptId, source }] }).catch(() => undefined);
    const noSlot = plan.unslotted.map((u) => [u.fn, u.point]);
    this.breakpoints.addScript(no, { scriptId: sc.scriptId, text: plan.code, module: sc.module, functions: plan.analysis.functions, map: positionMap(plan.ins) });
    await this.cdp.evaluate(`${R}.registerScript(${no}, ${JSON.stringify(sc.module)}, ${JSON.stringify(plan.analysis)}, undefined, ${JSON.stringify(sc.filename)}, 'liveedit', ${JSON.stringify(noSlot)})`);
    const byReason = new Map<string, string[]>();
    for (const u of plan.unslotted) {
      const f = plan.analysis.functions[u.fn];
      // loops never get slots by LiveEdit: said where a request names one (not placed, with the reason)
      const kind = f.points[u.point]?.kind;
      if (kind === 'loop' || kind === 'trip') continue;
      const names = byReason.get(u.reason) ?? [];
      if (!names.includes(f.name)) names.push(f.name);
      byReason.set(u.reason, names);
    }
    for (const [reason, names] of byReason) {
      this.notes.push(`${sc.module}${this.thread ? ` (thread ${this.thread})` : ''}: no slot (${reason}) in ${names.length} function(s): ` +
        `${names.slice(0, 8).join(', ')}${names.length > 8 ? ', ...' : ''}; probes there use breakpoints`);
    }
    const changed = [...new Set(plan.ins.map((x) => x.fn))].map((f) => plan.analysis.functions[f]);
    return { scriptId: sc.scriptId, module: sc.module, original: source, changed };
  }

  /**
   * Look for closures the LiveEdits left on old code (V8 answered Ok for them
   * all): they run without slots, and no other mechanism can reach them.
   */
  async verify(applied: AppliedEdit[]): Promise<void> {
    const old = await findOldClosures(this.cdp, applied, this.announced);
    const byModule = new Map<string, string[]>();
    for (const o of old) byModule.set(o.edit.module, [...(byModule.get(o.edit.module) ?? []), o.fn.name]);
    for (const [module, names] of byModule) {
      this.notes.push(`${module}${this.thread ? ` (thread ${this.thread})` : ''}: LiveEdit left closures made before it on the old code of ` +
        `${names.length} function(s): ${names.slice(0, 8).join(', ')}${names.length > 8 ? ', ...' : ''}; calls through them are not counted`);
    }
  }

  /**
   * Set a script's text; its status ('Ok' or why not). Tried where the command
   * lands first; when a function of the script is active there, again at a
   * quiet point of the thread (Runtime.holdQuiet: between the program's
   * callbacks), until waitMs. Each try that V8 refuses still costs it a compile
   * of the whole text and leaves a copy of the script: few tries, not a poll.
   */
  private async setSource(scriptId: string, text: string, waitMs: number): Promise<string> {
    const set = async () => ((await this.cdp.send('Debugger.setScriptSource', { scriptId, scriptSource: text })) as { status?: string }).status ?? 'Ok';
    let status = await this.stopping(set);
    const deadline = Date.now() + waitMs;
    while (blocked(status) && Date.now() < deadline) {
      if (!this.limits.quietPoint) {
        await new Promise((res) => setTimeout(res, 50));
        status = await this.stopping(set);
        continue;
      }
      // the hold's whole time is charged to the tool by the runtime
      const held = performance.now();
      await this.cdp.evaluateNow(`${R}.holdQuiet(${this.limits.maxPauseMs + 1000})`);
      try {
        // asked from inside the hold, the runtime says so: the thread waits there, the program's functions off the stack
        while (!(await this.cdp.evaluateNow<boolean>(`${R}.quietHeld()`))) {
          if (Date.now() > deadline) return status;
          await new Promise((res) => setTimeout(res, 5));
        }
        status = await set();
      } finally {
        await this.cdp.evaluateNow(`${R}.releaseQuiet()`).catch(() => undefined);
        this.chargedUs += Math.round((performance.now() - held) * 1000);
      }
      // still active between callbacks (a generator of it running, a program that never
      // returns to its event loop): not again at once
      if (blocked(status)) await new Promise((res) => setTimeout(res, 100));
    }
    return status;
  }

  /** Every LiveEdited script back to its original text. */
  async restore(): Promise<void> {
    for (const [scriptId, e] of this.edited) {
      const status = await this.setSource(scriptId, e.original, 5000);
      if (status !== 'Ok') this.notes.push(`script ${scriptId} stayed active: its slots are switched off but its text was not restored (${status})`);
    }
    this.edited.clear();
  }
}
