// One thread of a target (the main thread or a worker): its CDP session, the
// scripts it has loaded, its in-target runtime, and the order in which a probe
// reaches the thread's code by each way (./mechanisms): loaded scripts are
// LiveEdited, the runtime places by slot and by wrapping, breakpoints take
// the points left.
import { createHash } from 'crypto';
import * as fs from 'fs';
import { analyzeScript, FunctionInfo, ScriptAnalysis } from '../analysis/functions';
import { moduleNameOf } from '../analysis/module-name';
import { mapSources } from '../analysis/sourcemap';
import { FrameNames } from './frame-names';
import { COST_SERIES, PINNED_CLASS } from '../agent/runtime';
import { SAMPLE_INTERVAL_US, type StackRecord } from '../agent/cpu-sampler';
import { type PackedStacks, StackUnpacker } from '../agent/stack-packing';
import { namesWholeModules } from '../agent/builtins';
import type { FallbackPoint, FunctionsPart, Mechanism, ProbeSpec, ScriptIndexPart } from '../agent/runtime';
import { isOwnCode, ownCodeDirs } from '../agent/own-code';
import { Cdp, CdpError } from '../inspector/cdp';
import type { AppliedEdit } from '../instrument/liveedit-verify';
import { codeGlobToRegex } from '../instrument/probe';
import { CONDITION_URL, UNREACHABLE } from '../instrument/breakpoint';
import { ThreadBreakpoints } from './mechanisms/breakpoints';
import { LiveEditRefused, ThreadLiveEdits } from './mechanisms/liveedit';
import type { PlacedCounts } from './mechanisms/mechanism';
import { R } from './target-runtime';
import { builtinModuleMatch } from './probe-spec';
import { Interrupted } from './errors';

import type { PathFunction, PathRecord } from '../agent/call-paths';

/** paranode's own code in the target: not the program's */
const OWN = ownCodeDirs();

export interface LoadedScript {
  scriptId: string; url: string; filename: string; module: string;
  /** it names a source map: its functions' modules may be others; the map's file where it is one (not inline) */
  mapped?: boolean; sourceMap?: string;
  /** the SHA-256 of the text V8 compiled (in UTF-8, hex), as the debugger announced it */
  hash?: string;
}
export interface Sample { t: number; counters: [string, number][]; timers: [string, number, boolean][];
  /** queues (Instances.queue): name, this thread's integral (ms) at `at`, its count there, `at`, when the cell first changed (the process's monotonic clock, ms), the messages it sent, when it last changed */
  queues?: [string, number, number, number, number, number, number][];
  /** when the sample was taken, on the process's monotonic clock (ms) */
  mono?: number; notes?: string[]; thread?: number[]; scripts?: number; objects?: string[];
  /** the thread values count from the thread's start (watched since before its first line) */
  fromStart?: boolean;
  /** stack samples, innermost function first, with how many samples had each and, where V8's profiler took them, more (see StackRecord) */
  stacks?: StackRecord[];
  /** present where V8's profiler took the stacks: how many of them found the event loop idle */
  idle?: number;
  /** of the stack samples, those in paranode's module preparation below the program's innermost frame */
  tool?: number;
  /** V8's sampling interval of these stack samples (µs), where the sampler's cost made it longer than SAMPLE_INTERVAL_US */
  sampleUs?: number;
  /** call paths whose totals changed since the last sample (agent/call-paths) */
  paths?: PathRecord[];
  /** where the functions new in those paths are */
  pathFunctions?: PathFunction[] }
/** A note from a thread's runtime, as the session lists it: a worker's says which thread. */
export const inThread = (note: string, thread: number): string => (thread ? `${note} (thread ${thread})` : note);

export interface RuntimeScript { no: number; module: string; filename: string; how: Mechanism; functions: FunctionInfo[] }

/** A registered script as the runtime's index gives it; its functions once fetched (see TargetThread.registered). */
type IndexedScript = ScriptIndexPart['added'][number] & { functions?: FunctionInfo[] };

