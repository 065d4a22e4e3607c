// One thread of a target (the main thread or a worker): its CDP session, the
// scripts it has loaded, the LiveEdits made in it, and its in-target runtime.
import * as path from 'path';
import { describePoint } from '../analysis/describe';
import { analyzeScript, FunctionInfo, ScriptAnalysis } from '../analysis/functions';
import type { FallbackPoint, Mechanism, ProbeSpec } from '../agent/runtime';
import { isOwnCode, ownCodeDirs } from '../agent/own-code';
import { Cdp } from '../inspector/cdp';
import { LiveEditPlan, planLiveEditOffThread, PlanTimeout, predictPauseMs } from '../instrument/liveedit';
import { AppliedEdit, findOldClosures } from '../instrument/liveedit-verify';
import { codeGlobToRegex } from '../instrument/probe';
import { BreakLocation, breakCondition, lineStarts, pickBreakLocation, positionMap, toLocation, UNREACHABLE } from '../instrument/breakpoint';
import { ParanodeError } from './errors';
import { R } from './target-runtime';

/** paranode's own code in the target: not the program's */
const OWN = ownCodeDirs();

export interface LoadedScript { scriptId: string; url: string; filename: string; module: string }
export interface Sample { t: number; counters: [string, number][]; timers: [string, number, boolean][]; notes?: string[]; thread?: number[]; scripts?: number; objects?: string[]; stack?: string[] }
export interface RuntimeScript { no: number; module: string; filename: string; how: Mechanism; functions: FunctionInfo[] }

/** What a thread may do to its target (SessionOptions of the same names; defaults in parentheses). */
export interface ThreadLimits {
  /** refuse a LiveEdit predicted to pause longer (2000 ms) */
  maxPauseMs?: number;
  /** retry a LiveEdit blocked by an active function this long (5000 ms) */
  activeWaitMs?: number;
  /** points reached by breakpoints, at most (200) */
  maxBreakpoints?: number;
  /** give up planning a LiveEdit after this long (60000 ms) */
  planLimitMs?: number;
}

/** How many of a probe's points each mechanism took in one thread. */
export interface PlacedCounts { slot: number; breakpoint: number; wrap: number; missed: number }

/** A LiveEdit that will not be made (its pause, a function that stays active): fall back. */
class LiveEditRefused extends ParanodeError {}

interface BreakpointAt {
  id: string;
  scriptId: string;
  lineNumber: number;
  columnNumber: number;
  /** by "no:fn:slot": its condition and the probes that need it */
  parts: Map<string, { order: number; condition: string; probes: Set<number> }>;
}

interface FallbackScript {
  scriptId: string;
  /** the script's current text, and where an offset of the analysed text is in it */
  text: string;
  map: (pos: number) => number;
  starts?: number[];
  module: string;
  functions: FunctionInfo[];
}

export class TargetThread {
  private readonly loaded = new Map<string, LoadedScript>();
  /** every scriptId announced to the debugger (LiveEdit's hidden old copies never are) */
  private readonly announced = new Set<string>();
  private readonly edited = new Map<string, { original: string; no: number }>();
  /** runtime script number -> what placing breakpoints in it needs */
  private readonly fallbackScripts = new Map<number, FallbackScript>();
  /** fallback breakpoints by "scriptId:line:column", and the location of each "no:fn:slot" placed */
  private readonly locations = new Map<string, BreakpointAt>();
  private readonly slotAt = new Map<string, string>();
  /** analyses of loaded, unprepared scripts, by scriptId */
  private readonly analyses = new Map<string, ScriptAnalysis>();
  private scriptsCopy: { version: number; scripts: RuntimeScript[] } = { version: -1, scripts: [] };
  private wrapNoted = false;

  private readonly maxPauseMs: number;
  private readonly activeWaitMs: number;
  private readonly maxBreakpoints: number;
  private readonly planLimitMs: number;

  /**
   * @param id 0 for the main thread, else the worker's threadId
   * @param notes where to report what could not be done
   */
  constructor(readonly id: number, readonly cdp: Cdp, private readonly cwd: string, limits: ThreadLimits, private readonly notes: string[]) {
    this.maxPauseMs = limits.maxPauseMs ?? 2000;
    this.activeWaitMs = limits.activeWaitMs ?? 5000;
    this.maxBreakpoints = limits.maxBreakpoints ?? 200;
    this.planLimitMs = limits.planLimitMs ?? 60000;
    cdp.on('Debugger.scriptParsed', (p: any) => this.onScript(p));
  }

