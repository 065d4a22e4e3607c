// The Metric Manager: a request for a metric on a focus becomes snippets at
// points (through the MDL evaluator), placed in every session's process. Identical
// requests share one instance; constraint flags are shared by every instance
// that needs the same constraint on the same resource; both are reference-
// counted and removed with their last user. Values are read per thread and
// aggregated to processes and the program with the metric's operator.
import { EventEmitter } from 'events';
import { COST_SERIES } from '../agent/runtime';
import { calibration, Calibration, handlerPrices, loadCalibration } from '../cost/calibration';
import type { HandlerPrices } from '../agent/intrusion';
import { predictPlan, Prediction, PredictOptions } from '../cost/predict';
import { pathSeries, THREAD_SERIES } from '../session/series';
import { Session, SessionOptions } from '../session/session';
import { parseProbe, ProbeRequest } from '../instrument/probe';
import type { MetricDecl } from '../mdl/ast';
import { constraintFor, FocusError, FocusPart, isTimerPlan, planRequest, Plan, Placement, usesQueue } from '../mdl/evaluate';
import { MdlLibrary } from '../mdl/library';
import { expandFocus, parseCallPathFocus, parseCallSite, parseLoop, resolveFocus, splitFocus } from './focus';
import { Flag, MetricInstance, MetricInstanceValue, PerSession, Placed, requestKey as key, VectorOf } from './instance';

export { MetricInstance } from './instance';
export type { MetricInstanceValue } from './instance';

type CodePart = Extract<FocusPart, { hierarchy: '/Code' }>;

/** Where a plan goes in one session: nowhere (null), or its threads (undefined: all of them). */
function scopeIn(plan: Plan, s: Session): { threads?: string[] } | null {
  if (plan.processes && !plan.processes.includes(s.pid)) return null;
  if (!plan.threads) return {};
  const threads = plan.threads.filter((t) => t.pid === s.pid).map((t) => t.thread);
  return threads.length ? { threads } : null;
}

const isVector = (i: MetricInstance) => i.vector !== undefined;

/** The /SyncObject part of a focus (a kind, an instance, or a glob over instances). */
const objectPart = (parts: string[]) => parts.find((p) => p.startsWith('/SyncObject/'));

/** In /SyncObject, `*` matches across `/`: an instance (a file's path) is one resource. */
function objectMatcher(glob: string): (r: string) => boolean {
  const re = new RegExp('^' + glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*+/g, '.*').replace(/\?/g, '.') + '$');
  return (r) => re.test(r);
}

/** The vector of a /Code glob request: a cell per function (module), named after it. */
function codeVector(variable: string, rest: string[]): VectorOf {
  return { stem: variable.replace(/\$(fn|mod)$/, '@'), match: () => true, focusOf: (r) => [r, ...rest].join(',') };
}

/**
 * Can a request be one vectorized placement? Its focus has one glob, over
 * /Code, and the metric's constraint there replaces the metric's code (a flag
 * constraint needs one flag per resource).
 */
function vectorizable(lib: MdlLibrary, m: MetricDecl, focus: string): { part: CodePart; rest: string[] } | null {
  const parts = splitFocus(focus);
  const globs = parts.filter((p) => /[*?]/.test(p));
  if (globs.length !== 1 || !globs[0].startsWith('/Code/')) return null;
  const part: CodePart = { hierarchy: '/Code', kind: guessCodeKind(globs[0]), path: globs[0] };
  try {
    if (constraintFor(lib, m, part).type !== 'replace') return null;
  } catch {
    return null;
  }
  return { part, rest: parts.filter((p) => p !== globs[0]) };
}

/** Before a program has loaded: a call site by its "()", else see guessCodeKind. */
function guessCodePart(p: string): CodePart {
  const cs = parseCallSite(p);
  const loop = parseLoop(p);
  if (loop) return { hierarchy: '/Code', kind: 'loop', path: p, ...loop };
  return cs ? { hierarchy: '/Code', kind: 'callsite', path: p, ...cs } : { hierarchy: '/Code', kind: guessCodeKind(p), path: p };
}

