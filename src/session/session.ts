// A paranode session with one target process: attach or launch, list code
// resources, place and remove probes in every thread, sample into time
// histograms per thread and per process, detach.
import { ChildProcess } from 'child_process';
import { EventEmitter } from 'events';
import * as path from 'path';
import type { FunctionInfo } from '../analysis/functions';
import type { AgentConfig } from '../agent/config';
import type { ProbeSpec } from '../agent/runtime';
import type { HandlerPrices } from '../agent/intrusion';
import { monotonicMs } from '../agent/monotonic-clock';
import { AgentServer } from '../inspector/agent-server';
import { Cdp, CdpError, IDLE_NUDGE_MS, TargetGoneError } from '../inspector/cdp';
import { attachTarget, launchTarget } from '../inspector/process-control';
import { processAlive } from '../inspector/pid-check';
import { WorkerTransport } from '../inspector/worker-transport';
import { parseProbe, ProbeRequest } from '../instrument/probe';
import { Interrupted, ParanodeError } from './errors';
import type { Prepared } from './mechanisms/mechanism';
import { MAGLEV_ON } from './mechanisms/liveedit';
import { toSpec } from './probe-spec';
import { MetricValue, pathSeries, SampledSeries, StackSamples } from './series';
import { CallPath, CallPathProfile, PathLength } from '../data/call-path-profile';
import { ExportFormat, exportProfile } from '../data/profile-export';
import { R } from './target-runtime';
import { DEFAULT_SAMPLING_BUDGET } from '../agent/cpu-sampler';
import { globsMatcher, inThread, roundTripUs, TargetThread, ThreadLimits } from './thread';

/** maxPauseMs, activeWaitMs, quietPoint, maxBreakpoints, planLimitMs: see ThreadLimits */
export interface SessionOptions extends ThreadLimits {
  /** histogram buckets */
  buckets?: number;
  /** for launch: timers compensate with these prices from the program's first line (see priceHandlers) */
  prices?: HandlerPrices;
  /** for launch: where the program's stdin/stdout/stderr go */
  stdio?: 'inherit' | 'pipe';
  /** for launch: the program's working directory (module names are relative to it) */
  cwd?: string;
  /** for launch: measure every thread's own values (CPU, wall, GC, event loop) from its first line, so a program that ends at once has them too */
  watchThreads?: boolean;
  /**
   * for launch: call paths sampled as series (watchPath) from the program's first line;
   * set before the program can end, or a program that ends at once would have none
   */
  watchPaths?: { k: PathLength; functions: string[] }[];
}

export interface Resource {
  path: string;
  module: string;
  function: string;
  line: number;
  column: number;
  /** how its points are reached: slots prepared at load or by LiveEdit, breakpoints, a wrapper, or not prepared yet */
  prepared: Prepared;
  /** 'main' or a worker's thread id */
  thread: string;
  points: FunctionInfo['points'];
}

/** Where a probe went: how many points each mechanism reaches (summed over threads). */
export interface ProbeResult {
  id: number;
  /** points placed by any mechanism */
  placed: number;
  /** prepared slots: about a nanosecond per call */
  bySlot: number;
  /** conditional breakpoints (code that could not be prepared): a debugger evaluation per hit */
  byBreakpoint: number;
  /** a wrapper around an exported function of a Node.js built-in module */
  byWrapping: number;
  /** matched points no mechanism can reach (listed in notes) */
  notPlaced: number;
}

/**
 * The probes of a call-path profile over functions (/Code globs): entry, exit,
 * await and resume of each, in that order. `paranode run --call-paths` gives them at launch.
 */
export function callPathProbes(resources: string[]): string[] {
  for (const resource of resources) {
    if (!resource.startsWith('/Code/')) throw new ParanodeError(`a call-path profile is over functions: a /Code resource, not "${resource}"`);
  }
  return resources.flatMap((r) => [`${r}.entry: enterPath();`, `${r}.exit: exitPath();`, `${r}.await: awaitPath();`, `${r}.resume: resumePath();`]);
}

export class Session extends EventEmitter {
  readonly notes: string[] = [];
  private readonly threads = new Map<number, TargetThread>();
  private readonly specs: ProbeSpec[] = [];
  /** probe id -> its resource glob */
  private readonly probeResources = new Map<number, string>();
  /** probe id -> the only threads it is placed in */
  private readonly probeThreads = new Map<number, Set<string>>();
  private readonly timerKinds = new Map<string, 'wall' | 'cpu'>();
  /** probe id -> its text; and per thread, the points each standing probe is placed at */
  private readonly probeTexts = new Map<number, string>();
  private readonly placedIn = new Map<number, Map<number, number>>();
  /** the samples as time histograms per thread and per process */
  private readonly series: SampledSeries;
  private readonly pathProfile = new CallPathProfile();
  /** call paths whose statistics are sampled as series (metric instances of a /CallPath focus): key -> users */
  private readonly watchedPaths = new Map<string, { k: number; functions: string[]; users: number }>();
  private readonly startMs = Date.now();
  private nextProbe = 1;
  private samplerTimer: NodeJS.Timeout | null = null;
  /** samples at least once a second whatever the interval: the runtime's 32-bit counters must be folded before they wrap */
  private readonly foldTimer: NodeJS.Timeout;
  private lastSampleMs = 0;
  private watching = false;
  private watchingStacks = false;
  /** the share of the time a thread could run that its stack samples may cost (see watchThreads) */
  private samplingBudget = DEFAULT_SAMPLING_BUDGET;
  /** ns of a thread's own time one stack sample takes, counted against the budget (0: unpriced) */
  private samplePriceNs = 0;
  /** when the stack samples end (ms since the epoch), where known (see watchThreads) */
  private samplesEndAt?: number;
  /** stack samples start at the longest interval (see watchThreads) */
  private samplesLongFirst = false;
  private intervalMs = 200;
  private detached = false;
  /** detach has begun: workers announced from now on are let go, not set up */
  private detaching = false;
  exited = false;
  /** the target's exit code, once it has exited (null if it did not say: a signal or a crash) */
  exitCode: number | null = null;
  /** the signal that ended a launched target */
  exitSignal: NodeJS.Signals | null = null;
  /** the agent's connection closed while the process lives on */
  private agentLost = false;
  private readonly exitPromise: Promise<void>;
  private resolveExit!: () => void;
  private readonly main: TargetThread;
  /** workers being given the agent: waited for before probes are placed */
  private readonly workerSetups = new Set<Promise<void>>();