  get label(): string { return this.id === 0 ? 'main' : String(this.id); }

  async enable(): Promise<void> {
    await this.cdp.send('Debugger.enable', {});
  }

  private onScript(p: any): void {
    this.announced.add(p.scriptId);
    const url: string = p.url ?? '';
    if (!url || url.startsWith('node:')) return;
    let filename = url;
    if (url.startsWith('file://')) { try { filename = decodeURIComponent(new URL(url).pathname); } catch { return; } }
    if (!filename.startsWith('/')) return;
    if (isOwnCode(filename, OWN)) return;
    this.loaded.set(p.scriptId, { scriptId: p.scriptId, url, filename, module: path.relative(this.cwd, filename) || filename });
  }

  /** Prepared scripts with their functions matching a glob's regex (all when none); built-ins if the glob names them. */
  async runtimeScripts(match = '', builtins?: string): Promise<RuntimeScript[]> {
    if (builtins) await this.cdp.evaluate(`${R}.builtins(${JSON.stringify(builtins)})`);
    const re = match ? new RegExp(match) : null;
    const out: RuntimeScript[] = [];
    for (const s of await this.registered()) {
      const functions = re ? s.functions.filter((f) => re.test(`${f.module ?? s.module}/${f.name}`)) : s.functions;
      if (functions.length) out.push({ ...s, functions });
    }
    return out;
  }

  /** The runtime's registered scripts, fetched again only when they changed (one small round trip when not). */
  private async registered(): Promise<RuntimeScript[]> {
    const fresh = await this.cdp.evaluate<{ version: number; scripts: RuntimeScript[] } | null>(`${R}.scriptsIf(${this.scriptsCopy.version})`);
    if (fresh) this.scriptsCopy = fresh;
    return this.scriptsCopy.scripts;
  }

  /** Files the runtime has registered (prepared, or reached by breakpoints). */
  private async registeredFiles(): Promise<Set<string>> {
    return new Set((await this.registered()).map((s) => s.filename));
  }

  /** Scripts loaded before the agent and not prepared yet whose module may match a glob, analysed. */
  async unprepared(glob: string): Promise<{ script: LoadedScript; functions: FunctionInfo[] }[]> {
    const registered = await this.registeredFiles();
    const out: { script: LoadedScript; functions: FunctionInfo[] }[] = [];
    for (const script of this.loaded.values()) {
      if (registered.has(script.filename) || this.edited.has(script.scriptId)) continue;
      if (!moduleMayMatch(glob, script.module)) continue;
      let analysis = this.analyses.get(script.scriptId);
      if (!analysis) {
        const source = await this.source(script);
        try {
          analysis = analyzeScript(source, undefined, { filename: script.filename, cwd: this.cwd }).analysis;
        } catch {
          this.notes.push(`${script.module}: not parsed, so not instrumentable`);
          analysis = { functions: [], sourceType: 'script' };
        }
        this.analyses.set(script.scriptId, analysis);
      }
      out.push({ script, functions: analysis.functions });
    }
    return out;
  }

  private async source(script: LoadedScript): Promise<string> {
    return (await this.cdp.send('Debugger.getScriptSource', { scriptId: script.scriptId })).scriptSource;
  }

