// What the page shows, read from the session's parts: its processes and
// resources, the metric instances' histograms, the consultant's search, call
// paths; and what the page asks for (predict, enable, disable) done through
// the metric manager, as the command line does it.
import * as path from 'path';
import { calleeName, loopName } from '../analysis/point-select';
import type { PerformanceConsultant, SearchNode } from '../consultant/search';
import type { MdlLibrary } from '../mdl/library';
import type { MetricInstance, MetricManager } from '../metrics/manager';
import { requestKey } from '../metrics/instance';
import type { Session } from '../session/session';
import { callPathFlame, sampleFlame } from './flame';
import type { ClientMsg, FlameGraph, HelloMsg, InstanceData, MetricInfo, ProcessInfo, ReplyMsg, ReportMsg, ResourceNode, SearchNodeData, ServerMsg } from './protocol';

interface Watched { s: Session; label: string; ended: string | null }

/** while a page watches, the resources are listed again this often (code loads as the program runs) */
const RESOURCES_EVERY_MS = 10000;

export class UiState {
  private readonly sessions: Watched[] = [];
  private mm?: MetricManager;
  private consultant?: PerformanceConsultant;
  /** what the page enabled: request key -> the instances and the cost predicted */
  private readonly fromPage = new Map<string, { insts: MetricInstance[]; predicted?: number }>();
  private resources: ResourceNode[] = [];
  private resourcesAt = 0;
  private listing?: Promise<void>;
  /** why the last listing lacks a session's code, if it does */
  private listFailed?: string;
  /** module name -> its file (the program's own modules only: what /source may read) */
  private readonly files = new Map<string, string>();
  /** the search's nodes as last sent (JSON), to send only what changed */
  private readonly nodesSent = new Map<number, string>();
  private costSent = 0;
  private processesSent = '';
  private flameSent = '';
  private report?: ReportMsg;
  private readonly t0 = Date.now();
  private readonly metricInfo: MetricInfo[];

  constructor(private readonly title: string, private readonly library: MdlLibrary, private readonly broadcast: (m: ServerMsg) => void,
    private readonly searchComing = false) {
    this.metricInfo = [...library.metrics.values()].sort((a, b) => a.name.localeCompare(b.name)).map((m) => ({
      name: m.name, title: m.title, units: m.units,
      hierarchies: m.constraints.map((c) => library.constraints.get(c.name)?.hierarchy ?? c.name),
    }));
  }

  addSession(s: Session, label?: string): void {
    const w: Watched = { s, label: label ?? `process ${s.pid}`, ended: null };
    this.sessions.push(w);
    void s.waitForExit().then(() => {
      w.ended = s.fate ?? 'detached';
      this.broadcast(this.processes());
    });
    this.broadcast(this.processes());
    void this.listResources(true).catch(() => undefined);
  }

  /** The manager the page enables through; with no search running, the page also watches the instrumentation's observed cost. */
  async useManager(mm: MetricManager): Promise<void> {
    this.mm = mm;
    if (!this.consultant && mm.library.metrics.has('observed_cost')) await mm.enable('observed_cost').catch(() => undefined);
  }

  /** The search (its manager is the page's; it watches the cost itself). */
  useConsultant(c: PerformanceConsultant): void {
    this.consultant = c;
    this.mm = c.manager;
  }

  setReport(r: ReportMsg): void {
    this.report = r;
    this.broadcast(r);
  }

  /** the file of one of the program's modules, if the resources named it */
  fileOf(module: string): string | undefined {
    return this.files.get(module);
  }

  /** A module the search found functions in (a bottleneck's source): the program's, where its session runs. */
  noteModule(module: string, pid: number | null): string | undefined {
    const w = this.sessions.find((x) => x.s.pid === pid) ?? this.sessions[0];
    if (!this.files.has(module) && w && !module.startsWith('node:')) this.files.set(module, path.resolve(w.s.cwd, module));
    return this.files.get(module);
  }

  /** Everything, for a page that connects. */
  snapshot(): ServerMsg[] {
    const out: ServerMsg[] = [this.hello()];
    if (this.resources.length) out.push({ type: 'resources', nodes: this.resources });
    // the search whole, and from now on what changes
    out.push(...this.updates(true, true));
    if (this.report) out.push(this.report);
    // code loaded since the last listing (a launched program's modules load after it started)
    void this.listResources(true).catch(() => undefined);
    return out;
  }