  private constructor(readonly pid: number, readonly cwd: string, private readonly cdp: Cdp, private readonly server: AgentServer,
    readonly child: ChildProcess | null, private readonly opts: SessionOptions, private readonly openedPort: boolean,
    private readonly relayThreadId: number, private readonly agentStartedAt?: number) {
    super();
    this.exitPromise = new Promise((r) => (this.resolveExit = r));
    this.series = new SampledSeries(pid, opts);
    this.main = new TargetThread(0, cdp, cwd, opts, this.notes);
    this.threads.set(0, this.main);
    cdp.on('NodeWorker.attachedToWorker', (p: any) => {
      // bounded: a thread that never answers must not hold up the session
      let timer: NodeJS.Timeout | undefined;
      const setup = Promise.race([
        this.onWorker(p),
        new Promise<void>((r) => { timer = setTimeout(() => { this.notes.push(`a worker thread did not answer within 10 s; it is not instrumented`); r(); }, 10000); }),
      ]).finally(() => { clearTimeout(timer); this.workerSetups.delete(setup); });
      this.workerSetups.add(setup);
    });
    cdp.on('Paranode.exit', (p: { code: number }) => { this.exitCode = p.code; });
    cdp.on('close', () => this.onGone());
    this.foldTimer = setInterval(() => { if (Date.now() - this.lastSampleMs >= 900) this.sample().catch(() => undefined); }, 1000);
    this.foldTimer.unref();
    child?.once('exit', (code, signal) => { this.exitCode = code; this.exitSignal = signal; });
    if (cdp.closed) setImmediate(() => this.onGone());
  }

  /**
   * Launch `command` (e.g. ['node', 'app.js']) under the tool; probes (texts or
   * parsed requests, given ids 1, 2, ... in order) apply from its first line, in every thread.
   */
  static async launch(command: string[], probes: (string | ProbeRequest)[] = [], opts: SessionOptions = {}): Promise<Session> {
    const server = await AgentServer.open();
    const kinds = new Map<string, 'wall' | 'cpu'>();
    let specs: ProbeSpec[];
    let reqs: ProbeRequest[];
    try {
      reqs = probes.map((p) => (typeof p === 'string' ? parseProbe(p) : p));
      specs = reqs.map((r, i) => toSpec(r, i + 1, kinds));
    } catch (e) {
      server.close();
      throw e;
    }
    try {
      const { child, agent } = await launchTarget(server, command, { prepareOnLoad: true, probes: specs, watch: opts.watchThreads, prices: opts.prices }, opts.stdio ?? 'inherit', opts.cwd);
      const s = new Session(agent.hello.pid, agent.hello.cwd, agent.cdp, server, child, opts, false, agent.hello.relayThreadId, agent.hello.startedAt);
      if (opts.watchThreads) s.watching = true;
      for (const p of opts.watchPaths ?? []) s.watchPath(p.k, p.functions);
      if (opts.prices) s.prices = opts.prices;
      for (const [k, v] of kinds) s.timerKinds.set(k, v);
      s.specs.push(...specs);
      reqs.forEach((r, i) => { s.probeResources.set(i + 1, r.resource); s.probeTexts.set(i + 1, r.text); });
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
      const { agent, openedPort, exposureMs } = await attachTarget(server, pid, { prepareOnLoad: true });
      const s = new Session(pid, agent.hello.cwd, agent.cdp, server, null, opts, openedPort, agent.hello.relayThreadId, agent.hello.startedAt);
      // anyone on this host could have connected to it meanwhile: say for how long
      if (exposureMs !== undefined) s.notes.push(`the inspector port 127.0.0.1:9229 of process ${pid} was open for ${Math.round(exposureMs)} ms while the agent started`);
      await s.init();
      return s;
    } catch (e) {
      server.close();
      throw e;
    }
  }

  private async init(): Promise<void> {
    try {
      await this.main.enable();
      // workers: existing ones are announced at once; new ones wait for us before their first line
      await this.cdp.send('NodeWorker.enable', { waitForDebuggerOnStart: true });
      await this.settled();
    } catch (e) {
      if (!(e instanceof TargetGoneError)) throw e;
    }
  }