  /**
   * Prepare what the probe needs in this thread, then place it: by slots where
   * there are slots, by breakpoints where there are none. Returns how many points
   * each mechanism took, or null if no function matched.
   */
  async addProbe(spec: ProbeSpec, resource: string): Promise<PlacedCounts | null> {
    const re = new RegExp(spec.match);
    let matched = false;
    const applied: AppliedEdit[] = [];
    for (const { script, functions } of await this.unprepared(resource)) {
      if (!functions.some((f) => re.test(`${f.module ?? script.module}/${f.name}`))) continue;
      matched = true;
      const analysis = this.analyses.get(script.scriptId)!;
      this.analyses.delete(script.scriptId);
      const source = await this.source(script);
      try {
        applied.push(await this.prepareLoaded(script, source));
      } catch (e) {
        if (!(e instanceof LiveEditRefused)) throw e;
        await this.registerForBreakpoints(script, source, analysis, e.message);
      }
    }
    if (applied.length) await this.verifyEdits(applied);
    const r = await this.cdp.evaluate<{ placed: number; wrapped: number; matched: boolean; fallback: FallbackPoint[] }>(`${R}.addProbe(${JSON.stringify(spec)})`);
    const counts: PlacedCounts = { slot: r.placed, breakpoint: 0, wrap: r.wrapped, missed: 0 };
    if (r.wrapped && !this.wrapNoted) {
      this.wrapNoted = true;
      this.notes.push(`built-in functions are reached by wrapping their exports: calls through references taken before the probe ` +
        `(const { f } = require(...)) are not seen; a module's calls to itself while serving a call (writeFileSync -> openSync) are not counted again`);
    }
    const missed = new Map<string, string[]>();
    for (const fp of r.fallback) {
      const why = await this.placeBreakpoint(spec.id, fp, /\$0\b/.test(spec.snippet.body));
      if (why === UNREACHABLE) continue;
      if (!why) { counts.breakpoint++; continue; }
      counts.missed++;
      const sc = this.fallbackScripts.get(fp.no);
      const fn = sc?.functions[fp.fn];
      const where = fn ? `/Code/${fn.module ?? sc!.module}/${fn.name} ${describePoint(fn.points[fp.point])}` : `script ${fp.no}`;
      missed.set(why, [...(missed.get(why) ?? []), where]);
    }
    for (const [why, where] of missed) {
      this.notes.push(`${where.length} point(s)${this.id ? ` in thread ${this.id}` : ''} not placed (${why}): ${where.slice(0, 5).join('; ')}${where.length > 5 ? '; ...' : ''}`);
    }
    return matched || r.matched ? counts : null;
  }

  /** Take a probe's breakpoints out (those no other probe needs). */
  async removeProbe(id: number): Promise<void> {
    await this.cdp.evaluate(`${R}.removeProbe(${id})`);
    for (const bp of this.locations.values()) {
      let changed = false;
      for (const [key, part] of bp.parts) {
        if (!part.probes.delete(id) || part.probes.size) continue;
        bp.parts.delete(key);
        this.slotAt.delete(key);
        changed = true;
      }
      if (changed) await this.setBreakpoint(bp);
    }
  }

  /** A script that will not be LiveEdited: its functions are reached by breakpoints. */
  private async registerForBreakpoints(sc: LoadedScript, source: string, analysis: ScriptAnalysis, why: string): Promise<void> {
    const no = await this.cdp.evaluate<number>(`${R}.allocScript()`);
    this.fallbackScripts.set(no, { scriptId: sc.scriptId, text: source, module: sc.module, functions: analysis.functions, map: (p) => p });
    await this.cdp.evaluate(`${R}.registerScript(${no}, ${JSON.stringify(sc.module)}, ${JSON.stringify(analysis)}, function(){}, ${JSON.stringify(sc.filename)}, 'breakpoint')`);
    this.notes.push(`${why}; its points are reached by breakpoints instead, each hit of which stops the thread briefly ` +
      `(a debugger evaluation, about 0.1-0.4 ms: see docs/BENCHMARKS.md)`);
  }

  /** Set (or share) the breakpoint of one point; returns why not if it cannot be. */
  private async placeBreakpoint(probe: number, fp: FallbackPoint, usesReturn: boolean): Promise<string | null> {
    const key = `${fp.no}:${fp.fn}:${fp.slot}`;
    const at = this.slotAt.get(key);
    if (at) { this.locations.get(at)!.parts.get(key)!.probes.add(probe); return null; }
    const sc = this.fallbackScripts.get(fp.no);
    if (!sc) return 'no slot here and the script is not known to the tool';
    const fn = sc.functions[fp.fn];
    const p = fn.points[fp.point];
    if (fp.slot % 2 === 1) return 'a breakpoint cannot run code after a call returns (postInsn)';
    if (this.slotAt.size >= this.maxBreakpoints) return `over the limit of ${this.maxBreakpoints} breakpoint points (maxBreakpoints)`;
    const starts = sc.starts ??= lineStarts(sc.text);
    const { locations } = await this.cdp.send('Debugger.getPossibleBreakpoints', {
      start: { scriptId: sc.scriptId, ...toLocation(starts, sc.map(fn.start)) },
      end: { scriptId: sc.scriptId, ...toLocation(starts, sc.map(fn.end)) },
      restrictToFunction: true,
    });
    const locs: BreakLocation[] = locations.map((l) => ({ ...l, offset: starts[l.lineNumber] + (l.columnNumber ?? 0), columnNumber: l.columnNumber ?? 0 }));
    const loc = pickBreakLocation(fn, p, locs, sc.map);
    if (typeof loc === 'string') return loc;
    // several points can share a location (an entry and the first call): one breakpoint runs them all, in point order
    const locKey = `${sc.scriptId}:${loc.lineNumber}:${loc.columnNumber}`;
    const bp = this.locations.get(locKey) ?? { id: '', scriptId: sc.scriptId, lineNumber: loc.lineNumber, columnNumber: loc.columnNumber, parts: new Map() };
    bp.parts.set(key, { order: fp.point, condition: breakCondition(fp.no, fn, p, fp.slot), probes: new Set([probe]) });
    this.locations.set(locKey, bp);
    this.slotAt.set(key, locKey);
    await this.setBreakpoint(bp);
    if (p.kind === 'exit' && usesReturn) this.notes.push(`/Code/${fn.module ?? sc.module}/${fn.name} ${describePoint(p)}: by breakpoint, $return reads undefined there`);
    return null;
  }