  /** What changed since the last call (all of the search's nodes if `whole`); call paths too if `flame`. */
  updates(flame: boolean, whole = false): ServerMsg[] {
    const out: ServerMsg[] = [];
    if (!whole) void this.listResources().catch(() => undefined);
    const p = this.processes();
    if (whole || JSON.stringify(p) !== this.processesSent) { this.processesSent = JSON.stringify(p); out.push(p); }
    out.push({ type: 'instances', t: this.now(), instances: this.instances() });
    const c = this.consultant;
    if (c) {
      const nodes: SearchNodeData[] = [];
      for (const n of c.nodes) {
        const text = JSON.stringify(nodeData(n));
        if (whole || this.nodesSent.get(n.id) !== text) { this.nodesSent.set(n.id, text); nodes.push(JSON.parse(text)); }
      }
      const cost = c.costTrace.slice(whole ? 0 : this.costSent);
      this.costSent = c.costTrace.length;
      out.push({ type: 'consultant', t: c.now(), nodes, cost, limit: Number.isFinite(c.limit) ? c.limit : null, complete: c.complete });
    }
    if (flame) {
      const graphs = this.flames();
      const text = JSON.stringify(graphs);
      if (whole || text !== this.flameSent) { this.flameSent = text; out.push({ type: 'flame', graphs }); }
    }
    return out;
  }

  /** Do what the page asks; the answer goes back to it. */
  async handle(msg: ClientMsg): Promise<ReplyMsg | null> {
    if (typeof msg?.id !== 'number') return null;
    const id = msg.id;
    try {
      if (msg.type === 'resources') {
        // (a listing under way when asked is waited for, then one made now: code may have loaded since it began)
        await this.listResources(true);
        await this.listResources(true);
        if (this.listFailed) return { type: 'reply', id, error: this.listFailed };
        return { type: 'reply', id, resources: this.resources };
      }
      const mm = this.mm;
      if (!mm) return { type: 'reply', id, error: 'no metrics can be enabled yet: the target is being started or attached' };
      if (msg.type === 'predict') {
        const p = await mm.predict(String(msg.metric), String(msg.focus ?? ''));
        return { type: 'reply', id, prediction: { cost: p.cost, points: p.points } };
      }
      if (msg.type === 'enable') {
        const metric = String(msg.metric), focus = String(msg.focus ?? '');
        // a glob cannot be predicted as one request: it is enabled without
        const p = await mm.predict(metric, focus).catch(() => undefined);
        const predicted = p?.cost;
        const insts = await mm.enableAll(metric, focus);
        const key = requestKey(metric, focus);
        this.fromPage.set(key, { insts, predicted });
        for (const s of mm.sessions) await s.sample().catch(() => undefined);
        this.broadcast({ type: 'instances', t: this.now(), instances: this.instances() });
        return { type: 'reply', id, key, ...(p ? { prediction: { cost: p.cost, points: p.points } } : {}) };
      }
      if (msg.type === 'disable') {
        const req = this.fromPage.get(String(msg.key)) ?? [...this.fromPage.values()].find((r) => r.insts.some((i) => i.key === msg.key));
        if (!req) return { type: 'reply', id, error: `"${msg.key}" was not enabled from this page` };
        for (const [k, r] of this.fromPage) if (r === req) this.fromPage.delete(k);
        // the instances of a glob request go together
        for (const i of new Set(req.insts.map((x) => x.group ?? x))) await mm.disable(i);
        this.broadcast({ type: 'instances', t: this.now(), instances: this.instances() });
        return { type: 'reply', id };
      }
      return { type: 'reply', id, error: `unknown request "${(msg as { type: string }).type}"` };
    } catch (e) {
      return { type: 'reply', id, error: (e as Error).message };
    }
  }

  private now(): number { return (Date.now() - this.t0) / 1000; }

  private hello(): HelloMsg {
    return { type: 'hello', title: this.title, processes: this.processes().processes, metrics: this.metricInfo, consultant: !!this.consultant || this.searchComing, t: this.now() };
  }

  private processes(): { type: 'processes'; processes: ProcessInfo[] } {
    return {
      type: 'processes',
      processes: this.sessions.map(({ s, label, ended }) => ({
        pid: s.pid, focus: s.processFocus, label, ended,
        threads: s.threadIds.map((id) => ({ id, focus: `/Thread/${s.pid}/${id}` })),
      })),
    };
  }

