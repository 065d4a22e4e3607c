// A paranode session with one target process: attach or launch, list code
// resources, place and remove probes, sample into time histograms, detach.
import { ChildProcess } from 'child_process';
import { EventEmitter } from 'events';
import * as os from 'os';
import * as path from 'path';
import { analyzeScript, FunctionInfo } from '../analysis/functions';
import type { ProbeSpec } from '../agent/runtime';
import { AgentServer } from '../inspector/agent-server';
import { Cdp, CdpError, TargetGoneError } from '../inspector/cdp';
import { attachTarget, launchTarget } from '../inspector/process-control';
import { TimeHistogram } from '../data/histogram';
import { planLiveEdit, predictPauseMs } from '../instrument/liveedit';
import { codeGlobToRegex, parseProbe, pointClass, ProbeRequest } from '../instrument/probe';
import { compileSnippet } from '../instrument/snippet';

const R = `globalThis[Symbol.for('paranode.runtime')]`;
const AGENT_ROOT = path.resolve(__dirname, '..');

export interface SessionOptions {
  /** the longest pause (ms) a LiveEdit may cause the target; longer ones are refused */
  maxPauseMs?: number;
  /** histogram buckets */
  buckets?: number;
  /** for launch: where the program's stdin/stdout/stderr go */
  stdio?: 'inherit' | 'pipe';
  /** for launch: the program's working directory (module names are relative to it) */
  cwd?: string;
}

export interface Resource {
  path: string;
  module: string;
  function: string;
  line: number;
  column: number;
  prepared: 'load' | 'liveedit' | 'no';
  points: FunctionInfo['points'];
}

export interface MetricValue {
  name: string;
  focus: string;
  units: 'count' | 'seconds';
  total: number;
  histogram: { bucketSeconds: number; buckets: number[] };
}

export class ParanodeError extends Error {}

interface LoadedScript { scriptId: string; url: string; filename: string; module: string }
interface Sample { t: number; counters: [string, number][]; timers: [string, number, boolean][] }

export class Session extends EventEmitter {
  readonly notes: string[] = [];
  private readonly loaded = new Map<string, LoadedScript>();
  private readonly edited = new Map<string, { original: string; no: number }>();
  private readonly timerKinds = new Map<string, 'wall' | 'cpu'>();
  private readonly histograms = new Map<string, TimeHistogram>();
  private readonly last = new Map<string, number>();
  private readonly units = new Map<string, 'count' | 'seconds'>();
  private lastT = 0;
  /** target time (s) of the first sample: histogram time zero */
  private baseT: number | null = null;
  private readonly startMs = Date.now();
  private nextProbe = 1;
  private samplerTimer: NodeJS.Timeout | null = null;
  private intervalMs = 200;
  private detached = false;
  exited = false;
  exitCode: number | null = null;
  private readonly exitPromise: Promise<void>;
  private resolveExit!: () => void;

  private constructor(readonly pid: number, readonly cwd: string, private readonly cdp: Cdp, private readonly server: AgentServer,
    readonly child: ChildProcess | null, private readonly opts: SessionOptions, private readonly openedPort: boolean) {
    super();
    this.exitPromise = new Promise((r) => (this.resolveExit = r));
    cdp.on('Debugger.scriptParsed', (p: any) => this.onScript(p));
    cdp.on('close', () => this.onGone());
    child?.once('exit', (code) => { this.exitCode = code; });
    if (cdp.closed) setImmediate(() => this.onGone());
  }

  /** Launch `command` (e.g. ['node', 'app.js']) under the tool; probes apply from its first line. */
  static async launch(command: string[], probes: string[] = [], opts: SessionOptions = {}): Promise<Session> {
    const server = await AgentServer.open();
    const kinds = new Map<string, 'wall' | 'cpu'>();
    let specs: ProbeSpec[];
    try {
      specs = probes.map((p, i) => toSpec(parseProbe(p), i + 1, kinds));
    } catch (e) {
      server.close();
      throw e;
    }
    try {
      const { child, agent } = await launchTarget(server, command, { prepareOnLoad: true, probes: specs }, opts.stdio ?? 'inherit', opts.cwd);
      const s = new Session(agent.hello.pid, agent.hello.cwd, agent.cdp, server, child, opts, false);
      for (const [k, v] of kinds) s.timerKinds.set(k, v);
      s.nextProbe = specs.length + 1;
      await s.init();
      return s;
    } catch (e) {
      server.close();
      throw e;
    }
  }