/** What a thread may do to its target (SessionOptions of the same names; defaults in parentheses). */
export interface ThreadLimits {
  /** refuse a LiveEdit predicted to pause longer (2000 ms) */
  maxPauseMs?: number;
  /** retry a LiveEdit blocked by an active function this long (5000 ms) */
  activeWaitMs?: number;
  /**
   * retry it at a quiet point: the thread held in a callback of the agent's, between the
   * program's, while the LiveEdit is made (true); false: only where the command lands
   */
  quietPoint?: boolean;
  /** points reached by breakpoints, at most (200) */
  maxBreakpoints?: number;
  /** give up planning a LiveEdit after this long (60000 ms) */
  planLimitMs?: number;
  /** told of long work as it goes (each script a request LiveEdits, with its number and the total) */
  progress?: (message: string) => void;
  /**
   * once aborted (a run's --duration ended), a request stops preparing scripts and
   * fails with Interrupted: a whole-program glob over an unprepared program
   * LiveEdits hundreds of scripts, minutes of work
   */
  signal?: AbortSignal;
}

export class TargetThread {
  private readonly loaded = new Map<string, LoadedScript>();
  /** every scriptId announced to the debugger (LiveEdit's hidden old copies never are) */
  private readonly announced = new Set<string>();
  /** the points without a slot */
  private readonly breakpoints: ThreadBreakpoints;
  /** slots for scripts loaded before the agent */
  private readonly liveEdits: ThreadLiveEdits;
  /** analyses of loaded, unprepared scripts, by scriptId */
  private readonly analyses = new Map<string, ScriptAnalysis>();
  /** analyses of unprepared scripts made from their files (for their names only: see namesFromFile), by scriptId; null: not the text V8 has */
  private readonly fileAnalyses = new Map<string, ScriptAnalysis | null>();
  /** the runtime's registered scripts as of `version`, by number (see registered()) */
  private readonly index: { version: number; scripts: Map<number, IndexedScript> } = { version: -1, scripts: new Map() };
  /** the index's scripts whose names were announced (see sample()) */
  private readonly named = new WeakSet<IndexedScript>();
  /**
   * Built-in modules named whole (no wildcard) that the runtime has made resources of:
   * made once, they stay. Asking again waits for the thread's safe point (the wrapping
   * runs regexps): up to 200 ms in a busy thread, for every prediction and listing of a
   * message-passing test (the worker demo's search spent 30-40 s there).
   */
  private readonly builtinsMade = new Set<string>();
  private wrapNoted = false;
  /** a worker waiting at its start pauses at its first script once (session.startAgentAtFirstScript) */
  private pausesExpected = false;

  /**
   * @param id 0 for the main thread, else the worker's threadId
   * @param notes where to report what could not be done
   */
  private readonly progress: (message: string) => void;
  private readonly signal?: AbortSignal;

  constructor(readonly id: number, readonly cdp: Cdp, private readonly cwd: string, limits: ThreadLimits, private readonly notes: string[]) {
    this.frames = new FrameNames(cwd);
    this.progress = limits.progress ?? (() => undefined);
    this.signal = limits.signal;
    this.breakpoints = new ThreadBreakpoints(cdp, limits.maxBreakpoints ?? 200, notes);
    this.liveEdits = new ThreadLiveEdits(id, cdp, cwd, {
      maxPauseMs: limits.maxPauseMs ?? 2000, activeWaitMs: limits.activeWaitMs ?? 5000, planLimitMs: limits.planLimitMs ?? 60000,
      quietPoint: limits.quietPoint ?? true,
    }, this.announced, this.breakpoints, notes);
    cdp.on('Debugger.scriptParsed', (p: any) => this.onScript(p));
    cdp.on('Debugger.paused', (p: any) => this.onPaused(p));
  }

  get label(): string { return this.id === 0 ? 'main' : String(this.id); }

  /** filename -> the scriptId earlier sessions LiveEdited (see Runtime.noteLiveEdit) */
  private liveEditedBefore = new Map<string, string>();

  /**
   * Debugger on, pauses off: a `debugger;` statement in the program must not
   * stop it (breakpoint conditions still run). A worker waiting at its start
   * keeps pauses until the agent is in (`skipPauses` then). Where every module of
   * the thread was prepared at load (the dormant agent), the debugger stays off
   * until a module needs it (one the load hook left unprepared).
   */
  async enable(pauses = false): Promise<void> {
    // a worker waiting for the debugger has no runtime yet (and no earlier session)
    const before = await this.cdp.evaluateNow<[string, string][] | null>(`${R}?.liveEditedScripts?.() ?? null`).catch(() => null);
    this.liveEditedBefore = new Map(before ?? []);
    // set before the debugger is on: a `debugger;` statement may run before skipAllPauses is
    this.pausesExpected = pauses;
    if (!pauses && !this.liveEditedBefore.size && await this.everyScriptPrepared()) {
      this.notes.push(`${this.id ? `thread ${this.id}` : 'main thread'}: every module was prepared at load, so the debugger stays off ` +
        `(no pause at attach to announce every script); code compiled outside Node's module loader (vm, eval) is not reached`);
      return;
    }
    await this.debuggerOn();
  }

