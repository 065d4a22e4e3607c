#!/usr/bin/env node
// paranode command line: diagnose | run | attach | resources | metrics | calibrate | demo
import './tool-code-cache';
// fd 1 and 2 as given, before anything of the tool writes to them
import '../inspector/target-stdio';
import { Command, InvalidArgumentError } from 'commander';
import * as fs from 'fs';
import * as path from 'path';
import { faultPoint } from '../inspector/fault-injection';
import { parseProbes } from '../instrument/probe';
import { loopName } from '../analysis/point-select';
import { callPathProbes, Session } from '../session/session';
import { Interrupted } from '../session/errors';
import { durationEnd } from './duration';
import { parsePathLength, type PathLength } from '../data/call-path-profile';
import { formatOf } from '../data/profile-export';
import { calibration, type Calibration } from '../cost/calibration';
import { MdlLibrary } from '../mdl/library';
import { MetricManager } from '../metrics/manager';
import { addDiagnoseOptions, DiagnoseCliOpts, parseFraction, runDiagnose, targetOf } from './diagnose';
import { CostBudget, ObservedCostWatch, pct, pricedRequests, probePlan, probesFit } from './cost-limit';
import { LaunchItem, LaunchPricing } from './launch-pricing';
import { predictPlan } from '../cost/predict';
import { renderCallPaths, renderInstances, renderTable } from './live-view';
import { DEFAULT_NICE, niceArg, yieldCpu } from './priority';
import { EarlySignals, signalStatus } from './signals';
import { addUiOptions, openUi, type UiCliOpts } from './ui-option';
import { addExportOptions, CliExports, type ExportCliOpts } from './export-options';
import { sessionSource } from '../exports/readings';
import { pruneStartupCache } from '../agent/cache-prune';
import type { UiServer } from '../ui/server';

interface CommonOpts extends UiCliOpts, ExportCliOpts {
  probe: string[]; enable: string[]; mdl: string[]; showSnippets?: boolean;
  duration?: number; interval: number; json?: string; maxPause: number; maxBreakpoints: number; quiet?: boolean; nice: number;
  callPaths: string[]; pathLength: PathLength; callPathsOut: string[]; maxOverhead?: number;
}

/** `<metric>[@<focus>]` */
function parseEnable(v: string): { metric: string; focus: string } {
  const at = v.indexOf('@');
  return at < 0 ? { metric: v.trim(), focus: '' } : { metric: v.slice(0, at).trim(), focus: v.slice(at + 1).trim() };
}

function library(files: string[]): MdlLibrary {
  const lib = MdlLibrary.standard();
  for (const f of files) lib.loadFile(f);
  return lib;
}