  private instances(): InstanceData[] {
    if (!this.mm) return [];
    const predicted = new Map<string, number | undefined>();
    for (const [k, r] of this.fromPage) {
      predicted.set(k, r.predicted);
      for (const i of r.insts) predicted.set(i.key, r.predicted);
    }
    return this.mm.values().map((v) => {
      const key = requestKey(v.name, v.focus);
      const d: InstanceData = { key, metric: v.name, focus: v.focus, units: v.units, total: v.total, bucketSeconds: v.histogram.bucketSeconds, buckets: v.histogram.buckets };
      if (!predicted.has(key)) d.internal = true;
      else if (predicted.get(key) !== undefined) d.predictedCost = predicted.get(key);
      if (v.implausible) d.implausible = v.implausible;
      if (v.stopped) d.stopped = v.stopped;
      return d;
    });
  }

  /** Each session's code (the program's, not Node's built-ins), threads, process and sync objects. */
  private listResources(force = false): Promise<void> {
    if (this.listing) return this.listing;
    if (!force && Date.now() - this.resourcesAt < RESOURCES_EVERY_MS) return Promise.resolve();
    this.listing = (async () => {
      let failed: string | undefined;
      const nodes = new Map<string, ResourceNode>();
      const add = (n: ResourceNode) => { if (!nodes.has(n.path)) nodes.set(n.path, n); };
      for (const { s, ended } of this.sessions) {
        if (ended) continue;
        add({ path: s.processFocus, kind: 'process', pid: s.pid });
        for (const t of s.threadIds) add({ path: `/Thread/${s.pid}/${t}`, kind: 'thread', pid: s.pid, label: t === 'main' ? 'main' : `worker ${t}` });
        for (const o of s.syncObjects()) add({ path: o.path, kind: 'syncobject', pid: s.pid });
        // (a session that cannot list its code says why, at the next request for the listing)
        const code = await s.resources('/Code/**').catch((e: unknown) => { failed = `${s.processFocus}: its code could not be listed: ${(e as Error)?.message ?? e}`; return []; });
        for (const r of code) {
          if (r.module.startsWith('node:')) continue;
          this.files.set(r.module, path.resolve(s.cwd, r.module));
          add({ path: `/Code/${r.module}`, kind: 'module', pid: s.pid, label: r.module });
          add({ path: r.path, kind: 'function', pid: s.pid, label: r.function, source: `${r.module}:${r.line}` });
          for (const p of r.points) {
            const callee = p.kind === 'call' && p.callee !== undefined ? calleeName(p.callee) : null;
            if (callee) add({ path: `${r.path}/${callee}()`, kind: 'callsite', pid: s.pid, label: `${callee}()`, source: `${r.module}:${p.line}` });
            if (p.kind === 'loop') add({ path: `${r.path}/${loopName(p, r.points)}`, kind: 'loop', pid: s.pid, source: `${r.module}:${p.line}` });
          }
        }
      }
      const listed = [...nodes.values()];
      this.resourcesAt = Date.now();
      this.listFailed = failed;
      // a page rebuilds its tree from a listing: only a new one is sent
      if (JSON.stringify(listed) === JSON.stringify(this.resources)) return;
      this.resources = listed;
      this.broadcast({ type: 'resources', nodes: this.resources });
    })().finally(() => { this.listing = undefined; });
    return this.listing;
  }

  /** Per thread: the call-path profile's whole paths, else its stack samples. */
  private flames(): FlameGraph[] {
    const out: FlameGraph[] = [];
    for (const { s } of this.sessions) {
      const paths = s.callPaths(Infinity);
      for (const t of s.threadIds) {
        const mine = paths.filter((p) => p.thread === t);
        if (mine.length) { out.push(callPathFlame(mine, `process ${s.pid}, thread ${t}: call paths (wall time)`)); continue; }
        const st = s.stackSamples(t);
        if (st.samples) out.push(sampleFlame(st, `process ${s.pid}, thread ${t}: stack samples (functions on the stack)`));
      }
    }
    return out;
  }
}

function nodeData(n: SearchNode): SearchNodeData {
  const { id, parent, hypothesis, focus, state, value, threshold, thread, predictedCost, tests, source, note } = n;
  return { id, parent, hypothesis, focus, state, value, threshold, thread, predictedCost, tests, source, note };
}