  private agentConfig(): AgentConfig {
    // probes limited to some threads stay out of new ones
    const probes = this.specs.filter((p) => !this.probeThreads.has(p.id));
    return { socketPath: '', token: this.server.token, finalPath: this.server.finalDir, prepareOnLoad: true, probes, cwd: this.cwd };
  }

  /** A worker thread: give it the agent (unless the preload did), then let it run. */
  private async onWorker(p: { sessionId: string; waitingForDebugger: boolean; workerInfo: { title: string; url: string } }): Promise<void> {
    const wcdp = new Cdp(new WorkerTransport(this.cdp, p.sessionId), { nudgeAfterMs: IDLE_NUDGE_MS });
    if (this.detaching) {
      // nothing more is set up: let it go (closing detaches its session alone)
      if (p.waitingForDebugger) await wcdp.send('Runtime.runIfWaitingForDebugger').catch(() => undefined);
      wcdp.close();
      return;
    }
    // Node's own threads (the ES module loader's) and paranode's relay are not the program's.
    // NodeWorker's workerId is its own numbering; the title says "[worker <threadId>]".
    const fromTitle = /\[worker (\d+)\]/.exec(p.workerInfo.title);
    let id = fromTitle ? Number(fromTitle[1]) : NaN;
    if (Number.isNaN(id)) {
      try { id = await wcdp.evaluateNow<number>(`process.getBuiltinModule('worker_threads').threadId`); } catch { return; }
    }
    if (id === this.relayThreadId || p.workerInfo.url.startsWith('node:')) {
      if (p.waitingForDebugger) await wcdp.send('Runtime.runIfWaitingForDebugger').catch(() => undefined);
      wcdp.close();
      return;
    }
    const t = new TargetThread(id, wcdp, this.cwd, this.opts, this.notes);
    try {
      await t.enable(p.waitingForDebugger);
      if (p.waitingForDebugger) {
        await this.startAgentAtFirstScript(wcdp);
        await t.skipPauses();
        // its main script was compiled before the load hook existed: LiveEdit it
        // once its top-level code has returned (retried while it is active)
        for (const spec of this.specs) {
          if (this.probeThreads.get(spec.id)?.has(t.label) === false) continue;
          await t.addProbe(spec, this.probeResources.get(spec.id) ?? '/Code/**');
        }
      } else await this.startAgent(wcdp);
      this.threads.set(id, t);
      if (this.watching && this.watchingStacks) await t.findFrameMaps().catch(() => undefined);
      if (this.watching) await wcdp.evaluateNow(this.watchThreadCall()).catch(() => undefined);
      if (this.prices) await wcdp.evaluate(`${R}.priceHandlers(${JSON.stringify(this.prices)})`).catch(() => undefined);
      wcdp.on('close', () => {
        this.threads.delete(id);
        if (!this.exited && !this.detached) for (const f of this.server.readFinal(this.pid)) if (f.thread === id) this.recordFinal(id, f.sample);
        // (its last values, if it wrote them, are read by now: also where the process's end was seen first)
        if (!this.detached) this.series.threadEnded(id, this.finalized.has(id), monotonicMs());
      });
      this.emit('thread', id);
    } catch (e) {
      if (!(e instanceof TargetGoneError)) this.notes.push(`worker ${id}: not instrumented: ${(e as Error).message}`);
      if (p.waitingForDebugger) await wcdp.send('Runtime.runIfWaitingForDebugger').catch(() => undefined);
      await wcdp.send('Debugger.resume', {}).catch(() => undefined);
    }
  }

  /**
   * Start the agent in a worker. Loading it is the thread's first user module:
   * done before Node has set up the worker's user modules, Node's own check
   * (setupUserModules: no user code may have run) fails and the process dies
   * (ERR_INTERNAL_ASSERTION). A worker held at its first script is past that.
   * A running one may be anywhere, even inside that setup or half-way through
   * loading paranode's own preload (inspector requests run on interrupts):
   * unless a user module has begun loading (it is in the module cache, which
   * Node fills only after its check) and none of paranode's is half loaded, the
   * start waits for the thread's event loop: Node sets up user modules, runs the
   * preloads and the main script in one task, so the next task is after them.
   */
  private startAgent(wcdp: Cdp, atFirstScript = false): Promise<unknown> {
    const bootstrap = require.resolve('../agent/bootstrap');
    const own = path.dirname(path.dirname(bootstrap)) + path.sep;
    const M = `process.getBuiltinModule('module')`;
    const start = `() => ${R}?.active ? 0 : ${M}.createRequire(${JSON.stringify(bootstrap)})(${JSON.stringify(bootstrap)}).start(${JSON.stringify(this.agentConfig())})`;
    // Node lists a built-in module as loaded once its body has run: before that, asking for
    // 'module' would run Node's module.js against a half-made CommonJS loader (CI caught a
    // worker there: Module._cache not yet set). Nor while the thread is inside the load of any
    // built-in (Node's realm.js on its stack): module.js and what it requires would read that
    // one's half-made exports (CI, Node 24: esm/loader reading kImportInRequiredESM of undefined)
    const inBuiltinLoad = '((p, l) => { Error.prepareStackTrace = (_e, c) => c; Error.stackTraceLimit = Infinity; ' +
      'try { return new Error().stack.some((c) => c.getFileName() === "node:internal/bootstrap/realm"); } ' +
      'catch { return true; } finally { Error.prepareStackTrace = p; Error.stackTraceLimit = l; } })(Error.prepareStackTrace, Error.stackTraceLimit)';
    const now = atFirstScript ? 'true'
      : `!${inBuiltinLoad} && process.moduleLoadList.includes('NativeModule internal/modules/cjs/loader') && ((M) => Object.keys(M._cache ?? {}).length > 0 && ` +
        `!Object.values(M._cache).some((m) => !m.loaded && String(m.filename).startsWith(${JSON.stringify(own)})))(${M})`;
    return wcdp.evaluate(`(() => { const start = ${start}; ` +
      `if (${now}) return start(); ` +
      `return new Promise((resolve, reject) => setImmediate(() => { try { resolve(start()); } catch (e) { reject(e); } })); ` +
      // awaited only where the thread runs: a paused one settles no promise
      `})()`, !atFirstScript);
  }