  /** (Re)set the one breakpoint of a location with the conditions of all its parts. */
  private async setBreakpoint(bp: BreakpointAt): Promise<void> {
    if (bp.id) await this.cdp.send('Debugger.removeBreakpoint', { breakpointId: bp.id }).catch(() => undefined);
    bp.id = '';
    if (!bp.parts.size) return;
    const parts = [...bp.parts.values()].sort((a, b) => a.order - b.order).map((x) => x.condition);
    const r = await this.cdp.send('Debugger.setBreakpoint', {
      location: { scriptId: bp.scriptId, lineNumber: bp.lineNumber, columnNumber: bp.columnNumber },
      condition: parts.length === 1 ? parts[0] : `(${parts.join(',')})`,
    });
    bp.id = r.breakpointId;
  }

  /**
   * Look for closures the LiveEdits left on old code (V8 answered Ok for them
   * all): they run without slots, and no other mechanism can reach them.
   */
  private async verifyEdits(applied: AppliedEdit[]): Promise<void> {
    const old = await findOldClosures(this.cdp, applied, this.announced);
    const byModule = new Map<string, string[]>();
    for (const o of old) byModule.set(o.edit.module, [...(byModule.get(o.edit.module) ?? []), o.fn.name]);
    for (const [module, names] of byModule) {
      this.notes.push(`${module}${this.id ? ` (thread ${this.id})` : ''}: LiveEdit left closures made before it on the old code of ` +
        `${names.length} function(s): ${names.slice(0, 8).join(', ')}${names.length > 8 ? ', ...' : ''}; calls through them are not counted`);
    }
  }