  private async everyScriptPrepared(): Promise<boolean> {
    return await this.cdp.evaluateNow<boolean>(`${R}?.everyScriptPrepared?.() ?? false`).catch(() => false);
  }

  /** the Debugger domain is on in this thread */
  private debugging = false;

  private async debuggerOn(): Promise<void> {
    if (this.debugging) return;
    this.debugging = true;
    // V8 announces every script (hashing each one's text), the thread stopped: ~0.12 s on the
    // loaded server, 27-31 ms on a small program (no garbage collection in --trace-gc, Node
    // 22-26). The round trip (a high bound) is charged to the observed cost.
    // maxScriptsCacheSize 0: the inspector keeps no text of a collected script; by default
    // it keeps all, and a breakpoint compiles its condition into a new script at each
    // hit (its text kept for the session's life: docs/BENCHMARKS.md section 19)
    const t0 = performance.now();
    await this.cdp.send('Debugger.enable', { maxScriptsCacheSize: 0 });
    await this.cdp.evaluateNow(`${R}?.chargeTool?.(${Math.round((performance.now() - t0) * 1000)})`).catch(() => undefined);
    if (!this.pausesExpected) await this.skipPauses();
  }

  async skipPauses(): Promise<void> {
    this.pausesExpected = false;
    await this.cdp.send('Debugger.setSkipAllPauses', { skip: true });
  }

  /**
   * V8 pauses a thread with the debugger on when its heap nears the limit
   * ("OOM"), whatever skipAllPauses says: let it go on (and die as it would have).
   */
  private onPaused(p: { reason?: string }): void {
    if (p.reason === 'OOM' || !this.pausesExpected) void this.cdp.send('Debugger.resume', {}).catch(() => undefined);
  }

  private onScript(p: any): void {
    const url: string = p.url ?? '';
    // a breakpoint condition's copy, one a hit: not the program's (the relay drops them before they reach us)
    if (url === CONDITION_URL) return;
    let filename = url;
    if (url.startsWith('file://')) { try { filename = decodeURIComponent(new URL(url).pathname); } catch { return; } }
    // a text an earlier session's LiveEdit replaced, kept by V8 under the script's name: not the program's
    const live = this.liveEditedBefore.get(filename);
    if (live !== undefined && live !== p.scriptId) return;
    this.announced.add(p.scriptId);
    if (!url || url.startsWith('node:')) return;
    if (!filename.startsWith('/')) return;
    if (isOwnCode(filename, OWN)) return;
    const script: LoadedScript = { scriptId: p.scriptId, url, filename, module: moduleNameOf(filename, this.cwd) };
    if (typeof p.hash === 'string') script.hash = p.hash;
    if (p.sourceMapURL) {
      script.mapped = true;
      // an inline map's text is not kept (a bundle's can be megabytes): the script's analysis reads it
      if (!String(p.sourceMapURL).startsWith('data:')) script.sourceMap = p.sourceMapURL;
    }
    this.loaded.set(p.scriptId, script);
  }

  /** Prepared scripts with their functions matching any of the globs (all: '/Code/**'); built-ins if a glob names them. */
  async runtimeScripts(globs: readonly string[] = ['/Code/**']): Promise<RuntimeScript[]> {
    for (const builtins of new Set(globs.map(builtinModuleMatch))) {
      if (!builtins || this.builtinsMade.has(builtins)) continue;
      await this.cdp.evaluate(`${R}.builtins(${JSON.stringify(builtins)})`);
      // a pattern with a wildcard may match modules loaded later: asked again each time
      if (namesWholeModules(builtins)) this.builtinsMade.add(builtins);
    }
    const matches = globsMatcher(globs);
    const out: RuntimeScript[] = [];
    for (const s of await this.registered(modulesMatcher(globs, true))) {
      const functions = s.functions.filter((f) => matches(`${f.module ?? s.module}/${f.name}`));
      if (functions.length) out.push({ ...s, functions });
    }
    return out;
  }