/** Before a program has loaded, a /Code path ending in a script's extension is taken for a module. */
function guessCodeKind(p: string): 'function' | 'module' {
  return /\.[cm]?[jt]sx?$/.test(p) ? 'module' : 'function';
}

/**
 * Placements go in one by one while the program runs: stops (and flag
 * decrements) first, so that a call already under way when its start goes in
 * cannot leave a timer running or a flag raised (a stop of a timer that is not
 * running does nothing; flags are decremented only above 0).
 */
function closingFirst(ps: Placement[]): Placement[] {
  const closing = (p: Placement) => /stopTimer\(|--/.test(p.snippet);
  return [...ps.filter(closing), ...ps.filter((p) => !closing(p))];
}

function placementOf(r: ProbeRequest): Placement {
  return { resource: r.resource, point: r.point, where: r.where, order: r.order, snippet: r.snippet, optional: true };
}


export class MetricManager extends EventEmitter {
  private readonly instances = new Map<string, MetricInstance>();
  private readonly flags = new Map<Session, Map<string, Flag>>();
  private nextId = 1;
  private nextVar = 1;


  constructor(readonly sessions: Session[], readonly library: MdlLibrary = MdlLibrary.standard()) {
    super();
  }

  /**
   * Launch a program with metrics on from its first line. Requests whose focus
   * names only /Code resources are placed before the program starts (a path
   * ending in .js, .mjs, .cjs or .ts is taken for a module, anything else for
   * a function); the others are enabled as soon as it runs.
   */
  static async launch(command: string[], requests: { metric: string; focus?: string }[], opts: SessionOptions & { probes?: string[]; progress?: (msg: string) => void } = {},
    library = MdlLibrary.standard()): Promise<{ session: Session; manager: MetricManager; instances: MetricInstance[] }> {
    const mm = new MetricManager([], library);
    if (opts.progress) mm.on('progress', opts.progress);
    // measured before the program starts, not while it runs
    if (requests.some((r) => { const b = library.metric(r.metric).base; return b.type === 'thread' && b.source === 'cost'; })) {
      await mm.costCalibration();
    }
    const early: { inst: MetricInstance; plan: Plan; probes: number[]; flags: string[]; parts: string[]; obj?: string }[] = [];
    // the user's own probes first: they keep ids 1..n
    const reqs: ProbeRequest[] = (opts.probes ?? []).map((p) => parseProbe(p));
    const flagVars = new Map<string, string>();
    const flagProbes = new Map<string, { f: Plan['flags'][number]; probes: number[] }>();
    const later: { metric: string; focus: string }[] = [];
    const toReq = (p: Placement): number => {
      reqs.push({ text: `${p.resource}.${p.point} ${p.where} ${p.order}: ${p.snippet}`, resource: p.resource, point: p.point, where: p.where, order: p.order, snippet: p.snippet });
      return reqs.length;
    };
    const held = new Set<string>();
    for (const r of requests) {
      const m = library.metric(r.metric);
      const focus = queueFocus(library, m, r.focus ?? '');
      const parts = splitFocus(focus);
      const obj = objectPart(parts);
      // a second request over the same /SyncObject kind reads the first one's cells (placed once)
      if (obj) {
        const hk = mm.holderKey(m, parts, obj);
        if (held.has(hk)) { later.push({ metric: r.metric, focus }); continue; }
        held.add(hk);
      }
      const vector = obj ? null : vectorizable(library, m, focus);
      const codeParts = parts.filter((p) => p !== obj);
      // /Code parts (and a call path's functions) can be placed before the code exists; a glob only as one vectorized placement
      const early_ = codeParts.every((p) => p.startsWith('/Code/') || p.startsWith('/CallPath/')) && (vector !== null || !codeParts.some((p) => /[*?]/.test(p)));
      if (!early_ || mm.instances.has(key(r.metric, focus))) { later.push({ metric: r.metric, focus }); continue; }
      const guessed: FocusPart[] = parts.map((p) => (p === obj ? { hierarchy: '/SyncObject', path: p } : p.startsWith('/CallPath/') ? parseCallPathFocus(p) : guessCodePart(p)));
      const variable = vector ? `_pnm${mm.nextVar++}$${vector.part.kind === 'module' ? 'mod' : 'fn'}` : `_pnm${mm.nextVar++}`;
      const plan = planRequest(library, m, guessed, variable, (fk) => flagVars.get(fk) ?? (flagVars.set(fk, `_pnk${mm.nextVar++}`), flagVars.get(fk)!));
      for (const f of plan.flags) if (!flagProbes.has(f.key)) flagProbes.set(f.key, { f, probes: f.placements.map(toReq) });
      // a /SyncObject request's placement is the holder of its kind's cells (see enableObjects)
      const kind = obj ? constraintFor(library, m, { hierarchy: '/SyncObject', path: obj }).hierarchy : null;
      const inst = new MetricInstance(mm.nextId++, m, parts.map((p) => (p === obj ? kind : p)).join(','), (s) => mm.flagsFor(s));
      if (vector) inst.vector = codeVector(variable, vector.rest);
      if (!obj) mm.instances.set(inst.key, inst);
      early.push({ inst, plan, probes: plan.placements.map(toReq), flags: plan.flags.map((f) => f.key), parts, obj });
    }
    // whole-thread values from each thread's first line: a program may end before the first sample
    // (and for CPU-time metrics the kernel's count of each thread's CPU time, the bound their values cannot pass)
    // timers compensated from the first line
    const prices = early.some((e) => isTimerPlan(e.plan)) ? await mm.prices() : undefined;
    // a call path counts from the program's first line, from 0: watched before it can end
    const watchPaths = early.filter((e) => e.plan.kind === 'path').map((e) => ({ k: e.plan.callPath!.k, functions: e.plan.callPath!.functions }));
    const session = await Session.launch(command, reqs, { ...opts, prices: prices ?? undefined, watchPaths,
      watchThreads: opts.watchThreads || early.some((e) => e.plan.kind === 'thread' || cpuTime(e.inst.metric)) });
    mm.sessions.push(session);
    if (prices !== undefined) mm.pricedAs(session, prices);
    const flags = mm.flagsFor(session);
    const standing = (probe: number, what: string): Placed => ({ placement: placementOf(reqs[probe - 1]), probe, placed: -1, how: `${what}: placed as code loads` });
    for (const [k, { f, probes }] of flagProbes) flags.set(k, { variable: f.variable, users: 0, probes: probes.map((id) => standing(id, `constraint ${f.constraint} on ${f.resource}`)) });
    const instances: MetricInstance[] = [];
    for (const e of early) {
      for (const k of e.flags) flags.get(k)!.users++;
      e.inst.perSession.push({ session, plan: e.plan, probes: e.probes.map((id) => standing(id, `metric ${e.inst.metric.name}`)), flags: e.flags, base: new Map() });
      if (cpuTime(e.inst.metric)) await mm.noteRan(e.inst.perSession[0], true);
      if (e.plan.kind === 'thread' && e.plan.threadValue === 'cost') e.inst.calibration = await mm.costCalibration();
      if (e.plan.kind === 'thread') await mm.startThreadValues(e.inst.perSession[0], true);
      if (e.plan.kind === 'path') e.inst.perSession[0].watching = true;
      if (e.obj) {
        const hk = mm.holderKey(e.inst.metric, e.parts, e.obj);
        const have = mm.holders.get(hk);
        if (have) throw new Error(`internal: two launch requests hold ${hk}`);
        mm.holders.set(hk, e.inst);
        instances.push(...mm.objectView(e.inst, e.parts, e.obj));
      } else instances.push(...(isVector(e.inst) ? mm.members(e.inst) : [e.inst]));
    }
    try {
      for (const r of later) instances.push(...await mm.enableAll(r.metric, r.focus));
    } catch (e) {
      await session.detach().catch(() => undefined);
      session.child?.kill();
      throw e;
    }
    return { session, manager: mm, instances };
  }

  /** Every live instance. */
  get all(): MetricInstance[] { return [...this.instances.values()]; }

  /**
   * Enable `metric` for each focus a (possibly globbed) focus stands for:
   * `procedure_calls` + `/Code/lib/*.js/*` gives one instance per function.
   */
  async enableAll(metric: string, focus = ''): Promise<MetricInstance[]> {
    const m = this.library.metric(metric);
    const parts = splitFocus(focus);
    const obj = objectPart(parts);
    if (obj) return this.enableObjects(m, parts, obj);
    const vector = vectorizable(this.library, m, focus);
    if (vector) {
      const group = await this.enableVector(m, focus, vector);
      for (const s of this.sessions) await s.sample();
      return this.members(group);
    }
    const out: MetricInstance[] = [];
    for (const f of await expandFocus(focus, this.sessions)) out.push(await this.enable(metric, f));
    return out;
  }

  /**
   * A glob over /Code whose constraint replaces the metric's code: one standing
   * request whose counter or timer is a vector with a cell per function
   * (module), so it costs one placement whatever the number of functions,
   * and functions loaded later join it.
   */
  private async enableVector(m: MetricDecl, focus: string, v: { part: CodePart; rest: string[] }): Promise<MetricInstance> {
    const k = key(m.name, focus);
    const known = this.instances.get(k);
    if (known) { known.users++; return known; }
    const parts = [v.part, ...await resolveFocus(v.rest.join(','), this.sessions)];
    const group = new MetricInstance(this.nextId++, m, splitFocus(focus).join(','), (s) => this.flagsFor(s));
    const variable = `_pnm${this.nextVar++}$${v.part.kind === 'module' ? 'mod' : 'fn'}`;
    group.vector = codeVector(variable, v.rest);
    try {
      for (const s of this.sessions) {
        const plan = planRequest(this.library, m, parts, variable, () => { throw new Error('a vectorized request has no flags'); });
        const scope = scopeIn(plan, s);
        if (!scope) continue;
        const threads = scope.threads;
        const ps: PerSession = { session: s, plan, probes: [], flags: [], threads, base: new Map() };
        group.perSession.push(ps);
        if (cpuTime(m)) await this.noteRan(ps);
        if (isTimerPlan(plan)) await this.compensate(s);
        for (const p of closingFirst(plan.placements)) ps.probes.push(await this.place(s, { ...p, optional: true }, threads, `metric ${m.name}`));
      }
    } catch (e) {
      await this.remove(group).catch(() => undefined);
      throw e;
    }
    this.instances.set(k, group);
    this.emit('enabled', group);
    return group;
  }

  /** The instances of a vectorized request so far: one per resource (function, module, file, channel) seen. */
  private members(group: MetricInstance): MetricInstance[] {
    const v = group.vector;
    const source = group.holder ?? group;
    if (!v) return [];
    const cache = group.members ??= new Map();
    const paths = new Set<string>();
    for (const ps of source.perSession) for (const n of ps.session.sampledNames(v.stem)) if (v.match(n.slice(v.stem.length))) paths.add(n.slice(v.stem.length));
    for (const p of [...paths].sort()) if (!cache.has(p)) cache.set(p, this.memberOf(group, p));
    return [...cache.values()];
  }

  private memberOf(group: MetricInstance, resource: string): MetricInstance {
    const inst = new MetricInstance(this.nextId++, group.metric, group.vector!.focusOf(resource), (s) => this.flagsFor(s));
    inst.group = group;
    for (const ps of (group.holder ?? group).perSession) inst.perSession.push({ ...ps, plan: { ...ps.plan, variable: group.vector!.stem + resource }, probes: [], base: new Map() });
    return inst;
  }

  /** Placements over a /SyncObject kind, by metric, other focus parts and kind: shared by the requests that read them. */
  private readonly holders = new Map<string, MetricInstance>();

  private holderKey(m: MetricDecl, parts: string[], obj: string): string {
    const c = constraintFor(this.library, m, { hierarchy: '/SyncObject', path: obj });
    return `${m.name}@${parts.filter((p) => p !== obj).join(',')}#${c.hierarchy}`;
  }

  /**
   * A focus on /SyncObject: one placement for the kind (every file, every
   * channel) with a cell per instance; the request reads the cells it picks.
   * A glob gives one instance per match, an instance one, the kind itself
   * (/SyncObject/File) one that sums them all.
   */
  private async enableObjects(m: MetricDecl, parts: string[], obj: string): Promise<MetricInstance[]> {
    const focus = parts.join(',');
    const known = this.instances.get(key(m.name, focus));
    if (known) { known.users++; return isVector(known) ? this.members(known) : [known]; }
    const hk = this.holderKey(m, parts, obj);
    let holder = this.holders.get(hk);
    if (holder) holder.users++;
    else {
      const kind = constraintFor(this.library, m, { hierarchy: '/SyncObject', path: obj }).hierarchy;
      holder = await this.enable(m.name, parts.map((p) => (p === obj ? kind : p)).join(','), true);
      this.holders.set(hk, holder);
    }
    return this.objectView(holder, parts, obj);
  }

  /** The request for `obj` over a holder's cells (made once; enableObjects counts its users). */
  private objectView(holder: MetricInstance, parts: string[], obj: string): MetricInstance[] {
    const m = holder.metric;
    const kind = splitFocus(holder.focus).find((p) => p.startsWith('/SyncObject/'))!;
    const rest = parts.filter((p) => p !== obj);
    const stem = `${holder.perSession[0]?.plan.variable ?? ''}@`;
    const view = new MetricInstance(this.nextId++, m, parts.join(','), (s) => this.flagsFor(s));
    view.holder = holder;
    if (/[*?]/.test(obj)) {
      view.vector = { stem, match: objectMatcher(obj), focusOf: (r) => [r, ...rest].join(',') };
      this.instances.set(view.key, view);
      return this.members(view);
    }
    for (const ps of holder.perSession) {
      view.perSession.push({ ...ps, plan: { ...ps.plan, variable: stem + obj }, probes: [], base: new Map(), ...(obj === kind ? { sumOf: `${stem}${kind}/` } : {}) });
    }
    this.instances.set(view.key, view);
    return [view];
  }

  /** Enable one metric for one focus (no globs); an identical request shares the instance. */
  async enable(metric: string, focus?: string): Promise<MetricInstance>;
  /** @internal a holder of /SyncObject cells: placed, not listed */
  async enable(metric: string, focus: string, holder: true): Promise<MetricInstance>;
  async enable(metric: string, focus = '', holder = false): Promise<MetricInstance> {
    const m = this.library.metric(metric);
    if (!holder && queueFocus(this.library, m, focus) !== focus) return this.enable(metric, queueFocus(this.library, m, focus));
    const obj = objectPart(splitFocus(focus));
    if (obj && !holder) {
      if (/[*?]/.test(obj)) throw new FocusError(`focus "${focus}" stands for every instance matching ${obj}: use enableAll`);
      return (await this.enableObjects(m, splitFocus(focus), obj))[0];
    }
    const k = key(metric, focus);
    const known = holder ? undefined : this.instances.get(k);
    if (known) { known.users++; return known; }
    const parts = await resolveFocus(focus, this.sessions);
    const inst = new MetricInstance(this.nextId++, m, splitFocus(focus).join(','), (s) => this.flagsFor(s));
    const variable = `_pnm${this.nextVar++}`;
    const plans = this.sessions.map((s) => planRequest(this.library, m, parts, variable, (fk) => this.flagsFor(s).get(fk)?.variable ?? `_pnk${this.nextVar++}`));
    try {
      for (let i = 0; i < this.sessions.length; i++) {
        const s = this.sessions[i], plan = plans[i];
        const scope = scopeIn(plan, s);
        if (!scope) continue;
        const threads = scope.threads;
        const ps: PerSession = { session: s, plan, probes: [], flags: [], threads, base: new Map() };
        inst.perSession.push(ps);
        // a queue's sends count once its dispatches are placed in every thread (Session.holdQueues)
        if (usesQueue(m)) await s.holdQueues(variable, true);
        if (cpuTime(m)) await this.noteRan(ps);
        for (const f of plan.flags) {
          const flags = this.flagsFor(s);
          const have = flags.get(f.key);
          if (have) have.users++;
          else {
            const flag: Flag = { variable: f.variable, probes: [], users: 1 };
            flags.set(f.key, flag);
            for (const p of closingFirst(f.placements)) flag.probes.push(await this.place(s, p, threads, `constraint ${f.constraint} on ${f.resource}`));
          }
          ps.flags.push(f.key);
        }
        if (isTimerPlan(plan)) await this.compensate(s);
        for (const p of closingFirst(plan.placements)) ps.probes.push(await this.place(s, p, threads, `metric ${m.name}`));
        if (usesQueue(m)) await s.holdQueues(variable, false);
        if (plan.kind === 'thread' && plan.threadValue === 'cost') inst.calibration = await this.costCalibration();
        if (plan.kind === 'thread') await this.startThreadValues(ps);
        if (plan.kind === 'path') await this.startPath(ps);
      }
    } catch (e) {
      await this.remove(inst).catch(() => undefined);
      throw e;
    }
    if (holder) return inst;
    this.instances.set(k, inst);
    this.emit('enabled', inst);
    return inst;
  }

  /**
   * The predicted cost of enabling one metric for one focus (no globs), before
   * anything is placed: 0 if an identical request is in place. `known` gives
   * functions' counted entry rates, `factor` scales the static estimates of the
   * others, `selfShare` the share of their thread functions' own code takes
   * (what pinning one reached by breakpoints costs; see cost/predict).
   */
  async predict(metric: string, focus = '', opts: Omit<PredictOptions, 'flagsPlaced'> = {}): Promise<Prediction> {
    const m = this.library.metric(metric);
    const out = noPrediction();
    if (this.instances.has(key(metric, focus))) return out;
    const parts = await resolveFocus(focus, this.sessions);
    const cal = await this.costCalibration();
    for (const s of this.sessions) {
      const plan = planRequest(this.library, m, parts, '_pnm0', (fk) => this.flagsFor(s).get(fk)?.variable ?? '_pnk0');
      if (!scopeIn(plan, s)) continue;
      addPrediction(out, await predictPlan(plan, s, cal, { ...opts, flagsPlaced: (fk) => this.flagsFor(s).has(fk) }));
    }
    return out;
  }

  /**
   * The predicted cost of what enableAll(metric, focus) would place, globs
   * included: a glob over /Code a vector request takes is priced as that one
   * request over every function it matches; another glob as the sum of its
   * expansions. 0 where the request is in place already.
   */
  async predictAll(metric: string, focus = '', opts: Omit<PredictOptions, 'flagsPlaced'> = {}): Promise<Prediction> {
    const m = this.library.metric(metric);
    const out = noPrediction();
    if (this.instances.has(key(metric, focus))) return out;
    const v = splitFocus(focus).some((p) => p.startsWith('/SyncObject/')) ? null : vectorizable(this.library, m, focus);
    if (!v) {
      for (const f of /[*?]/.test(focus) ? await expandFocus(focus, this.sessions) : [focus]) addPrediction(out, await this.predict(metric, f, opts));
      return out;
    }
    const parts = [v.part, ...await resolveFocus(v.rest.join(','), this.sessions)];
    const cal = await this.costCalibration();
    for (const s of this.sessions) {
      const plan = planRequest(this.library, m, parts, '_pnm0', () => '_pnk0');
      if (scopeIn(plan, s)) addPrediction(out, await predictPlan(plan, s, cal, opts));
    }
    return out;
  }

  /**
   * Thread values count from now: start them and note where each series stands.
   * @param fromStart asked for at launch: they count from each thread's start (the session's watchThreads option), from 0
   */
  private async startThreadValues(ps: PerSession, fromStart = false): Promise<void> {
    const s = ps.session;
    await s.watchThreads();
    const v = ps.plan.threadValue!;
    if (fromStart && v !== 'cost') return;
    await s.sample();
    // the observed cost counts handler runs per cost class: from now on
    const names = v === 'cost' ? s.sampledNames(COST_SERIES) : (v === 'elu' ? ['elu_active', 'elu_idle'] : [v]).map((n) => `${THREAD_SERIES}${n}`);
    for (const name of names) {
      for (const t of [undefined, ...s.threadIds]) ps.base.set(`${t ?? ''}\0${name}`, s.sampled(name, t)?.last ?? 0);
    }
  }

  /** A call path's statistics count from now (the path may have been profiled before: another request, --call-paths). */
  private async startPath(ps: PerSession): Promise<void> {
    const s = ps.session, { k, functions } = ps.plan.callPath!;
    s.watchPath(k, functions);
    ps.watching = true;
    await s.sample();
    const name = pathSeries(k, functions, ps.plan.threadValue!);
    for (const t of [undefined, ...s.threadIds]) ps.base.set(`${t ?? ''}\0${name}`, s.sampled(name, t)?.last ?? 0);
  }

  /**
   * A CPU-time request: each thread's CPU time as the kernel counts it now,
   * before anything is placed (a sample older than now only loosens the
   * bound), so that the value can be checked against it (MetricInstance.overOneCpu).
   * @param fromStart asked for at launch: the counts start at each thread's start
   */
  private async noteRan(ps: PerSession, fromStart = false): Promise<void> {
    const s = ps.session;
    if (!s.watchingThreads) {
      await s.watchThreads();
      await s.sample();
    }
    ps.ranBase = new Map(s.threadIds.map((t) => [t, fromStart ? 0 : s.sampled(`${THREAD_SERIES}ran`, t)?.last ?? 0]));
  }

  /** The calibration costs are priced with: loaded, or measured once (progress on 'progress'). */
  /**
   * Timers of this session keep their virtual time too (intrusion compensation),
   * priced by this machine's calibration where one is saved (`paranode
   * calibrate`): a timer metric does not wait for a calibration to be measured.
   */
  async compensate(s: Session): Promise<void> {
    if (this.compensated.has(s)) return;
    this.compensated.add(s);
    const prices = await this.prices();
    if (prices) await s.priceHandlers(prices); else this.noPrices(s);
  }

  /** The prices this session's agent was given at launch, or null for none (its timers keep no virtual time). */
  pricedAs(s: Session, prices: HandlerPrices | null): void {
    this.compensated.add(s);
    if (!prices) this.noPrices(s);
  }

  private noPrices(s: Session): void {
    s.notes.push('timers have no virtual (compensated) time: no calibration of this machine is saved; `paranode calibrate` measures one');
  }

  /**
   * Requests made at launch (placed as the code loads) whose code the program
   * never loaded: a function, call site or loop that is not there. Their keys.
   */
  unmatched(): string[] {
    return this.all.filter((inst) => !inst.vector && inst.perSession.length > 0 && inst.perSession.every((ps) =>
      ps.probes.length > 0 && ps.probes.every((p) => p.placed === -1 && !ps.session.placedAnywhere(p.probe)))).map((inst) => inst.key);
  }

  /** The handlers' prices from the calibration, where one is loaded or saved (null: none). */
  async prices(): Promise<HandlerPrices | null> {
    const cal = this.cal ? await this.cal : loadCalibration();
    return cal ? handlerPrices(cal) : null;
  }

  private readonly compensated = new WeakSet<Session>();

  async costCalibration(): Promise<Calibration> {
    return (this.cal ??= calibration({ progress: (m) => this.emit('progress', m) }));
  }

  private cal?: Promise<Calibration>;

  private async place(s: Session, p: Placement, threads: string[] | undefined, what: string): Promise<Placed> {
    const text = `${p.resource}.${p.point} ${p.where} ${p.order}: ${p.snippet}`;
    const r = await s.place({ text, resource: p.resource, point: p.point, where: p.where, order: p.order, snippet: p.snippet }, { threads, optional: p.optional, quiet: true });
    const how = [['slot', r.bySlot], ['wrapping', r.byWrapping], ['breakpoint', r.byBreakpoint], ['not placed', r.notPlaced]]
      .filter(([, n]) => n).map(([k, n]) => `${n} by ${k}`.replace('by not placed', 'not placed')).join(', ');
    return { placement: p, probe: r.id, placed: r.placed, how: `${what}: ${how || 'no point yet'}` };
  }

  private flagsFor(s: Session): Map<string, Flag> {
    let f = this.flags.get(s);
    if (!f) this.flags.set(s, (f = new Map()));
    return f;
  }

  /** End a request: its snippets go when its last user does (flags when their last instance does). */
  async disable(inst: MetricInstance): Promise<void> {
    if (inst.group) inst = inst.group; // the instances of one glob request go together
    if (--inst.users > 0) return;
    this.instances.delete(inst.key);
    const h = inst.holder;
    if (!h) await this.remove(inst);
    else if (--h.users === 0) {
      for (const [k, x] of this.holders) if (x === h) this.holders.delete(k);
      await this.remove(h);
    }
    this.emit('disabled', inst);
  }

  private async remove(inst: MetricInstance): Promise<void> {
    for (const ps of inst.perSession) {
      if (ps.watching) ps.session.unwatchPath(ps.plan.callPath!.k, ps.plan.callPath!.functions);
      for (const p of ps.probes) await ps.session.removeProbe(p.probe);
      const flags = this.flagsFor(ps.session);
      for (const k of ps.flags) {
        const f = flags.get(k);
        if (!f || --f.users > 0) continue;
        flags.delete(k);
        for (const p of f.probes) await ps.session.removeProbe(p.probe);
      }
    }
  }

  /** Values of every instance, largest total first; then those of requests taken out (retire). */
  values(): MetricInstanceValue[] {
    return [...this.all.flatMap((i) => this.valuesOf(i)).sort((a, b) => b.total - a.total), ...this.retired];
  }

  private valuesOf(i: MetricInstance): MetricInstanceValue[] {
    return (isVector(i) ? this.members(i) : [i]).map((x) => x.value());
  }

  /** values of requests taken out before the end, as they stood then */
  private readonly retired: MetricInstanceValue[] = [];

  /**
   * Take a request out before the end, keeping what it measured: its sessions
   * are sampled once it is out, and its values stay in values() as they stood then, with `why`.
   */
  async retire(inst: MetricInstance, why: string): Promise<void> {
    inst = inst.group ?? inst;
    if (this.instances.get(inst.key) !== inst) return;
    // out whoever else asked for it (the same request twice, the page): it is taken out, not released
    inst.users = 1;
    await this.disable(inst);
    // then read: its snippets go out in each thread at a quiet point, and what they counted until
    // then is in the runtime's cells still (a module's top level may have run meanwhile: CI, Node 24)
    for (const ps of (inst.holder ?? inst).perSession) await ps.session.sample().catch(() => undefined);
    this.retired.push(...this.valuesOf(inst).map((v) => ({ ...v, stopped: why })));
  }

  /** The predicted cost of a request in place, over the code its sessions have loaded now (its flags counted as its own). */
  async priceOf(inst: MetricInstance, opts: Omit<PredictOptions, 'flagsPlaced'> = {}): Promise<Prediction> {
    const out = noPrediction();
    const cal = await this.costCalibration();
    // (a /SyncObject glob's view has no placements of its own: its holder's are its)
    const placed = inst.group ?? inst;
    for (const ps of (placed.holder ?? placed).perSession) addPrediction(out, await predictPlan(ps.plan, ps.session, cal, opts));
    return out;
  }
}

/** a metric of CPU time, whose value per thread cannot pass what the thread used */
const cpuTime = (m: MetricDecl): boolean => m.units === 'CPU s/s';

/** A metric of queues (msg_wait) has cells per channel only: without a /SyncObject part, its focus is its kind's (every channel). */
function queueFocus(lib: MdlLibrary, m: MetricDecl, focus: string): string {
  if (!usesQueue(m) || objectPart(splitFocus(focus))) return focus;
  const kind = m.constraints.map((c) => lib.constraints.get(c.name)?.hierarchy).find((h) => h?.startsWith('/SyncObject/'));
  return kind ? [...splitFocus(focus), kind].join(',') : focus;
}

function noPrediction(): Prediction {
  return { cost: 0, points: 0, pinned: 0, pinning: [] };
}

/** Adds p into the sum `into`, keeping the sum's pinning dearest first. */
function addPrediction(into: Prediction, p: Prediction): void {
  into.cost += p.cost;
  into.points += p.points;
  into.pinned += p.pinned;
  into.pinning.push(...p.pinning);
  into.pinning.sort((a, b) => b.cost - a.cost);
}
