// One thread of a target (the main thread or a worker): its CDP session, the
// scripts it has loaded, the LiveEdits made in it, and its in-target runtime.
import * as path from 'path';
import { analyzeScript, FunctionInfo } from '../analysis/functions';
import type { ProbeSpec } from '../agent/runtime';
import { Cdp } from '../inspector/cdp';
import { planLiveEdit, predictPauseMs } from '../instrument/liveedit';
import { codeGlobToRegex } from '../instrument/probe';

export const R = `globalThis[Symbol.for('paranode.runtime')]`;
const AGENT_ROOT = path.resolve(__dirname, '..');

export class ParanodeError extends Error {}

export interface LoadedScript { scriptId: string; url: string; filename: string; module: string }
export interface Sample { t: number; counters: [string, number][]; timers: [string, number, boolean][] }
export interface RuntimeScript { no: number; module: string; filename: string; how: 'load' | 'liveedit'; functions: FunctionInfo[] }

export class TargetThread {
  private readonly loaded = new Map<string, LoadedScript>();
  private readonly edited = new Map<string, { original: string; no: number }>();

  /**
   * @param id 0 for the main thread, else the worker's threadId
   * @param notes where to report what could not be done
   */
  constructor(readonly id: number, readonly cdp: Cdp, private readonly cwd: string, private readonly maxPauseMs: number,
    private readonly notes: string[]) {
    cdp.on('Debugger.scriptParsed', (p: any) => this.onScript(p));
  }

  get label(): string { return this.id === 0 ? 'main' : String(this.id); }

  async enable(): Promise<void> {
    await this.cdp.send('Debugger.enable', {});
  }

  private onScript(p: any): void {
    const url: string = p.url ?? '';
    if (!url || url.startsWith('node:')) return;
    let filename = url;
    if (url.startsWith('file://')) { try { filename = decodeURIComponent(new URL(url).pathname); } catch { return; } }
    if (!filename.startsWith('/')) return;
    if (filename.startsWith(AGENT_ROOT + path.sep) || filename.includes(`${path.sep}node_modules${path.sep}acorn${path.sep}`)) return;
    this.loaded.set(p.scriptId, { scriptId: p.scriptId, url, filename, module: path.relative(this.cwd, filename) || filename });
  }

  runtimeScripts(): Promise<RuntimeScript[]> {
    return this.cdp.evaluate(`${R}.listScripts()`);
  }

  /** Scripts loaded before the agent and not prepared yet whose module may match a glob, analysed. */
  async unprepared(glob: string, preparedFiles: Set<string>): Promise<{ script: LoadedScript; source: string; functions: FunctionInfo[] }[]> {
    const out: { script: LoadedScript; source: string; functions: FunctionInfo[] }[] = [];
    for (const script of this.loaded.values()) {
      if (preparedFiles.has(script.filename) || this.edited.has(script.scriptId)) continue;
      if (!moduleMayMatch(glob, script.module)) continue;
      const { scriptSource } = await this.cdp.send('Debugger.getScriptSource', { scriptId: script.scriptId });
      try {
        out.push({ script, source: scriptSource, functions: analyzeScript(scriptSource, undefined, { filename: script.filename, cwd: this.cwd }).analysis.functions });
      } catch {
        this.notes.push(`${script.module}: not parsed, so not instrumentable`);
      }
    }
    return out;
  }

  /** Prepare what the probe needs in this thread, then place it. Returns the points placed, or -1 if no function matched. */
  async addProbe(spec: ProbeSpec, resource: string): Promise<number> {
    const re = new RegExp(spec.match);
    const prepared = await this.runtimeScripts();
    let matched = prepared.some((s) => s.functions.some((f) => re.test(`${f.module ?? s.module}/${f.name}`)));
    for (const { script, source, functions } of await this.unprepared(resource, new Set(prepared.map((s) => s.filename)))) {
      if (!functions.some((f) => re.test(`${f.module ?? script.module}/${f.name}`))) continue;
      matched = true;
      await this.prepareLoaded(script, source);
    }
    const placed = await this.cdp.evaluate<number>(`${R}.addProbe(${JSON.stringify(spec)})`);
    return matched ? placed : -1;
  }

  /** Prepare an already-loaded script by one LiveEdit. */
  private async prepareLoaded(sc: LoadedScript, source: string): Promise<void> {
    const heap = await this.cdp.send('Runtime.getHeapUsage');
    // refuse before planning: the prediction itself is costly on a huge script
    const predicted = predictPauseMs(heap.usedSize, source.length);
    if (predicted > this.maxPauseMs) {
      throw new ParanodeError(`refused to LiveEdit ${sc.module}: it would pause the target for about ${Math.round(predicted)} ms ` +
        `(script ${(source.length / 1e6).toFixed(1)} MB, heap ${(heap.usedSize / 1e6).toFixed(0)} MB), over the limit of ${this.maxPauseMs} ms (--max-pause)`);
    }
    const no = await this.cdp.evaluate<number>(`${R}.allocScript()`);
    const plan = planLiveEdit(source, no, heap.usedSize, { filename: sc.filename, cwd: this.cwd });
    await this.cdp.evaluate(`${R}.defineGlobals(${no}, ${plan.analysis.functions.length})`);
    const deadline = Date.now() + 5000;
    for (;;) {
      const r: any = await this.cdp.send('Debugger.setScriptSource', { scriptId: sc.scriptId, scriptSource: plan.code });
      if (!r.status || r.status === 'Ok') break;
      if ((r.status === 'BlockedByActiveFunction' || r.status === 'BlockedByActiveGenerator') && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, 50));
        continue;
      }
      throw new ParanodeError(`LiveEdit of ${sc.module} not applied: ${r.status}` +
        (String(r.status).startsWith('Blocked') ? ' (a function of this script stayed active for 5 s; try again when it is idle)' : ''));
    }
    this.edited.set(sc.scriptId, { original: source, no });
    await this.cdp.agent('restore-plan', { thread: this.id, scripts: [{ scriptId: sc.scriptId, source }] }).catch(() => undefined);
    await this.cdp.evaluate(`${R}.registerScript(${no}, ${JSON.stringify(sc.module)}, ${JSON.stringify(plan.analysis)}, undefined, ${JSON.stringify(sc.filename)}, 'liveedit')`);
    const byReason = new Map<string, number>();
    for (const u of plan.unslotted) byReason.set(u.reason, (byReason.get(u.reason) ?? 0) + 1);
    for (const [reason, n] of byReason) this.notes.push(`${sc.module}${this.id ? ` (thread ${this.id})` : ''}: ${n} point(s) without a slot: ${reason}`);
  }

  sample(): Promise<Sample> {
    return this.cdp.evaluate<Sample>(`${R}.sample()`);
  }

  /** Slots off, load hook out, LiveEdited scripts back to their original text. */
  async restore(): Promise<void> {
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
  const cut = g.lastIndexOf('/');
  if (cut < 0 || g.endsWith('**')) return true;
  // named by a source map (e.g. a .ts file): the generated script's path says nothing
  if (!/\.[cm]?js$|\*$/.test(g.slice(0, cut))) return true;
  try { return new RegExp(codeGlobToRegex('/Code/' + g.slice(0, cut))).test(module); } catch { return true; }
}