const collect = (v: string, prev: string[]) => [...prev, v];
const profileFile = (v: string, prev: string[]): string[] => {
  try { formatOf(v); } catch (e) { throw new InvalidArgumentError((e as Error).message); }
  return [...prev, v];
};
/** --call-paths-out names a file for a profile that --call-paths asks for */
function needsCallPaths(opts: CommonOpts): void {
  if (opts.callPathsOut.length && !opts.callPaths.length) throw new Error('--call-paths-out writes a call-path profile: say which functions with --call-paths');
}
const pathLength = (v: string): PathLength => {
  try { return parsePathLength(v); } catch (e) { throw new InvalidArgumentError((e as Error).message); }
};
const progress = (m: string) => { process.stderr.write(`paranode: ${m}\n`); };
/** notes already printed as they came (the final summary prints only the rest) */
let shownNotes = 0;
const positive = (what: string) => (v: string) => {
  const n = Number(v);
  if (!(n > 0)) throw new InvalidArgumentError(`${what} must be a positive number`);
  return n;
};
const count = (what: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${what} must be a whole number, 0 or more`);
  return n;
};

function addCommon(cmd: Command): Command {
  return addExportOptions(addUiOptions(cmd))
    .option('-e, --enable <metric[@focus]>', "enable a metric, e.g. 'cpu', 'procedure_calls@/Code/lib/*.js/*' or 'cpu@/Code/app.js/parse,/Thread/<pid>/main' (repeatable; see `paranode metrics`)", collect, [])
    .option('--mdl <file>', 'load metric definitions (MDL) beside the standard library (repeatable)', collect, [])
    .option('--show-snippets', 'print the snippets each enabled metric placed')
    .option('-p, --probe <probe>', "'<function>.<point>: <snippet>', e.g. '/Code/app.js/f.entry: c++' (repeatable)", collect, [])
    .option('-d, --duration <seconds>', 'detach after this many seconds, counted from the start of the command (attaching and placing included)', positive('--duration'))
    .option('-i, --interval <ms>', 'sampling interval', positive('--interval'), 200)
    .option('--json <file>', 'write metrics and notes to this file at the end')
    .option('--max-pause <ms>', 'refuse LiveEdits predicted to pause the target longer (breakpoints are used instead)', positive('--max-pause'), 2000)
    .option('--max-breakpoints <n>', 'points per thread that may be reached by breakpoints where code cannot be prepared (0: none)', count('--max-breakpoints'), 200)
    .option('--max-overhead <limit>', "a limit on the instrumentation's share of the time a thread could run (its waits for a CPU taken off), e.g. 5%: attach prices each request before placing it and places none over it, run prices its requests as the program's code loads and takes out one over it, and the session says when the observed cost passes it", parseFraction('--max-overhead'))
    .option('--nice <n>', "once the target runs, run paranode at this niceness, so that it yields the CPU to the target (0-19; 0: unchanged)", niceArg, DEFAULT_NICE)
    .option('--call-paths <functions>', "profile the call paths through these functions, e.g. '/Code/lib/**' (repeatable)", collect, [])
    .option('-k, --path-length <k>', 'show call paths by their last k functions (1: per function, inf: whole paths)', pathLength, 2)
    .option('--call-paths-out <file>', 'write the call-path profile at the end: .cpuprofile (Chrome DevTools, VS Code), .speedscope.json, .folded or .pb.gz (pprof) (repeatable)', profileFile, [])
    .option('-q, --quiet', 'no live view');
}

async function session(s: Session, opts: CommonOpts, mm?: MetricManager, signals = new EarlySignals(), ui?: UiServer, exports?: CliExports, end?: AbortSignal,
  pricing?: LaunchPricing): Promise<void> {
  const live = !opts.quiet && process.stderr.isTTY;
  exports?.add(sessionSource(s, { manager: mm, pathLength: opts.pathLength }));
  let lines = 0;
  const draw = () => {
    if (!live) return;
    const text = view(s, opts, mm);
    process.stderr.write((lines ? `\x1b[${lines}A\x1b[J` : '') + text);
    lines = text.split('\n').length - 1;
  };
  s.on('sample', draw);
  const watch = limited(opts) ? await watchCost(s, opts, mm) : undefined;
  const fin = (why: string) => {
    s.notes.push(...pricing?.summary() ?? []);
    const n = watch?.summary();
    if (n) s.notes.push(n);
    finish(s, opts, why, mm);
  };
  // the target runs (a launched one has not inherited it): the tool yields it the CPU
  yieldCpu(opts.nice);
  s.startSampling(opts.interval);
  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    await faultPoint('detach');
    // (what is taken out is decided before the detach restores the target, not during it)
    await pricing?.close();
    await s.detach();
    fin(why);
    await Promise.all([ui?.close(why), exports?.close()]);
  };
  let again: (sig: NodeJS.Signals) => void = () => undefined;
  signals.handle((sig) => {
    // a signal while a stop is under way (a detach that does not end) is a second one
    if (stopping) { again(sig); return; }
    if (!s.child) { progress(`${sig}: detaching (again: stop without detaching)`); void stop(`${sig}: detached`); return; }
    // a launched program decides how it ends; what it ran is written once it has.
    // Ctrl-C on a terminal has reached it already.
    if (sig !== 'SIGINT' || !process.stdin.isTTY) s.child.kill(sig);
    progress(`${sig}: ${sig !== 'SIGINT' || !process.stdin.isTTY ? 'passed to' : 'sent to'} the program; waiting for it to end (again: stop waiting)`);
  }, again = (sig) => {
    if (s.child && (sig !== 'SIGINT' || !process.stdin.isTTY)) s.child.kill(sig);
    fin(`${sig} again: stopped without waiting${s.child ? ' for the program' : ' for the detach (the target restores itself)'}; what was sampled is written`);
    process.exit(signalStatus(sig));
  });
  // the whole run is bounded: what attaching and placing took is counted
  if (end) {
    const ended = () => { void stop(`detached after ${opts.duration} s`); };
    if (end.aborted) ended();
    else end.addEventListener('abort', ended, { once: true });
  }
  void faultPoint('sampling');
  await s.waitForExit();
  signals.off();
  if (!stopping) {
    stopping = true;
    await pricing?.close();
    fin(`the target ${s.fate ?? 'exited'}`);
    await Promise.all([ui?.close(`the target ${s.fate ?? 'exited'}`), exports?.close()]);
  }
}

/** Says a line on stderr unless --quiet. */
const sayer = (opts: CommonOpts) => (l: string) => { if (!opts.quiet) process.stderr.write(`paranode: ${l}\n`); };

/** A metric request as the user writes it: metric@focus. */
const requestName = (i: { metric: { name: string }; focus: string }) => `${i.metric.name}${i.focus ? '@' + i.focus : ''}`;

/** --max-overhead given: requests are priced, and the observed cost is watched */
const limited = (opts: CommonOpts) => opts.maxOverhead !== undefined && Number.isFinite(opts.maxOverhead);

/** The observed cost, measured by a manager of its own (not one of the user's requests), checked after each sample. */
async function watchCost(s: Session, opts: CommonOpts, mm?: MetricManager): Promise<ObservedCostWatch> {
  const own = new MetricManager([s], MdlLibrary.standard());
  const inst = await own.enable('observed_cost');
  const watch = new ObservedCostWatch(inst, opts.maxOverhead!, sayer(opts), undefined, await own.enable('cpu_wait').catch(() => undefined));
  s.on('sample', () => watch.check(() => (mm?.all ?? []).map(requestName)));
  return watch;
}

/** The metric instances' table, then the probes' counters and timers (if any), then the call paths. */
function view(s: Session, opts: CommonOpts, mm?: MetricManager): string {
  const probes = s.metrics();
  const parts = [];
  if (mm) parts.push(renderInstances(mm.values(), s.elapsedSeconds));
  if (probes.length || (!mm && !opts.callPaths.length)) parts.push(renderTable(probes, s.elapsedSeconds));
  if (opts.callPaths.length) parts.push(renderCallPaths(s.callPaths(opts.pathLength)));
  return parts.join('');
}

function finish(s: Session, opts: CommonOpts, why: string, mm?: MetricManager): void {
  for (const p of s.unmatchedProbes().filter((t) => opts.probe.includes(t))) {
    s.notes.push(`probe "${p}" matched no function of the program (modules are named relative to ${s.cwd}; see \`paranode resources\`)`);
  }
  for (const k of mm?.unmatched() ?? []) {
    s.notes.push(`metric request ${k} found no code of the program to measure: no such function, call site or loop was loaded (modules are named relative to ${s.cwd}; see \`paranode resources --points\`)`);
  }
  const metrics = [...(mm?.values() ?? []), ...s.metrics()];
  if (opts.json) {
    const callPaths = opts.callPaths.length ? { callPaths: s.callPaths(opts.pathLength) } : {};
    fs.writeFileSync(opts.json, JSON.stringify({ pid: s.pid, metrics, ...callPaths, notes: s.notes }, null, 2) + '\n');
  }
  for (const file of opts.callPathsOut) {
    try {
      fs.writeFileSync(file, s.exportCallPaths(formatOf(file)));
    } catch (e) {
      s.notes.push(`call-path profile not written to ${file}: ${(e as Error).message}`);
    }
  }
  if (!opts.quiet) {
    process.stderr.write(`paranode: ${why}\n` + view(s, opts, mm));
    for (const n of s.notes.slice(shownNotes)) process.stderr.write(`note: ${n}\n`);
  }
  // a launched program's status is paranode's: 128 + n for a signal, as a shell shows it
  if (s.child && s.exited) process.exitCode = s.exitSignal ? signalStatus(s.exitSignal) : (s.exitCode ?? 1);
}

/** What the requests placed: one line each, the snippets too with --show-snippets. */
function reportEnabled(mm: MetricManager, opts: CommonOpts): void {
  const requests = mm.all;
  process.stderr.write(`paranode: ${requests.length} metric request(s) on: ${requests.map(requestName).join(', ')}\n`);
  if (!opts.showSnippets) return;
  for (const i of requests) {
    const lines = i.listing();
    process.stderr.write(`${i.metric.name}@${i.focus || '/'}:\n${lines.length ? lines.map((l) => '  ' + l).join('\n') : '  (no snippets: a value the runtime measures)'}\n`);
  }
}

const HOW: Record<string, string> = {
  load: 'slots (load)', liveedit: 'slots (LiveEdit)', breakpoint: 'breakpoints', wrap: 'wrapping', no: 'not prepared yet: LiveEdit on first probe',
};

async function main(argv: string[]): Promise<void> {
  const program = new Command();
  // the installed package's version (dist/src/cli -> the package's root)
  const { version } = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { version: string };
  program.name('paranode').description('Dynamic instrumentation for live Node.js programs').version(version, '-V, --version', 'print paranode\'s version').showHelpAfterError();

  addDiagnoseOptions(program.command('diagnose')
    .description('find the bottleneck by itself: paranode diagnose [options] (attach <pid> | -- node app.js)')
    .argument('<target...>', "'attach <pid>', or the command to run after --"))
    .action(async (args: string[], opts: DiagnoseCliOpts) => {
      await runDiagnose(targetOf(args), opts);
    });

  addCommon(program.command('run').description('launch a program under paranode: paranode run [options] -- node app.js')
    .argument('<command...>', 'the command to run (after --)'))
    .action((command: string[], opts: CommonOpts) => runCommand(command, opts));

  addCommon(program.command('attach').description('attach to a running Node.js process').argument('<pid>', 'process id', positive('pid')))
    .action((pid: number, opts: CommonOpts) => attachCommand(pid, opts));

  addCommon(program.command('ui')
    .description('a live web page of a program: enable metrics from its resource tree, watch their histograms (paranode ui [options] (attach <pid> | -- node app.js); diagnose --ui shows the search too)')
    .argument('<target...>', "'attach <pid>', or the command to run after --"))
    .action(async (args: string[], opts: CommonOpts) => {
      const target = targetOf(args);
      if ('pid' in target) await attachCommand(target.pid, { ...opts, ui: true });
      else await runCommand(target.command, { ...opts, ui: true });
    });

  program.command('calibrate').description('measure what each instrumentation primitive costs on this machine (kept for observed_cost)')
    .action(async () => {
      const c = await calibration({ fresh: true, progress });
      const ns = (p: [number, number]) => `${p[0].toFixed(1).padStart(9)} ${p[1].toFixed(1).padStart(11)}`;
      process.stdout.write(`ns per run            optimized unoptimized   (Node ${c.node}, ${c.cpu})
`);
      for (const [k, p] of Object.entries(c.mechanism)) process.stdout.write(`${`reach by ${k}`.padEnd(20)} ${ns(p)}
`);
      const names: Record<string, string> = { n: 'counter ++', a: 'counter +=', i: 'predicate', wallPair: 'wall timer start+stop', cpuPair: 'CPU timer start+stop', v: 'instance ($file)' };
      for (const [k, p] of Object.entries(c.primitive)) process.stdout.write(`${names[k].padEnd(20)} ${ns(p)}
`);
      process.stdout.write(`a breakpoint's function runs ${c.pinned.map((f) => f.toFixed(1)).join('-')}x slower (pinned in the interpreter)
`);
      process.stdout.write(`a switch of a slot V8 optimized costs ${c.switched.map((x) => (x / 1e6).toFixed(2)).join('-')} ms (its code optimized again)
`);
      process.stdout.write(`a call-path profile adds ${c.pathOp[0].toFixed(0)} ns to a profiled call's time and ${c.pathOp[1].toFixed(0)} ns to its caller's
`);
      process.stdout.write(`a stack sample of V8's profiler takes ${c.stackSample.map((x) => (x / 1e3).toFixed(1)).join('-')} µs of the sampled thread
`);
    });

  program.command('metrics').description('list the metric definitions: units, aggregation and the constraints each allows')
    .option('--mdl <file>', 'load metric definitions (MDL) beside the standard library (repeatable)', collect, [])
    .action((opts: { mdl: string[] }) => {
      const lib = library(opts.mdl);
      for (const m of [...lib.metrics.values()].sort((a, b) => a.name.localeCompare(b.name))) {
        const cons = m.constraints.map((c) => { const d = lib.constraints.get(c.name)!; return `${d.hierarchy} (${c.name})`; });
        process.stdout.write(`${m.name.padEnd(24)} ${m.title}\n${''.padEnd(24)} units ${m.units}, ${m.aggregate}, ${m.style}; focus on: ${cons.length ? cons.join(', ') : 'the whole program only'}\n`);
      }
      process.stdout.write(`\ndefinitions from: ${lib.files.join(', ')}\n`);
    });

  program.command('resources').description('list code resources (functions) and their points')
    .argument('<pid>', 'process id', positive('pid')).argument('[glob]', 'resource glob', '/Code/**')
    .option('--points', 'list each point too')
    .action(async (pid: number, glob: string, opts: { points?: boolean }) => {
      const s = await Session.attach(pid);
      try {
        for (const r of await s.resources(glob)) {
          const counts = new Map<string, number>();
          for (const p of r.points) counts.set(p.kind, (counts.get(p.kind) ?? 0) + 1);
          process.stdout.write(`${r.path}  line ${r.line}  ${[...counts].map(([k, n]) => `${k}:${n}`).join(' ')}  [${HOW[r.prepared]}]\n`);
          if (opts.points) {
            for (const p of r.points) {
              const loop = p.kind === 'loop' ? ` ${r.path}/${loopName(p, r.points)}` : '';
              process.stdout.write(`    ${p.kind}${p.exit ? `(${p.exit})` : ''} ${p.line}:${p.column + 1}${p.callee ? ` ${p.callee}` : ''}${loop}\n`);
            }
          }
        }
      } finally {
        await s.detach();
      }
    });

  const DEMOS: Record<string, string> = {
    'cpu-bound': 'a CPU-bound batch job; planted: hashRecord, three calls deep',
    'async-wait': 'an async client waiting on a slow service; planted: fetchProfile awaiting the network',
    'worker-imbalance': 'four worker threads, one with eight times the work; planted: crunch in the last worker',
  };
  addDiagnoseOptions(program.command('demo')
    .description(`diagnose the built-in demo programs (${Object.keys(DEMOS).join(', ')}; default all), or 'demo metrics' for the metric table of one`)
    .argument('[names...]', 'which demos'))
    .action(async (names: string[], opts: DiagnoseCliOpts) => {
      const dir = path.resolve(__dirname, '..', '..', '..', 'demo');
      if (names[0] === 'metrics') { await metricsDemo(dir); return; }
      for (const n of names) if (!DEMOS[n]) throw new InvalidArgumentError(`unknown demo "${n}" (demos: ${Object.keys(DEMOS).join(', ')}, metrics)`);
      for (const n of names.length ? names : Object.keys(DEMOS)) {
        process.stderr.write(`\nparanode: demo ${n}: ${DEMOS[n]}\nparanode: paranode diagnose -- node demo/${n}.js 60\n`);
        await runDiagnose({ command: [process.execPath, `${n}.js`, '60'] }, { ...opts, stop: true }, { cwd: dir, since: performance.now() });
      }
    });

  // after a command that ran or reached a program: what it added to the start-up cache, trimmed to its limit (cache-prune.ts)
  program.hook('postAction', (_program, command) => {
    if (['run', 'diagnose', 'attach', 'ui', 'demo'].includes(command.name())) pruneStartupCache();
  });
  await program.parseAsync(argv);
}

/** paranode run: launch under the tool, probes and metrics from the first line. */
async function runCommand(command: string[], opts: CommonOpts): Promise<void> {
  needsCallPaths(opts);
  const limits = { maxPauseMs: opts.maxPause, maxBreakpoints: opts.maxBreakpoints, progress: opts.quiet ? undefined : progress, signal: durationEnd(opts.duration) };
  const signals = new EarlySignals();
  // a call-path profile's probes stand from the program's first line, as -p probes do
  const probes = [...opts.probe, ...callPathProbes(opts.callPaths)];
  const lib = library(opts.mdl);
  const enables = opts.enable.map(parseEnable);
  for (const r of enables) lib.metric(r.metric);
  const ui = await openUi(opts, `paranode run -- ${command.join(' ')}`, lib);
  let exports: CliExports | undefined;
  try {
    exports = await CliExports.open(opts, progress);
    // the page prices what it enables: measured before the program runs, not beside it
    const cal = ui || limited(opts) ? await calibration({ progress }) : undefined;
    let s: Session, mm: MetricManager | undefined;
    if (!enables.length) s = await Session.launch(command, probes, limits);
    else {
      ({ session: s, manager: mm } = await MetricManager.launch(command, enables, { ...limits, probes, progress }, lib));
      if (!opts.quiet) reportEnabled(mm, opts);
    }
    let pricing: LaunchPricing | undefined;
    if (limited(opts) && (probes.length || mm)) {
      pricing = new LaunchPricing(launchItems(s, opts, cal!, mm), opts.maxOverhead!, s, sayer(opts));
      if (!opts.quiet) progress(`the requests are priced as the program's code loads: one whose predicted cost passes --max-overhead ${pct(opts.maxOverhead!)} is taken out`);
    }
    if (ui) {
      ui.addSession(s, `${command.join(' ')} (pid ${s.pid})`);
      await ui.useManager(mm ??= new MetricManager([s], lib));
    }
    await session(s, opts, mm, signals, ui, exports, limits.signal, pricing);
  } finally {
    await Promise.all([ui?.close('paranode stopped'), exports?.close()]);
  }
}

/**
 * run's requests for LaunchPricing: the user's probes (ids 1..n, as launched), the
 * call-path profile (the next ids), the metric requests; in the order attach admits them.
 */
function launchItems(s: Session, opts: CommonOpts, cal: Calibration, mm?: MetricManager): LaunchItem[] {
  const removing = (ids: number[]) => async () => {
    await s.sample().catch(() => undefined);
    for (const id of ids) await s.removeProbe(id);
  };
  const items: LaunchItem[] = parseProbes(opts.probe).map((r, k) => ({
    what: `probe ${opts.probe[k]}`, price: () => predictPlan(probePlan([r]), s, cal), takeOut: removing([k + 1]),
  }));
  if (opts.callPaths.length) {
    const reqs = parseProbes(callPathProbes(opts.callPaths));
    items.push({ what: `call-path profile of ${opts.callPaths.join(', ')}`, price: () => predictPlan(probePlan(reqs), s, cal),
      takeOut: removing(reqs.map((_, i) => opts.probe.length + i + 1)) });
  }
  for (const inst of mm?.all ?? []) {
    items.push({ what: `metric request ${requestName(inst)}`, price: () => mm!.priceOf(inst), takeOut: (why) => mm!.retire(inst, why) });
  }
  return items;
}

/** paranode attach: into a running process; the target is checked and the requests parsed before it is touched. */
async function attachCommand(pid: number, opts: CommonOpts): Promise<void> {
  needsCallPaths(opts);
  // definitions and metric names are checked before the target is touched
  const enables = opts.enable.map(parseEnable);
  const lib = library(opts.mdl);
  for (const r of enables) lib.metric(r.metric);
  // probes too: a typo must not open the target's inspector or start an agent in it
  const requests = parseProbes(opts.probe);
  callPathProbes(opts.callPaths);
  const signals = new EarlySignals(true);
  const ui = await openUi(opts, `paranode attach ${pid}`, lib);
  let exports: CliExports | undefined;
  try {
    exports = await CliExports.open(opts, progress);
    // the page prices what it enables, and so does --max-overhead: measured before the target is touched
    const cal = ui || limited(opts) ? await calibration({ progress }) : undefined;
    const end = durationEnd(opts.duration);
    const s = await Session.attach(pid, { maxPauseMs: opts.maxPause, maxBreakpoints: opts.maxBreakpoints, progress: opts.quiet ? undefined : progress, signal: end });
    // attached, the inspector port closed again (at normal priority: the port stays open no
    // longer than it must): the tool yields the CPU before it prepares the probes' scripts
    yieldCpu(opts.nice);
    let mm: MetricManager | undefined;
    try {
      await faultPoint('placement');
      const budget = limited(opts) ? new CostBudget(opts.maxOverhead!, s, sayer(opts)) : undefined;
      for (const [k, p] of opts.probe.entries()) {
        const seen = s.notes.length;
        if (budget && !await probesFit(s, `probe ${requests[k].text}`, [requests[k]], cal!, budget)) continue;
        const r = await s.place(requests[k]);
        if (opts.quiet) continue;
        const how = [['slot', r.bySlot], ['wrapping', r.byWrapping], ['breakpoint', r.byBreakpoint]].filter(([, n]) => n).map(([k, n]) => `${n} by ${k}`);
        process.stderr.write(`paranode: probe ${r.id} placed at ${r.placed} point(s)${how.length ? ` (${how.join(', ')})` : ''}` +
          `${r.notPlaced ? `, ${r.notPlaced} not placed` : ''}: ${p}\n`);
        for (const n of s.notes.slice(seen)) process.stderr.write(`note: ${n}\n`);
        shownNotes = s.notes.length;
      }
      const pathsFit = async () => !budget || probesFit(s, `call-path profile of ${opts.callPaths.join(', ')}`, parseProbes(callPathProbes(opts.callPaths)), cal!, budget);
      if (opts.callPaths.length && await pathsFit()) {
        const r = await s.profileCallPaths(opts.callPaths);
        if (!opts.quiet) process.stderr.write(`paranode: call-path profile placed at ${r.placed} point(s): ${opts.callPaths.join(', ')}\n`);
      }
      if (enables.length || ui) {
        mm = new MetricManager([s], lib);
        mm.on('progress', progress);
        const placed = budget ? await pricedRequests(mm, enables, budget) : enables;
        for (const r of placed) await mm.enableAll(r.metric, r.focus);
        if (!opts.quiet && placed.length) reportEnabled(mm, opts);
      }
      if (ui && mm) {
        ui.addSession(s, `process ${pid}`);
        await ui.useManager(mm);
      }
    } catch (e) {
      // --duration ended while placing: what was placed is sampled, reported and taken out as at any detach
      if (!(e instanceof Interrupted)) {
        await s.detach().catch(() => undefined);
        throw e;
      }
      s.notes.push(e.message);
    }
    await session(s, opts, mm, signals, ui, exports, end);
  } finally {
    await Promise.all([ui?.close('paranode stopped'), exports?.close()]);
  }
}

/** The metric table of the CPU-bound demo, from its first line. */
async function metricsDemo(dir: string): Promise<void> {
  const demo = path.join(dir, 'cpu-bound.js');
  const enables = ['procedure_calls@/Code/cpu-bound.js/*', 'cpu_inclusive@/Code/cpu-bound.js/hashRecord', 'wall@/Code/cpu-bound.js/processBatch', 'cpu', 'gc_time'];
  const probes = ['/Code/cpu-bound.js/hashRecord.entry: if ($arg[0].length > 40) longRecords++'];
  process.stderr.write(`paranode: running node ${path.relative(process.cwd(), demo)} 5 with\n${enables.map((e) => `  --enable '${e}'`).join('\n')}\n${probes.map((p) => `  --probe '${p}'`).join('\n')}\n`);
  const { session: s, manager } = await MetricManager.launch([process.execPath, demo, '5'], enables.map(parseEnable), { probes, cwd: dir });
  const opts: CommonOpts = { probe: probes, enable: enables, mdl: [], showSnippets: true, interval: 200, maxPause: 2000, maxBreakpoints: 200, nice: DEFAULT_NICE, callPaths: [], pathLength: 2, callPathsOut: [] };
  reportEnabled(manager, opts);
  await session(s, opts, manager);
}

main(process.argv).catch((e: Error) => {
  process.stderr.write(`paranode: ${e.message}\n`);
  process.exit(2);
});