  /**
   * The runtime's registered scripts: what changed since the last call is
   * fetched in parts (one small round trip when nothing did), so the target's
   * thread never stops for the serialization of the whole list; of the scripts
   * with a function of a module `matches` takes (null: every one), their
   * functions with their points, each script's fetched once.
   */
  private async registered(matches: ((module: string) => boolean) | null = null): Promise<RuntimeScript[]> {
    const scripts = [...(await this.scriptIndex()).values()].filter((s) => s.names.length && (!matches || s.modules.some(matches)));
    const missing = scripts.filter((s) => !s.functions);
    if (missing.length) {
      const nos = JSON.stringify(missing.map((s) => s.no));
      const got = new Map<number, FunctionInfo[]>();
      for (let next: [number, number] | undefined = [0, 0]; next;) {
        const part = JSON.parse(await this.cdp.evaluateNow<string>(`${R}.functionsOf(${nos},${next[0]},${next[1]})`)) as FunctionsPart;
        for (const p of part.scripts) {
          const had = got.get(p.no);
          if (had) had.push(...p.functions);
          else got.set(p.no, p.functions);
        }
        next = part.next;
      }
      for (const s of missing) s.functions ??= got.get(s.no) ?? [];
    }
    return scripts.map((s) => ({ no: s.no, module: s.module, filename: s.filename, how: s.how, functions: s.functions! }));
  }

  /**
   * The program's functions by module and name, without their points: a prepared
   * script's from the index (its functions are not fetched), one loaded before the
   * agent analysed (as resources() does).
   */
  async functionNames(): Promise<{ module: string; name: string }[]> {
    const out: { module: string; name: string }[] = [];
    for (const s of (await this.scriptIndex()).values()) {
      for (const n of s.names) {
        // the longest of its modules the name starts with (a source map's sources may nest)
        const m = s.modules.reduce((best, x) => (x.length > best.length && n.startsWith(`${x}/`) ? x : best), '');
        out.push({ module: m, name: n.slice(m.length + 1) });
      }
    }
    for (const script of await this.unpreparedScripts(true)) {
      for (const f of (await this.namesAnalysis(script))?.functions ?? []) out.push({ module: f.module ?? script.module, name: f.name });
    }
    return out;
  }

  /** An unprepared script's analysis for its functions' names and modules: the one made, else its file's, else V8's text's. */
  private async namesAnalysis(script: LoadedScript): Promise<ScriptAnalysis | null> {
    return this.analyses.get(script.scriptId) ?? await this.namesFromFile(script) ?? await this.analysisOf(script);
  }

  /**
   * An unprepared script's functions analysed from its file, where the file holds the text V8
   * compiled (see fileText), else null; made once, and what analysisOf takes where there is one.
   * Listing the Fastify server's functions fetched its ~500 scripts' texts from the target, each
   * served on the loaded server's main thread in the attach's first seconds.
   */
  private async namesFromFile(script: LoadedScript): Promise<ScriptAnalysis | null> {
    if (this.fileAnalyses.has(script.scriptId)) return this.fileAnalyses.get(script.scriptId)!;
    let analysis: ScriptAnalysis | null = null;
    const text = await this.fileText(script);
    if (text !== null) {
      try {
        analysis = analyzeScript(text, undefined, { filename: script.filename, cwd: this.cwd }).analysis;
        this.lengths.set(script.scriptId, text.length);
      } catch { /* not parsed: V8's text is read (analysisOf), and says so */ }
    }
    this.fileAnalyses.set(script.scriptId, analysis);
    return analysis;
  }

  /**
   * The script's file's text where it is the text V8 compiled, else null: the debugger announces
   * each script's SHA-256, of its text in UTF-8 (Node 22, 24 and 26), and equal hashes are equal
   * texts. Read as Node reads a module, a BOM included: V8 is given the file's text whole.
   */
  private async fileText(script: LoadedScript): Promise<string | null> {
    if (!script.hash) return null;
    try {
      const text = await fs.promises.readFile(script.filename, 'utf8');
      return createHash('sha256').update(text, 'utf8').digest('hex') === script.hash.toLowerCase() ? text : null;
    } catch {
      return null; // no such file (an eval'd script, a file gone): V8's text
    }
  }

  /** The runtime's registered scripts with their functions' names, brought up to date. */
  private async scriptIndex(): Promise<Map<number, IndexedScript>> {
    const index = this.index;
    let after = index.version;
    const added: IndexedScript[] = [];
    for (;;) {
      const text = await this.cdp.evaluateNow<string | null>(`${R}.scriptIndexSince(${index.version},${after})`);
      if (text === null) break;
      const part = JSON.parse(text) as ScriptIndexPart;
      added.push(...part.added);
      after = part.last;
      if (part.version === undefined) continue;
      for (const no of part.dropped) index.scripts.delete(no);
      // (a script registered again is a new entry: its functions are fetched again)
      for (const s of added) { index.scripts.delete(s.no); index.scripts.set(s.no, s); }
      index.version = part.version;
      break;
    }
    return index.scripts;
  }