  /** Attach to a running Node.js process. */
  static async attach(pid: number, opts: SessionOptions = {}): Promise<Session> {
    const server = await AgentServer.open();
    try {
      const { agent, openedPort } = await attachTarget(server, pid, { prepareOnLoad: true });
      const s = new Session(pid, agent.hello.cwd, agent.cdp, server, null, opts, openedPort);
      await s.init();
      return s;
    } catch (e) {
      server.close();
      throw e;
    }
  }

  private async init(): Promise<void> {
    try {
      await this.cdp.send('Debugger.enable', {});
      await this.cdp.send('Runtime.enable');
    } catch (e) {
      if (!(e instanceof TargetGoneError)) throw e;
    }
  }

  private onScript(p: any): void {
    const url: string = p.url ?? '';
    if (!url || url.startsWith('node:')) return;
    let filename = url;
    if (url.startsWith('file://')) { try { filename = new URL(url).pathname; filename = decodeURIComponent(filename); } catch { return; } }
    if (!filename.startsWith('/')) return;
    if (filename.startsWith(AGENT_ROOT + path.sep) || filename.includes(`${path.sep}node_modules${path.sep}acorn${path.sep}`)) return;
    const rel = path.relative(this.cwd, filename) || filename;
    this.loaded.set(p.scriptId, { scriptId: p.scriptId, url, filename, module: rel });
  }

  private async runtimeScripts(): Promise<{ no: number; module: string; filename: string; how: 'load' | 'liveedit'; functions: FunctionInfo[] }[]> {
    return this.cdp.evaluate(`${R}.listScripts()`);
  }

  /** Scripts loaded before the agent and not prepared yet whose module may match a glob, analysed. */
  private async unprepared(glob: string, preparedFiles: Set<string>): Promise<{ script: LoadedScript; source: string; functions: FunctionInfo[] }[]> {
    const out: { script: LoadedScript; source: string; functions: FunctionInfo[] }[] = [];
    for (const script of this.loaded.values()) {
      if (preparedFiles.has(script.filename) || this.edited.has(script.scriptId)) continue;
      if (!moduleMayMatch(glob, script.module)) continue;
      const { scriptSource } = await this.cdp.send('Debugger.getScriptSource', { scriptId: script.scriptId });
      try {
        out.push({ script, source: scriptSource, functions: analyzeScript(scriptSource).analysis.functions });
      } catch {
        this.notes.push(`${script.module}: not parsed, so not instrumentable`);
      }
    }
    return out;
  }

  /** Code resources (functions) matching a glob such as /Code/lib/*.js/*. */
  async resources(glob = '/Code/**'): Promise<Resource[]> {
    const re = new RegExp(codeGlobToRegex(glob));
    const out: Resource[] = [];
    const prepared = await this.runtimeScripts();
    const preparedFiles = new Set(prepared.map((s) => s.filename));
    for (const s of prepared) {
      for (const f of s.functions) {
        if (re.test(`${s.module}/${f.name}`)) out.push({ path: `/Code/${s.module}/${f.name}`, module: s.module, function: f.name, line: f.line, column: f.column, prepared: s.how, points: f.points });
      }
    }
    for (const { script, functions } of await this.unprepared(glob, preparedFiles)) {
      for (const f of functions) {
        if (re.test(`${script.module}/${f.name}`)) out.push({ path: `/Code/${script.module}/${f.name}`, module: script.module, function: f.name, line: f.line, column: f.column, prepared: 'no', points: f.points });
      }
    }
    return out;
  }