  /** Prepare an already-loaded script by one LiveEdit. */
  private async prepareLoaded(sc: LoadedScript, source: string): Promise<AppliedEdit> {
    const heap = await this.cdp.send('Runtime.getHeapUsage');
    // refuse before planning: the prediction itself is costly on a huge script
    const predicted = predictPauseMs(heap.usedSize, source.length);
    if (predicted > this.maxPauseMs) {
      throw new LiveEditRefused(`refused to LiveEdit ${sc.module}: it would pause the target for about ${Math.round(predicted)} ms ` +
        `(script ${(source.length / 1e6).toFixed(1)} MB, heap ${(heap.usedSize / 1e6).toFixed(0)} MB), over the limit of ${this.maxPauseMs} ms (--max-pause)`);
    }
    const no = await this.cdp.evaluate<number>(`${R}.allocScript()`);
    let plan: LiveEditPlan;
    try {
      plan = await planLiveEditOffThread(source, no, heap.usedSize, { filename: sc.filename, cwd: this.cwd }, this.planLimitMs);
    } catch (e) {
      if (e instanceof PlanTimeout) throw new LiveEditRefused(`LiveEdit of ${sc.module} not made: ${e.message} (planLimitMs)`);
      throw e;
    }
    await this.cdp.evaluate(`${R}.defineGlobals(${no}, ${plan.analysis.functions.length})`);
    const deadline = Date.now() + this.activeWaitMs;
    for (;;) {
      const r: any = await this.cdp.send('Debugger.setScriptSource', { scriptId: sc.scriptId, scriptSource: plan.code });
      if (!r.status || r.status === 'Ok') break;
      const blocked = r.status === 'BlockedByActiveFunction' || r.status === 'BlockedByActiveGenerator';
      if (blocked && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, 50));
        continue;
      }
      if (blocked) throw new LiveEditRefused(`LiveEdit of ${sc.module} not applied: a function of it stayed active for ${this.activeWaitMs / 1000} s (${r.status})`);
      throw new ParanodeError(`LiveEdit of ${sc.module} not applied: ${r.status}`);
    }
    // verified: the script holds the new text (closures are checked per batch, see verifyEdits)
    if (await this.source(sc) !== plan.code) {
      throw new LiveEditRefused(`LiveEdit of ${sc.module} answered Ok but the script kept its old text`);
    }
    this.edited.set(sc.scriptId, { original: source, no });
    await this.cdp.agent('restore-plan', { thread: this.id, scripts: [{ scriptId: sc.scriptId, source }] }).catch(() => undefined);
    const noSlot = plan.unslotted.map((u) => [u.fn, u.point]);
    this.fallbackScripts.set(no, { scriptId: sc.scriptId, text: plan.code, module: sc.module, functions: plan.analysis.functions, map: positionMap(plan.ins) });
    await this.cdp.evaluate(`${R}.registerScript(${no}, ${JSON.stringify(sc.module)}, ${JSON.stringify(plan.analysis)}, undefined, ${JSON.stringify(sc.filename)}, 'liveedit', ${JSON.stringify(noSlot)})`);
    const byReason = new Map<string, string[]>();
    for (const u of plan.unslotted) {
      const names = byReason.get(u.reason) ?? [];
      const f = plan.analysis.functions[u.fn];
      if (!names.includes(f.name)) names.push(f.name);
      byReason.set(u.reason, names);
    }
    for (const [reason, names] of byReason) {
      this.notes.push(`${sc.module}${this.id ? ` (thread ${this.id})` : ''}: no slot (${reason}) in ${names.length} function(s): ` +
        `${names.slice(0, 8).join(', ')}${names.length > 8 ? ', ...' : ''}; probes there use breakpoints`);
    }
    const changed = [...new Set(plan.ins.map((x) => x.fn))].map((f) => plan.analysis.functions[f]);
    return { scriptId: sc.scriptId, module: sc.module, original: source, changed };
  }

  /** scripts the runtime had registered at the last sample (new ones are announced) */
  private knownScripts = 0;
  /** /SyncObject resources (files, message channels) the thread's snippets have seen */
  readonly syncObjects = new Set<string>();

  /** One sample; `onNew` hears of the scripts registered since the last one (resources that appeared). */
  async sample(onNew?: (resources: string[]) => void): Promise<Sample> {
    const s = await this.cdp.evaluate<Sample>(`${R}.sample()`);
    if (s.notes) this.notes.push(...s.notes.map((n) => (this.id ? `${n} (thread ${this.id})` : n)));
    if (onNew && s.scripts !== undefined && s.scripts > this.knownScripts) {
      const added = await this.cdp.evaluate<{ module: string; functions: string[] }[]>(`${R}.modulesSince(${this.knownScripts})`);
      this.knownScripts = s.scripts;
      const paths = added.flatMap((m) => [`/Code/${m.module}`, ...m.functions.map((f) => `/Code/${f}`)]);
      if (paths.length) onNew(paths);
    }
    if (s.objects) {
      for (const o of s.objects) this.syncObjects.add(o);
      onNew?.(s.objects);
    }
    return s;
  }

  /** Slots off, load hook out, LiveEdited scripts back to their original text. */
  async restore(): Promise<void> {
    for (const bp of this.locations.values()) if (bp.id) await this.cdp.send('Debugger.removeBreakpoint', { breakpointId: bp.id });
    this.locations.clear();
    this.slotAt.clear();
    await this.cdp.evaluate(`${R}.deactivate()`);
    for (const [scriptId, e] of this.edited) {
      const deadline = Date.now() + 5000;
      for (;;) {
        const r: any = await this.cdp.send('Debugger.setScriptSource', { scriptId, scriptSource: e.original });
        if (!r.status || r.status === 'Ok') break;
        if (Date.now() > deadline) { this.notes.push(`script ${scriptId} stayed active: its slots are switched off but its text was not restored`); break; }
        await new Promise((res) => setTimeout(res, 50));
      }
    }
    this.edited.clear();
    await this.cdp.send('Debugger.disable');
  }
}

/** Cheap pre-filter: could a glob's module part match this module? */
function moduleMayMatch(glob: string, module: string): boolean {
  const g = glob.slice('/Code/'.length);
  if (g.startsWith('node:')) return false;
  const cut = g.lastIndexOf('/');
  if (cut < 0 || g.endsWith('**')) return true;
  // named by a source map (e.g. a .ts file): the generated script's path says nothing
  if (!/\.[cm]?js$|\*$/.test(g.slice(0, cut))) return true;
  try { return new RegExp(codeGlobToRegex('/Code/' + g.slice(0, cut))).test(module); } catch { return true; }
}