  /**
   * Files the runtime has registered (prepared, or reached by breakpoints), from the index (`fresh`:
   * it was just brought up to date). The runtime's own list of them cost a round trip into the
   * target's thread and its serialization for each listing: 10-20 a second in an attach's first seconds.
   */
  private async registeredFiles(fresh = false): Promise<Set<string>> {
    const scripts = fresh ? this.index.scripts : await this.scriptIndex();
    return new Set([...scripts.values()].map((s) => s.filename));
  }

  /**
   * Scripts loaded before the agent and not prepared yet whose module may match one of the globs, analysed
   * (`fresh`: the runtime's index was just brought up to date, by runtimeScripts).
   */
  async unprepared(globs: readonly string[], fresh = false): Promise<{ script: LoadedScript; functions: FunctionInfo[] }[]> {
    const out: { script: LoadedScript; functions: FunctionInfo[] }[] = [];
    const matches = modulesMatcher(globs);
    for (const script of await this.unpreparedScripts(fresh)) {
      if (!this.mayHave(matches, script) || !await this.mayHaveInline(matches, script)) continue;
      const analysis = await this.analysisOf(script);
      if (analysis) out.push({ script, functions: analysis.functions });
    }
    return out;
  }

  /**
   * The modules of the program's code in this thread. A script loaded before the agent
   * is not analysed: its module is its file's, or, where it names a source map, the map's
   * sources (the map read from its file; an inline one from the script's analysis). Parsing
   * every script of the Fastify server took 2.7 s, and the search's first refinement waited for it.
   */
  async moduleNames(): Promise<Set<string>> {
    const out = new Set<string>();
    for (const s of (await this.scriptIndex()).values()) for (const m of s.modules) out.add(m);
    for (const script of await this.unpreparedScripts(true)) {
      if (!script.mapped) { out.add(script.module); continue; }
      // the sources its map names, read from the file: no round trip to the target (on the loaded
      // server each script's text took ~15 ms to come, 1.6 s for Fastify's mapped ones)
      const analysis = this.analyses.get(script.scriptId);
      const sources = analysis ? undefined : this.mapSourcesOf(script);
      if (sources) for (const m of sources) out.add(m);
      else for (const f of (await this.namesAnalysis(script))?.functions ?? []) out.add(f.module ?? script.module);
    }
    return out;
  }

  /**
   * Whether a script loaded before the agent may have functions of a module `matches`
   * takes: its own, or where it has a source map, one of the map's sources (an inline
   * map's are known only from its analysis). Listing one TypeScript module of the Fastify
   * server parsed every script (2.7 s) when any script was taken to have a map.
   */
  private mayHave(matches: ((module: string) => boolean) | null, script: LoadedScript): boolean {
    if (!matches || matches(script.module)) return true;
    if (!script.mapped) return false;
    return this.mapSourcesOf(script)?.some(matches) ?? true;
  }

  /**
   * For a script with an inline source map, whether its functions' modules may include one
   * `matches` takes, told from its file where that holds V8's text (see namesFromFile): else
   * V8's text is fetched from the target and parsed to tell. The Fastify server's ~40 such
   * scripts were fetched for each glob the cost system priced, Node's built-ins' too.
   */
  private async mayHaveInline(matches: ((module: string) => boolean) | null, script: LoadedScript): Promise<boolean> {
    if (!matches || !script.mapped || script.sourceMap !== undefined || matches(script.module) || this.analyses.has(script.scriptId)) return true;
    const fromFile = await this.namesFromFile(script);
    return !fromFile || fromFile.functions.some((f) => matches(f.module ?? script.module));
  }

  /** The modules a script's source map (a file) names (undefined: none to read). */
  private mapSourcesOf(script: LoadedScript): string[] | undefined {
    const map = script.sourceMap === undefined ? null : this.frames.mapOf(script.filename, script.sourceMap);
    return map ? mapSources(map).map((src) => moduleNameOf(src, this.cwd)) : undefined;
  }