  /**
   * Place a probe ('<resource>.<point>: <snippet>'). Scripts that were loaded
   * before the agent and contain a matching function are prepared by LiveEdit
   * first; modules loaded later are matched as they load.
   */
  async probe(text: string): Promise<{ id: number; placed: number }> {
    const req = parseProbe(text);
    const spec = toSpec(req, this.nextProbe++, this.timerKinds);
    const re = new RegExp(spec.match);
    const prepared = await this.runtimeScripts();
    let matchedFns = prepared.some((s) => s.functions.some((f) => re.test(`${s.module}/${f.name}`)));
    for (const { script, source, functions } of await this.unprepared(req.resource, new Set(prepared.map((s) => s.filename)))) {
      if (!functions.some((f) => re.test(`${script.module}/${f.name}`))) continue;
      matchedFns = true;
      await this.prepareLoaded(script, source);
    }
    if (!matchedFns) throw new ParanodeError(`unknown resource: no function matches ${req.resource} in process ${this.pid}`);
    const placed = await this.cdp.evaluate<number>(`${R}.addProbe(${JSON.stringify(spec)})`);
    if (placed === 0) this.notes.push(`probe "${text}" matched functions but none of their points of kind ${req.point}`);
    return { id: spec.id, placed };
  }

  async removeProbe(id: number): Promise<void> {
    await this.cdp.evaluate(`${R}.removeProbe(${id})`);
  }