  /**
   * A new worker waits for us before Node has set it up (no module loader yet).
   * Once let go, Node breaks at the start of its main script: start the agent
   * there and let it run.
   */
  private async startAgentAtFirstScript(wcdp: Cdp): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const started = new Promise<void>((resolve, reject) => {
      wcdp.once('Debugger.paused', async () => {
        try {
          await this.startAgent(wcdp, true);
          resolve();
        } catch (e) {
          reject(e);
        } finally {
          await wcdp.send('Debugger.resume', {}).catch(() => undefined);
        }
      });
      wcdp.once('close', () => reject(new TargetGoneError('worker exited')));
      timer = setTimeout(() => reject(new Error('it did not reach its main script within 10 s')), 10000);
      timer.unref();
    });
    // a worker that ends before it is let go rejects this later, when nobody awaits it any more
    started.catch(() => undefined);
    try {
      await wcdp.send('Runtime.runIfWaitingForDebugger');
      await started;
    } finally {
      clearTimeout(timer);
    }
  }

  private async settled(): Promise<void> {
    while (this.workerSetups.size) await Promise.all([...this.workerSetups]);
  }

  /** The threads currently known: 'main' and worker thread ids. */
  get threadIds(): string[] {
    return [...this.threads.values()].map((t) => t.label);
  }

  /** Code resources (functions) matching a glob such as /Code/lib/*.js/* (or any of several), in every thread. */
  async resources(glob: string | readonly string[] = '/Code/**'): Promise<Resource[]> {
    // several globs: each thread's scripts listed once for all (a round trip each into the target's thread)
    const globs = typeof glob === 'string' ? [glob] : glob;
    const matches = globsMatcher(globs);
    const out: Resource[] = [];
    for (const t of [...this.threads.values()]) {
      // a worker that has just ended has no resources any more
      const prepared = await this.inThread(t, () => t.runtimeScripts(globs));
      if (!prepared) continue;
      const add = (scriptModule: string, f: FunctionInfo, how: Resource['prepared']) => {
        const module = f.module ?? scriptModule;
        if (matches(`${module}/${f.name}`)) out.push({ path: `/Code/${module}/${f.name}`, module, function: f.name, line: f.line, column: f.column, prepared: how, thread: t.label, points: f.points });
      };
      for (const s of prepared) for (const f of s.functions) add(s.module, f, s.how);
      for (const { script, functions } of await this.inThread(t, () => t.unprepared(globs, true)) ?? []) {
        const how = functions.length ? await this.inThread(t, () => t.unpreparedHow(script)) ?? 'no' : 'no';
        for (const f of functions) add(script.module, f, how);
      }
    }
    return out;
  }

  /**
   * The program's functions (not Node's own) in every thread, named, without their
   * points: on a prepared program a list of names, where resources('/Code/**') fetches
   * every function's points (megabytes on a large program, serialized in the target).
   */
  async functionNames(): Promise<{ module: string; function: string; thread: string }[]> {
    const out: { module: string; function: string; thread: string }[] = [];
    for (const t of [...this.threads.values()]) {
      for (const f of await this.inThread(t, () => t.functionNames()) ?? []) if (!f.module.startsWith('node:')) out.push({ module: f.module, function: f.name, thread: t.label });
    }
    return out;
  }

  /**
   * The modules of the program's code (not Node's own) in each thread, by thread label:
   * what resources('/Code/**') would name, without analysing every script loaded
   * before the agent (see TargetThread.moduleNames).
   */
  async modules(): Promise<{ module: string; thread: string }[]> {
    const out: { module: string; thread: string }[] = [];
    for (const t of [...this.threads.values()]) {
      for (const module of await this.inThread(t, () => t.moduleNames()) ?? []) if (!module.startsWith('node:')) out.push({ module, thread: t.label });
    }
    return out;
  }

  /** /SyncObject resources (files, message channels) seen so far, with the threads that saw them. */
  syncObjects(): { path: string; threads: string[] }[] {
    const by = new Map<string, string[]>();
    for (const t of this.threads.values()) for (const o of t.syncObjects) by.set(o, [...(by.get(o) ?? []), t.label]);
    return [...by].sort(([a], [b]) => a.localeCompare(b)).map(([p, threads]) => ({ path: p, threads }));
  }

  /**
   * Place a probe ('<resource>.<point>: <snippet>') in every thread. Scripts
   * loaded before the agent that contain a matching function are prepared by
   * LiveEdit first; modules loaded later, and threads started later, match as they come.
   */
  async probe(text: string): Promise<ProbeResult> {
    return this.place(parseProbe(text));
  }

  /**
   * Place a parsed probe. `threads` limits it to some threads ('main' or worker
   * ids; later threads are left out); `optional` keeps a probe that matches no
   * function yet standing (it applies to matching code loaded later) instead of
   * failing; `quiet` leaves the placement summary out of the notes (the Metric
   * Manager lists its placements itself).
   */
  async place(req: ProbeRequest, opts: { threads?: string[]; optional?: boolean; quiet?: boolean } = {}): Promise<ProbeResult> {
    if (this.opts.signal?.aborted) throw new Interrupted(`${req.text} not placed: the session's time ended`);
    const text = req.text;
    const spec = toSpec(req, this.nextProbe++, this.timerKinds);
    await this.settled();
    this.specs.push(spec);
    this.probeResources.set(spec.id, req.resource);
    this.probeTexts.set(spec.id, req.text);
    if (opts.threads) this.probeThreads.set(spec.id, new Set(opts.threads));
    const r: ProbeResult = { id: spec.id, placed: 0, bySlot: 0, byBreakpoint: 0, byWrapping: 0, notPlaced: 0 };
    let matched = false;
    for (const t of [...this.threads.values()]) {
      if (opts.threads && !opts.threads.includes(t.label)) continue;
      const n = await this.inThread(t, () => t.addProbe(spec, req.resource));
      if (!n) continue;
      matched = true;
      r.bySlot += n.slot;
      r.byBreakpoint += n.breakpoint;
      r.byWrapping += n.wrap;
      r.notPlaced += n.missed;
    }
    r.placed = r.bySlot + r.byBreakpoint + r.byWrapping;
    if (!matched) {
      if (opts.optional) return r;
      await this.removeProbe(spec.id);
      throw new ParanodeError(`unknown resource: no function matches ${req.resource} in process ${this.pid}`);
    }
    if (opts.quiet) return r;
    if (r.placed === 0 && r.notPlaced === 0 && !opts.optional) this.notes.push(`probe "${text}" matched functions but none of their points of kind ${req.point}`);
    if (r.byBreakpoint || r.byWrapping || r.notPlaced) {
      this.notes.push(`probe "${text}": ${r.bySlot} point(s) by slot, ${r.byWrapping} by wrapping, ${r.byBreakpoint} by breakpoint, ${r.notPlaced} not placed`);
    }
    return r;
  }

  async removeProbe(id: number): Promise<void> {
    // a worker being set up copies the specs as they are: it is in the threads below once settled
    await this.settled();
    const i = this.specs.findIndex((s) => s.id === id);
    if (i >= 0) this.specs.splice(i, 1);
    this.probeResources.delete(id);
    this.probeTexts.delete(id);
    this.placedIn.delete(id);
    this.probeThreads.delete(id);
    for (const t of [...this.threads.values()]) await this.inThread(t, () => t.removeProbe(id));
  }

  /**
   * Work in one thread. A worker that ends meanwhile has nothing left to
   * change: its work is null, whatever the error (one that no longer answers
   * has ended); the main thread's errors are the session's.
   */
  private async inThread<T>(t: TargetThread, work: () => Promise<T>): Promise<T | null> {
    try {
      return await work();
    } catch (e) {
      if (t === this.main) throw e;
      if (e instanceof TargetGoneError) return null;
      const answers = await t.cdp.evaluateNow('1').then(() => true, (x) => !(x instanceof TargetGoneError));
      if (answers) throw e;
      return null;
    }
  }

  /**
   * Profile the call paths through the functions of `resources` (/Code globs):
   * every thread keeps calls, inclusive and exclusive wall and CPU time, and
   * waiting time per distinct path of those functions, from now on, in
   * threads and modules that start later too. Read with callPaths(); `ids`
   * are its probes (removeProbe each to stop it).
   */
  async profileCallPaths(resources: string | string[]): Promise<ProbeResult & { ids: number[] }> {
    const list = typeof resources === 'string' ? [resources] : resources;
    const texts = callPathProbes(list);
    const r: ProbeResult & { ids: number[] } = { id: -1, ids: [], placed: 0, bySlot: 0, byBreakpoint: 0, byWrapping: 0, notPlaced: 0 };
    for (const [i, text] of texts.entries()) {
      // entry first (an unknown resource fails here); a set without async functions has no await points
      const p = await this.place(parseProbe(text), { quiet: true, optional: i % 4 !== 0 });
      if (r.id < 0) r.id = p.id;
      r.ids.push(p.id);
      for (const k of ['placed', 'bySlot', 'byBreakpoint', 'byWrapping', 'notPlaced'] as const) r[k] += p[k];
    }
    if (r.byBreakpoint || r.notPlaced) {
      this.notes.push(`call-path profile of ${list.join(', ')}: ${r.byBreakpoint} point(s) by breakpoint, ${r.notPlaced} not placed: ` +
        'a function reached by breakpoints has no await or thrown exit there, so paths through it are attributed approximately');
    }
    return r;
  }

  /**
   * The call-path profile sampled so far (profileCallPaths), cut to the last
   * `k` functions of each path (1: per function, Infinity: whole paths), per
   * thread ('main' or a worker id; all when not given); longest inclusive wall time first.
   */
  callPaths(k: PathLength = Infinity, thread?: string): CallPath[] {
    return this.pathProfile.cut(k, thread);
  }

  /**
   * The call-path profile (whole paths, every thread) as a file of `format`:
   * 'cpuprofile' (Chrome DevTools, VS Code), 'speedscope' or 'folded' (flame graphs), text;
   * 'pprof' (go tool pprof, Pyroscope, Grafana), a gzipped protobuf.
   */
  exportCallPaths(format: 'pprof'): Buffer;
  exportCallPaths(format: Exclude<ExportFormat, 'pprof'>): string;
  exportCallPaths(format: ExportFormat): string | Buffer;
  exportCallPaths(format: ExportFormat): string | Buffer {
    return exportProfile(this.pathProfile.cut(Infinity), format, (fn) => this.pathProfile.place(fn), undefined, { startMs: this.startMs, durationSeconds: this.elapsedSeconds });
  }

  /** Take one sample from every thread into the histograms. */
  async sample(): Promise<void> {
    this.lastSampleMs = Date.now();
    // a worker whose session is still being set up has run (launched: counted from its first
    // line) and may end before the next sample: the sample waits for it
    await this.settled();
    const got = await Promise.all([...this.threads.values()].map(async (t) => {
      try {
        return [t.id, await t.sample((paths) => this.emit('resources', { thread: t.label, resources: paths }))] as const;
      } catch (e) { if (e instanceof TargetGoneError) return null; throw e; }
    }));
    // a thread's final sample (written as it exited) holds its last totals: a sample taken
    // before that and answered late must not replace it
    for (const g of got) if (g && !this.finalized.has(g[0])) this.record(g[0], g[1]);
    this.emit('sample');
  }

  private record(thread: number, sample: any): void {
    const label = thread === 0 ? 'main' : String(thread);
    if (sample.pathFunctions) this.pathProfile.recordFunctions(sample.pathFunctions);
    if (sample.paths) this.pathProfile.record(label, sample.paths);
    this.series.record(thread, this.watchedPaths.size ? this.withPaths(label, sample) : sample);
    for (const [id, n] of (sample.placed ?? []) as [number, number][]) {
      const by = this.placedIn.get(id) ?? new Map<number, number>();
      by.set(thread, n);
      this.placedIn.set(id, by);
    }
  }

  /**
   * Sample a call path's statistics as series (pathSeries(k, functions, stat)),
   * each thread's current totals at every sample; counted per user.
   */
  watchPath(k: PathLength, functions: string[]): void {
    const key = pathSeries(k, functions, '');
    const w = this.watchedPaths.get(key);
    if (w) w.users++;
    else this.watchedPaths.set(key, { k, functions, users: 1 });
  }

  unwatchPath(k: PathLength, functions: string[]): void {
    const key = pathSeries(k, functions, '');
    const w = this.watchedPaths.get(key);
    if (w && --w.users <= 0) this.watchedPaths.delete(key);
  }

  /** The sample with the watched paths' totals in this thread added (calls as a counter, times as timers). */
  private withPaths(label: string, sample: any): any {
    const counters: [string, number][] = [...(sample.counters ?? [])], timers: [string, number, boolean][] = [...(sample.timers ?? [])];
    const cuts = new Map<number, Map<string, CallPath>>();
    for (const { k, functions } of this.watchedPaths.values()) {
      let cut = cuts.get(k);
      if (!cut) cuts.set(k, (cut = new Map(this.pathProfile.cut(k, label).map((p) => [p.functions.join('>'), p]))));
      const p = cut.get(functions.join('>'));
      if (!p) continue;
      counters.push([pathSeries(k, functions, 'calls'), p.calls]);
      for (const [stat, v] of [['wall', p.wall.inclusive], ['wall_exclusive', p.wall.exclusive], ['cpu', p.cpu.inclusive], ['cpu_exclusive', p.cpu.exclusive], ['wait', p.wait]] as const) {
        timers.push([pathSeries(k, functions, stat), v, false]);
      }
    }
    return { ...sample, counters, timers };
  }

  /** threads whose final sample is recorded */
  private readonly finalized = new Set<number>();

  /** A thread's last values, written as it exited: its notes not yet sampled come with them. */
  private recordFinal(thread: number, sample: any): void {
    this.finalized.add(thread);
    this.record(thread, sample);
    // a worker's last values: written by its exit handler, it is ending
    if (thread !== 0) this.series.threadEnded(thread, true, monotonicMs());
    for (const n of (sample.notes ?? []) as string[]) this.notes.push(inThread(n, thread));
  }

  /**
   * Standing probes (given at launch, or placed with `optional`) that no thread
   * has placed anywhere yet: their texts.
   */
  unmatchedProbes(): string[] {
    return this.specs.filter((p) => !this.placedAnywhere(p.id)).map((p) => this.probeTexts.get(p.id) ?? `probe ${p.id}`);
  }

  /** Whether a standing probe is placed at a point in any thread (as of the last sample). */
  placedAnywhere(id: number): boolean {
    return [...(this.placedIn.get(id)?.values() ?? [])].some((n) => n > 0);
  }

  /** the prices of handler runs every thread's timers compensate with (see priceHandlers) */
  private prices: HandlerPrices | null = null;

  /**
   * Intrusion compensation: every thread's timers, now and in threads started
   * later, also keep their virtual time (less the handlers' work inside them,
   * priced as given, [low, high]), sampled as the series VIRTUAL_SERIES names.
   */
  async priceHandlers(prices: HandlerPrices): Promise<void> {
    this.prices = prices;
    await this.settled();
    for (const t of this.threads.values()) await t.cdp.evaluate(`${R}.priceHandlers(${JSON.stringify(prices)})`).catch(() => undefined);
  }

  /**
   * Hold (or let go) the sends of the queues named `variable` in every thread
   * (Instances.queue): while a queue's placement goes into one thread after
   * another, a message sent where it is placed could be dispatched where it is
   * not yet, and would wait for ever. Held, sends count nothing; a dispatch of
   * one sent then counts from the queue's beginning (SampledSeries).
   */
  async holdQueues(variable: string, hold: boolean): Promise<void> {
    await this.settled();
    for (const t of this.threads.values()) await t.cdp.evaluateNow(`${R}.holdQueues(${JSON.stringify(variable)},${hold})`).catch(() => undefined);
  }

  /** whether every thread's own values are measured (see watchThreads) */
  get watchingThreads(): boolean { return this.watching; }

  /**
   * Measure every thread's own values (CPU, wall, GC, event loop), now and in threads started later.
   * `stacks`: with V8's stack samples, which may cost each thread up to `samplingBudget` of its
   * time (a share; Infinity: every 10 ms whatever they cost): where reading them costs more, V8
   * samples less often (at the least every 40 ms), and it is noted. `samplePriceNs`: what a
   * sample takes of the sampled thread's own time (the calibration's), counted against the budget.
   * `endsAt` (ms since the epoch): when the samples will end, where known (a duration): a longer
   * interval, which restarts V8's profiler, is taken only where it saves more than that costs by then.
   * `longFirst`: V8 samples at the longest interval first, and more often once where the samples'
   * cost allows it with the profiler's restart (CpuSampler.shorter).
   */
  async watchThreads(opts: { stacks?: boolean; samplingBudget?: number; samplePriceNs?: number; endsAt?: number; longFirst?: boolean } = {}): Promise<void> {
    this.watching = true;
    if (opts.longFirst) this.samplesLongFirst = true;
    if (opts.endsAt !== undefined) this.samplesEndAt = opts.endsAt;
    if (opts.stacks) this.watchingStacks = true;
    if (opts.samplingBudget !== undefined) this.samplingBudget = opts.samplingBudget;
    if (opts.samplePriceNs !== undefined && Number.isFinite(opts.samplePriceNs) && opts.samplePriceNs >= 0) this.samplePriceNs = opts.samplePriceNs;
    await this.settled();
    for (const t of this.threads.values()) {
      // source-mapped scripts known before the first stack sample: none of it is named by the compiled file
      if (this.watchingStacks) await t.findFrameMaps().catch(() => undefined);
      await t.cdp.evaluateNow(this.watchThreadCall()).catch(() => undefined);
    }
  }

  /** A thread's runtime asked to watch it as watchThreads says (the samples' end as the ms left until it, -1: not known). */
  private watchThreadCall(): string {
    const left = this.samplesEndAt === undefined ? -1 : Math.max(0, this.samplesEndAt - Date.now());
    return `${R}.watchThread(${this.watchingStacks}, false, ${this.samplingBudget}, ${this.samplePriceNs}, ${left}, ${this.samplesLongFirst})`;
  }

  /**
   * Stack samples of a thread ('main' or a worker id), taken at each sample
   * once watchThreads({ stacks: true }) asked for them: how many, and in how
   * many each function ("<module>/<name>", a method by its own name) and module ("<module>/") was on the stack;
   * `leaves`: in how many each function was the innermost of the program's (its own code, or Node's it called, running);
   * `own`: where V8's profiler took them, in how many its own code ran;
   * `above`: per function, the functions sampled running in calls it made (directly or not).
   */
  stackSamples(thread: string): StackSamples {
    return this.series.stackSamples(thread);
  }

  /**
   * A series as sampled so far: per thread ('main' or a worker id), or for the
   * whole process (undefined). Internal names included (metric instances use them).
   */
  sampled(name: string, thread?: string): { last: number; bucketSeconds: number; buckets: number[] } | undefined {
    return this.series.sampled(name, thread);
  }

  /** Names of the series sampled so far that start with `prefix` (any thread). */
  sampledNames(prefix: string): string[] {
    return this.series.sampledNames(prefix);
  }

  /** Of a queue series (msg_wait's cells): why its value is not known (a worker ended by terminate()), if so. */
  queueUnknown(name: string): string | undefined {
    return this.series.queueEnd(name) ?? undefined;
  }

  get processFocus(): string { return this.series.processFocus; }

  /** Sample every `ms` milliseconds until detach or exit (changeable at any time). */
  startSampling(ms = this.intervalMs): void {
    this.intervalMs = ms;
    if (this.samplerTimer) clearInterval(this.samplerTimer);
    // a target that exited (or was detached) before sampling began: a timer now would never be cleared
    if (this.exited || this.detached) return;
    this.samplerTimer = setInterval(() => { this.sample().catch(() => undefined); }, ms);
  }

  /** The interval the session samples at by its own timer (ms); null where it does not (the caller samples). */
  get samplingIntervalMs(): number | null {
    return this.samplerTimer ? this.intervalMs : null;
  }

  stopSampling(): void {
    if (this.samplerTimer) clearInterval(this.samplerTimer);
    this.samplerTimer = null;
  }

  /**
   * Every metric for the whole process first, then per thread (a thread's
   * series only where a worker thread has data of its own).
   */
  metrics(): MetricValue[] {
    return this.series.metrics();
  }

  /** The value of a metric for the process, or for one thread ('main' or a worker id). */
  value(name: string, thread?: string): number | undefined {
    return this.series.value(name, thread);
  }

  /** Resolves when the target has exited (its last sample is recorded by then). */
  waitForExit(): Promise<void> {
    return this.exitPromise;
  }

  private onGone(): void {
    this.stopSampling();
    clearInterval(this.foldTimer);
    if (!this.detached) {
      this.exited = true;
      // each thread's runtime wrote its last (cumulative) values while exiting: nothing is lost
      for (const f of this.server.readFinal(this.pid)) this.recordFinal(f.thread, f.sample);
      // a worker that wrote no last values ended with the process, its exit handlers not run
      for (const id of this.threads.keys()) if (id !== 0 && !this.finalized.has(id)) this.series.threadEnded(id, false, monotonicMs());
      const finish = () => { this.server.close(); this.resolveExit(); this.emit('exit', this.exitCode); };
      if (this.child && this.child.exitCode === null && this.child.signalCode === null) {
        this.child.once('exit', (c, sig) => { this.exitCode = c; this.exitSignal = sig; finish(); });
      } else if (!this.child && this.exitCode === null) {
        // attached, no exit seen: ended (a zombie counts), or only its agent's connection is gone.
        // A killed process's sockets close a moment before it is a zombie: look again briefly
        const until = Date.now() + 200;
        const look = () => {
          if (!processAlive(this.pid)) finish();
          else if (Date.now() > until) { this.agentLost = true; finish(); }
          else setTimeout(look, 10);
        };
        look();
      } else finish();
    }
  }

  /**
   * The detach, once done: its start (ms since the epoch), its length (s) and what it stopped the main thread
   * for (s: its last sample, the runtime's switching off, the LiveEdits undone, the debugger's commands and the
   * last request by their round trips, a high bound)
   */
  detachCost?: { startedAt: number; seconds: number; main: number };

  /** Put the target back as it was: slots off, LiveEdited scripts restored, agent gone, no port open. */
  async detach(): Promise<void> {
    if (this.detached || this.exited) return;
    this.stopSampling();
    clearInterval(this.foldTimer);
    const t0 = performance.now(), startedAt = Date.now();
    let mainUs = 0;
    try {
      // (the round trips into the main thread are counted as its time: a high bound, as restore()'s)
      mainUs += await roundTripUs(() => this.sample());
      // from now on a new worker does not wait for us, and one announced is let go at once;
      // those being set up are let go by their setup
      await this.cdp.send('NodeWorker.enable', { waitForDebuggerOnStart: false }).catch(() => undefined);
      this.detaching = true;
      await this.settled();
      for (const t of [...this.threads.values()].reverse()) {
        try {
          const us = await t.restore();
          if (t === this.main) mainUs += us;
        } catch (e) { if (!(e instanceof TargetGoneError)) throw e; }
      }
      // every LiveEdited script has its text back: V8's flags are the process's, so Maglev once for all threads
      if ([...this.threads.values()].some((t) => t.switchedMaglev)) await this.cdp.evaluate(MAGLEV_ON).catch(() => undefined);
      // each worker's session alone (closing its Cdp): NodeWorker.disable while a worker
      // starts or waits for the debugger crashes the process (SIGSEGV, Node 22-26)
      // each thread's last request: it forgets the ids of those that ran (its global object as it was)
      for (const t of this.threads.values()) if (t !== this.main) { await t.cdp.forgetRequests().catch(() => undefined); t.cdp.close(); }
      mainUs += await roundTripUs(() => this.cdp.forgetRequests().catch(() => undefined));
      await this.cdp.agent('goodbye');
    } catch (e) {
      if (!(e instanceof TargetGoneError)) throw e;
    }
    this.detached = true;
    this.detachCost = { startedAt, seconds: (performance.now() - t0) / 1000, main: mainUs / 1e6 };
    this.cdp.close();
    this.server.close();
    this.resolveExit();
  }

  /**
   * How the target ended, once it has: "exited with code 0", "killed by SIGSEGV",
   * or, for an attached process that ran no exit handler, that it was killed or crashed.
   */
  get fate(): string | null {
    if (!this.exited) return null;
    if (this.agentLost) return 'still running, but its agent stopped answering (the connection closed)';
    if (this.exitSignal) return `killed by ${this.exitSignal}`;
    if (this.exitCode !== null) return `exited with code ${this.exitCode}`;
    return 'ended without running its exit handlers (killed by a signal, or crashed)';
  }

  get usedInspectorPort(): boolean { return this.openedPort; }
  get elapsedSeconds(): number { return (Date.now() - this.startMs) / 1000; }
  /** seconds since the agent started this session, from which its runtime counts the tool's work (the session's own start where not told) */
  get countedSeconds(): number {
    // (the target's clock, which a program may have faked: taken where it is plausible, before the session and within a minute)
    const a = this.agentStartedAt;
    return (Date.now() - (a !== undefined && a <= this.startMs && a > this.startMs - 60000 ? a : this.startMs)) / 1000;
  }
}

export { CdpError, ParanodeError };