  /** Scripts loaded before the agent and not prepared yet (none without the debugger where the load hook prepared every one). */
  private async unpreparedScripts(fresh = false): Promise<LoadedScript[]> {
    // a module the load hook left unprepared since (its parser refused it): the debugger reaches it
    if (!this.debugging) {
      if (await this.everyScriptPrepared()) return [];
      await this.debuggerOn();
    }
    const registered = await this.registeredFiles(fresh);
    return [...this.loaded.values()].filter((s) => !registered.has(s.filename) && !this.liveEdits.has(s.scriptId));
  }

  /**
   * An unprepared script's analysis, made once: its file's where that is V8's text (the search's
   * first refinements of the loaded server fetched ten modules' texts in a burst that cost it 14 %
   * of a second), else V8's text's (null: V8 has collected the script).
   */
  private async analysisOf(script: LoadedScript): Promise<ScriptAnalysis | null> {
    let analysis = this.analyses.get(script.scriptId) ?? await this.namesFromFile(script) ?? undefined;
    if (!analysis) {
      const source = await this.source(script);
      if (source === null) return null;
      this.lengths.set(script.scriptId, source.length);
      try {
        analysis = analyzeScript(source, undefined, { filename: script.filename, cwd: this.cwd }).analysis;
      } catch {
        this.notes.push(`${script.module}: not parsed, so not instrumentable`);
        analysis = { functions: [], sourceType: 'script' };
      }
    }
    this.analyses.set(script.scriptId, analysis);
    return analysis;
  }

  /**
   * How a script loaded before the agent will be reached: by slots a LiveEdit
   * puts in ('no': not prepared yet), or by breakpoints where the LiveEdit would
   * be refused before it is tried (no LiveEdit in this V8, or its pause).
   */
  async unpreparedHow(script: LoadedScript): Promise<'no' | 'breakpoint'> {
    const length = this.lengths.get(script.scriptId) ?? (await this.text(script))?.length;
    if (length === undefined) return 'no';
    return (await this.liveEdits.refusal(script, length, async () => (await this.text(script)) ?? '')) ? 'breakpoint' : 'no';
  }

  /** @internal the files whose text was fetched from the target (see namesFromFile) */
  readonly textsFetched = new Set<string>();

  /** text lengths of the analysed unprepared scripts, by scriptId */
  private readonly lengths = new Map<string, number>();

  /** The script's text to price: its file's where that is V8's text (see analysisOf), else V8's. */
  private async text(script: LoadedScript): Promise<string | null> {
    return await this.fileText(script) ?? await this.source(script);
  }

  /**
   * The script's text as V8 has it, or null where V8 has collected the script (a module whose
   * functions are all gone: none of it can run again, and the inspector keeps no text of it,
   * see enable): it is forgotten. What a LiveEdit or breakpoints are placed in.
   */
  private async source(script: LoadedScript): Promise<string | null> {
    this.textsFetched.add(script.filename);
    try {
      return (await this.cdp.send('Debugger.getScriptSource', { scriptId: script.scriptId })).scriptSource;
    } catch (e) {
      if (!(e instanceof CdpError) || !/No script for id/i.test(e.message)) throw e;
      this.loaded.delete(script.scriptId);
      this.analyses.delete(script.scriptId);
      this.fileAnalyses.delete(script.scriptId);
      return null;
    }
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
    const todo = (await this.unprepared([resource])).filter(({ script, functions }) => functions.some((f) => re.test(`${f.module ?? script.module}/${f.name}`)));
    for (const [k, { script }] of todo.entries()) {
      matched = true;
      if (this.signal?.aborted) {
        // the edits made are checked as usual (detach takes them out), the rest not made
        if (applied.length) await this.liveEdits.verify(applied);
        throw new Interrupted(`stopped preparing scripts for ${resource}${this.id ? ` in thread ${this.id}` : ''} after ${k} of ${todo.length}: the session's time ended`);
      }
      // a whole-program glob can LiveEdit hundreds of scripts, one pause each: say how far it is
      if (todo.length > 1) this.progress(`preparing ${script.module}${this.id ? ` in thread ${this.id}` : ''} (script ${k + 1} of ${todo.length})`);
      const analysis = this.analyses.get(script.scriptId)!;
      this.analyses.delete(script.scriptId);
      this.fileAnalyses.delete(script.scriptId);
      const source = await this.source(script);
      if (source === null) continue;
      try {
        applied.push(await this.liveEdits.prepare(script, source));
      } catch (e) {
        if (!(e instanceof LiveEditRefused)) throw e;
        await this.breakpoints.registerScript(script, source, analysis, e.message);
      }
    }
    if (applied.length) await this.liveEdits.verify(applied);
    // placement runs no regexp (src/agent/no-regexp.ts) unless it wraps built-in modules: at once, as a probe's switch should
    const place = `${R}.addProbe(${JSON.stringify(spec)})`;
    const r = await (spec.builtins ? this.cdp.evaluate(place) : this.cdp.evaluateNow(place)) as { placed: number; wrapped: number; matched: boolean; fallback: FallbackPoint[] };
    const counts: PlacedCounts = { slot: r.placed, breakpoint: 0, wrap: r.wrapped, missed: 0 };
    if (r.wrapped && !this.wrapNoted) {
      this.wrapNoted = true;
      this.notes.push(`built-in functions are reached by wrapping their exports: calls through references taken before the probe ` +
        `(const { f } = require(...)) are not seen; a module's calls to itself while serving a call (writeFileSync -> openSync) are not counted again`);
    }
    const missed = new Map<string, string[]>();
    for (const fp of r.fallback) {
      const why = await this.breakpoints.place(spec.id, fp, /\$0\b/.test(spec.snippet.body));
      if (why === UNREACHABLE) continue;
      if (!why) { counts.breakpoint++; continue; }
      counts.missed++;
      const where = this.breakpoints.whereOf(fp);
      missed.set(why, [...(missed.get(why) ?? []), where]);
    }
    for (const [why, where] of missed) {
      this.notes.push(`${where.length} point(s)${this.id ? ` in thread ${this.id}` : ''} not placed (${why}): ${where.slice(0, 5).join('; ')}${where.length > 5 ? '; ...' : ''}`);
    }
    return matched || r.matched ? counts : null;
  }