  /** Prepare an already-loaded script by one LiveEdit. */
  private async prepareLoaded(sc: LoadedScript, source: string): Promise<void> {
    const heap = await this.cdp.send('Runtime.getHeapUsage');
    // refuse before planning: the prediction itself is costly on a huge script
    const predicted = predictPauseMs(heap.usedSize, source.length);
    const maxPause = this.opts.maxPauseMs ?? 2000;
    if (predicted > maxPause) {
      throw new ParanodeError(`refused to LiveEdit ${sc.module}: it would pause the target for about ${Math.round(predicted)} ms ` +
        `(script ${(source.length / 1e6).toFixed(1)} MB, heap ${(heap.usedSize / 1e6).toFixed(0)} MB), over the limit of ${maxPause} ms (--max-pause)`);
    }
    const no = await this.cdp.evaluate<number>(`${R}.allocScript()`);
    const plan = planLiveEdit(source, no, heap.usedSize);
    await this.cdp.evaluate(`${R}.defineGlobals(${no}, ${plan.analysis.functions.length})`);
    const deadline = Date.now() + 5000;
    for (;;) {
      const r = await this.cdp.send('Debugger.setScriptSource', { scriptId: sc.scriptId, scriptSource: plan.code, allowTopFrameEditing: false } as any);
      const status = (r as any).status as string | undefined;
      if (!status || status === 'Ok') break;
      if ((status === 'BlockedByActiveFunction' || status === 'BlockedByActiveGenerator') && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, 50));
        continue;
      }
      throw new ParanodeError(`LiveEdit of ${sc.module} not applied: ${status}` +
        (status.startsWith('Blocked') ? ' (a function of this script stayed active for 5 s; try again when it is idle)' : ''));
    }
    this.edited.set(sc.scriptId, { original: source, no });
    await this.cdp.agent('restore-plan', { scripts: [{ scriptId: sc.scriptId, source }] });
    await this.cdp.evaluate(`${R}.registerScript(${no}, ${JSON.stringify(sc.module)}, ${JSON.stringify(plan.analysis)}, undefined, ${JSON.stringify(sc.filename)}, 'liveedit')`);
    const byReason = new Map<string, number>();
    for (const u of plan.unslotted) byReason.set(u.reason, (byReason.get(u.reason) ?? 0) + 1);
    for (const [reason, n] of byReason) this.notes.push(`${sc.module}: ${n} point(s) without a slot: ${reason}`);
  }

  /** Take one sample from the target into the histograms. */
  async sample(): Promise<void> {
    const s = await this.cdp.evaluate<Sample>(`${R}.sample()`);
    this.record(s);
  }

  private record(s: Sample): void {
    const t = s.t / 1000;
    const from = this.lastT === 0 ? t : this.lastT;
    for (const [name, value] of s.counters) this.feed(name, 'count', value, from, t);
    for (const [name, value] of s.timers) this.feed(name, 'seconds', value, from, t);
    this.lastT = t;
    this.emit('sample');
  }

  private feed(name: string, units: 'count' | 'seconds', value: number, from: number, to: number): void {
    let h = this.histograms.get(name);
    if (!h) { h = new TimeHistogram(this.opts.buckets ?? 64, 0.1); this.histograms.set(name, h); this.units.set(name, units); }
    const prev = this.last.get(name) ?? 0;
    const delta = value - prev;
    this.last.set(name, value);
    const base = this.baseT ?? (this.baseT = from);
    if (delta !== 0) h.add(Math.max(0, from - base), Math.max(0, to - base), delta);
  }

  /** Sample every `ms` milliseconds until detach or exit (changeable at any time). */
  startSampling(ms = this.intervalMs): void {
    this.intervalMs = ms;
    if (this.samplerTimer) clearInterval(this.samplerTimer);
    this.samplerTimer = setInterval(() => { this.sample().catch(() => undefined); }, ms);
  }

  stopSampling(): void {
    if (this.samplerTimer) clearInterval(this.samplerTimer);
    this.samplerTimer = null;
  }

  metrics(): MetricValue[] {
    const focus = `/Process/${os.hostname()}:${this.pid}`;
    return [...this.histograms.entries()].map(([name, h]) => ({
      name, focus, units: this.units.get(name)!, total: this.last.get(name) ?? 0,
      histogram: { bucketSeconds: h.bucketSeconds, buckets: h.values() },
    }));
  }

  /** Resolves when the target has exited (its last sample is recorded by then). */
  waitForExit(): Promise<void> {
    return this.exitPromise;
  }

  private onGone(): void {
    this.stopSampling();
    if (!this.detached) {
      this.exited = true;
      // the runtime wrote its last values while exiting: nothing is lost
      for (const f of this.server.readFinal(this.pid)) this.record(f.sample);
      const finish = () => { this.server.close(); this.resolveExit(); this.emit('exit', this.exitCode); };
      if (this.child && this.child.exitCode === null && this.child.signalCode === null) this.child.once('exit', (c) => { this.exitCode = c; finish(); });
      else finish();
    }
  }

  /** Put the target back as it was: slots off, LiveEdited scripts restored, agent gone, no port open. */
  async detach(): Promise<void> {
    if (this.detached || this.exited) return;
    this.stopSampling();
    try {
      await this.sample();
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
      await this.cdp.send('Debugger.disable');
      await this.cdp.agent('goodbye');
    } catch (e) {
      if (!(e instanceof TargetGoneError)) throw e;
    }
    this.detached = true;
    this.cdp.close();
    this.server.close();
    this.resolveExit();
  }

  get usedInspectorPort(): boolean { return this.openedPort; }
  get elapsedSeconds(): number { return (Date.now() - this.startMs) / 1000; }
}

function toSpec(req: ProbeRequest, id: number, kinds: Map<string, 'wall' | 'cpu'>): ProbeSpec {
  const snippet = compileSnippet(req.snippet, { point: pointClass(req.point), timerKinds: kinds });
  return { id, match: codeGlobToRegex(req.resource), point: req.point, where: req.where, order: req.order, snippet };
}

/** Cheap pre-filter: could a glob's module part match this module? */
function moduleMayMatch(glob: string, module: string): boolean {
  const g = glob.slice('/Code/'.length);
  const cut = g.lastIndexOf('/');
  if (cut < 0 || g.endsWith('**')) return true;
  try { return new RegExp(codeGlobToRegex('/Code/' + g.slice(0, cut))).test(module); } catch { return true; }
}

export { CdpError };