  /** Take a probe's breakpoints out (those no other probe needs). */
  async removeProbe(id: number): Promise<void> {
    await this.cdp.evaluateNow(`${R}.removeProbe(${id})`);
    await this.breakpoints.remove(id);
  }

  /** the strings and stacks the runtime has sent this session (stack-packing.ts) */
  private readonly unpacker = new StackUnpacker();
  /** scripts the runtime had registered at the last sample (new ones are announced) */
  private knownScripts = 0;
  /** /SyncObject resources (files, message channels) the thread's snippets have seen */
  readonly syncObjects = new Set<string>();

  /** One sample; `onNew` hears of the scripts registered since the last one (resources that appeared). */
  async sample(onNew?: (resources: string[]) => void): Promise<Sample> {
    const s = JSON.parse(await this.cdp.evaluateNow<string>(`${R}.sampleText(${this.unpacker.first() ? 'true' : ''})`)) as Sample & { packed?: PackedStacks };
    // (a runtime of an earlier paranode, started with the program, sends its stacks whole)
    if (s.packed) { s.stacks = this.unpacker.unpack(s.packed); delete s.packed; }
    if (s.stacks) {
      this.frames.nameStacks(s.stacks);
      // scripts announced to the debugger since: those with source maps are tagged from now on
      if (this.loaded.size !== this.framesChecked) await this.findFrameMaps();
    }
    this.countPinned(s);
    if (s.notes) this.notes.push(...s.notes.map((n) => inThread(n, this.id)));
    // The runtime hands each new object and script over once, to whichever sample asks first. Two
    // samples can overlap (the session's timer beside a caller's): announced before any await, and
    // the scripts' range claimed at once, so that neither returns before what the other took is told
    // (CI, Node 22: a file counted exactly by the caller's sample was announced after it returned)
    if (s.objects) {
      for (const o of s.objects) this.syncObjects.add(o);
      onNew?.(s.objects);
    }
    if (onNew && s.scripts !== undefined && s.scripts > this.knownScripts) {
      this.knownScripts = s.scripts;
      const mine = this.announcing.then(() => this.announceScripts(onNew));
      this.announcing = mine.catch(() => undefined);
      await mine;
    } else await this.announcing;
    return s;
  }

  /** the names of stack samples' frames in source-mapped code (see FrameNames) */
  private readonly frames: FrameNames;
  /** how many scripts the debugger had announced when they were last looked at for source maps */
  private framesChecked = -1;

  /**
   * Tell the runtime which scripts loaded before the agent have source maps (the debugger
   * says which), so that their frames in stack samples are tagged for FrameNames; the
   * runtime tags the ones it prepared itself (their analysis says).
   */
  async findFrameMaps(): Promise<void> {
    this.framesChecked = this.loaded.size;
    const mapped = this.frames.newlyMapped([...this.loaded.values()].filter((s) => s.mapped).map((s) => ({ file: s.filename, url: s.sourceMap })));
    if (mapped.length) await this.cdp.evaluateNow(`${R}.mapFrames(${JSON.stringify(JSON.stringify(mapped))})`);
  }

  /** scripts announced by an earlier sample that may still be listing them */
  private announcing: Promise<void> = Promise.resolve();

  /** The modules and functions of the thread's scripts not announced yet (from its index, fetched in parts: a large program's names are megabytes, serialized with the thread stopped). */
  private async announceScripts(onNew: (resources: string[]) => void): Promise<void> {
    const paths: string[] = [];
    for (const s of (await this.scriptIndex()).values()) {
      if (this.named.has(s)) continue;
      this.named.add(s);
      paths.push(`/Code/${s.module}`, ...s.names.map((f) => `/Code/${f}`));
    }
    if (paths.length) onNew(paths);
  }

  /** V8 samples, since the session began, in which a function holding a breakpoint ran its own code */
  private pinnedSamples = 0;

  /** The observed cost's count of pinning (PINNED_CLASS), from the sample's stacks where V8's profiler took them. */
  private countPinned(s: Sample): void {
    const pinned = s.stacks && this.breakpoints.pinned();
    // (counted in samples of SAMPLE_INTERVAL_US, the pinning's price: a longer interval's samples stand for more time)
    const weight = (s.sampleUs ?? SAMPLE_INTERVAL_US) / SAMPLE_INTERVAL_US;
    if (pinned?.size) for (const [stack, n, own] of s.stacks!) if (own && pinned.has(stack[0])) this.pinnedSamples += n * weight;
    if (this.pinnedSamples) s.counters.push([COST_SERIES + PINNED_CLASS, this.pinnedSamples]);
  }

  /** Whether this thread's LiveEdits switched Maglev off (the session turns it on again once every thread is restored). */
  get switchedMaglev(): boolean { return this.liveEdits.switchedMaglev; }

  /**
   * Slots off, load hook out, LiveEdited scripts back to their original text. Returns the µs it
   * stopped the thread, as the observed cost counts such work: the runtime's own time switching
   * off, the LiveEdits (their round trips, a quiet-point hold as the tool saw it) and the
   * debugger's commands by their round trips: a high bound.
   */
  async restore(): Promise<number> {
    let us = await roundTripUs(() => this.breakpoints.restore());
    const ms = await this.cdp.evaluate<number | undefined>(`${R}.deactivate()`);
    if (typeof ms === 'number') us += ms * 1000;
    const edits = this.liveEdits.chargedUs;
    await this.liveEdits.restore();
    us += this.liveEdits.chargedUs - edits;
    if (this.debugging) us += await roundTripUs(() => this.cdp.send('Debugger.disable'));
    return us;
  }
}

/** The µs a command took from its sending to its answer: the target thread's time for it, a high bound (the detach's figures). */
export async function roundTripUs(work: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await work();
  return (performance.now() - t0) * 1000;
}

/** Whether a "<module>/<function>" path matches one of the globs (/Code/...). */
export function globsMatcher(globs: readonly string[]): (path: string) => boolean {
  const res = globs.map((g) => new RegExp(codeGlobToRegex(g)));
  return (path) => res.some((re) => re.test(path));
}

/** moduleMatcher's for any of the globs (null: every module). */
function modulesMatcher(globs: readonly string[], registered = false): ((module: string) => boolean) | null {
  const each = globs.map((g) => moduleMatcher(g, registered));
  if (each.some((m) => m === null)) return null;
  return (module) => each.some((m) => m!(module));
}

/**
 * What a glob's module part matches (null: any module), to leave out scripts before
 * analysing or fetching them; one of Node's own modules matches no script of the
 * program, but the runtime's `registered` scripts hold the built-ins it wrapped.
 */
function moduleMatcher(glob: string, registered = false): ((module: string) => boolean) | null {
  const g = glob.slice('/Code/'.length);
  if (g.startsWith('node:') && !registered) return () => false;
  const cut = g.lastIndexOf('/');
  // a function's name may hold no slash, but ** spans them
  if (g.slice(cut + 1).includes('**')) return null;
  // "<module>" alone names no function ("<module>/<function>"): the module resource itself
  if (cut < 0) return () => false;
  try {
    const re = new RegExp(codeGlobToRegex('/Code/' + g.slice(0, cut)));
    return (module) => re.test(module);
  } catch {
    return null;
  }
}
