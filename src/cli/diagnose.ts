// paranode diagnose: the Performance Consultant from the command line, with a
// live view of the search and a ranked report at the end.
import { Command, InvalidArgumentError } from 'commander';
import * as fs from 'fs';
import { diagnose, DiagnoseTarget } from '../consultant/diagnose';
import { HYPOTHESES } from '../consultant/hypotheses';
import { diagnosis, Diagnosis, renderDiagnosis, renderHistory } from '../consultant/report';
import type { PerformanceConsultant } from '../consultant/search';
import { MdlLibrary } from '../mdl/library';
import type { Session } from '../session/session';
import { DEFAULT_NICE, niceArg, yieldCpu } from './priority';
import { onStopSignals, signalStatus } from './signals';
import { addUiOptions, openUi, type UiCliOpts } from './ui-option';
import { addExportOptions, CliExports, type ExportCliOpts } from './export-options';
import { sessionSource } from '../exports/readings';
import { durationLeft } from './duration';

export interface DiagnoseCliOpts extends UiCliOpts, ExportCliOpts {
  maxOverhead: number; maxTests?: number; duration?: number; testTime: number; threshold: Record<string, number>;
  hypotheses?: string[]; json?: string; history?: boolean; quiet?: boolean; interval: number; stop?: boolean; mdl: string[]; nice: number;
}

/** "5%", "0.05" or "none" */
export function parseFraction(what: string) {
  return (v: string): number => {
    if (v === 'none') return Infinity;
    const n = v.endsWith('%') ? Number(v.slice(0, -1)) / 100 : Number(v);
    if (!(n >= 0) || v.trim() === '') throw new InvalidArgumentError(`${what} must be a percentage like 5% or a fraction like 0.05${what === '--max-overhead' ? ", or 'none'" : ''}`);
    return n;
  };
}

const thresholdArg = (v: string, prev: Record<string, number>) => {
  const m = /^([a-z_]+)=(.+)$/.exec(v);
  if (!m) throw new InvalidArgumentError(`expected <hypothesis>=<value>, e.g. cpu_bound=10% (hypotheses: ${HYPOTHESES.map((h) => h.name).join(', ')})`);
  if (!HYPOTHESES.some((h) => h.name === m[1])) throw new InvalidArgumentError(`unknown hypothesis "${m[1]}" (known: ${HYPOTHESES.map((h) => h.name).join(', ')})`);
  return { ...prev, [m[1]]: parseFraction('a threshold')(m[2]) };
};

const pos = (what: string) => (v: string) => {
  const n = Number(v);
  if (!(n > 0)) throw new InvalidArgumentError(`${what} must be a positive number`);
  return n;
};

export function addDiagnoseOptions(cmd: Command): Command {
  return addExportOptions(addUiOptions(cmd))
    .option('--max-overhead <limit>', "the perturbation limit: instrumentation may take at most this share of the time a thread could run ('none': no limit)", parseFraction('--max-overhead'), 0.05)
    .addHelpText('after', '\nExamples:\n  paranode diagnose -- node app.js\n  paranode diagnose --max-overhead 2% --duration 60 attach 12345\n  paranode diagnose -t cpu_bound=10% --json report.json -- node build.js')
    .option('--max-tests <n>', 'also test at most this many refinements at once (default: as many as the cost limit allows)', pos('--max-tests'))
    .option('-d, --duration <seconds>', 'end the search this many seconds after the command started, following phases (default: when the search is complete)', pos('--duration'))
    .option('--test-time <seconds>', 'how long each test observes', pos('--test-time'), 1)
    .option('-t, --threshold <hypothesis=value>', `change a hypothesis's threshold, e.g. cpu_bound=10% (repeatable; ${HYPOTHESES.map((h) => `${h.name} ${Math.round(h.threshold * 100)}%`).join(', ')})`, thresholdArg, {} as Record<string, number>)
    .option('--hypotheses <names>', 'test only these (comma-separated)', (v: string) => {
      const names = v.split(',').map((x) => x.trim()).filter(Boolean);
      for (const n of names) if (!HYPOTHESES.some((h) => h.name === n)) throw new InvalidArgumentError(`unknown hypothesis "${n}" (known: ${HYPOTHESES.map((h) => h.name).join(', ')})`);
      return names;
    })
    .option('--json <file>', 'write the diagnosis (bottlenecks, search history, cost) to this file')
    .option('--history', 'print the whole search history graph at the end')
    .option('-i, --interval <ms>', 'sampling interval', pos('--interval'), 200)
    .option('--mdl <file>', 'load metric definitions (MDL) beside the standard library (repeatable)', (v: string, p: string[]) => [...p, v], [])
    .option('--stop', 'stop a launched program when the diagnosis is done (default: it runs on, detached)')
    .option('--nice <n>', "once the target runs, run paranode at this niceness, so that it yields the CPU to the target (0-19; 0: unchanged)", niceArg, DEFAULT_NICE)
    .option('-q, --quiet', 'no live view');
}

/** Live view: a status line and the search graph's true branches (redrawn on a terminal, appended otherwise). */
function liveView(c: PerformanceConsultant): void {
  const tty = process.stderr.isTTY;
  let lines = 0;
  if (!tty) {
    // a log: what holds, and what stops holding; the whole program's first verdicts; no line per
    // refinement found false (a server's search decides hundreds of modules and functions at once)
    const shown = new Map<number, string>();
    c.on('node', (n) => {
      if (n.state !== 'true' && n.state !== 'false') return;
      const was = shown.get(n.id);
      // whole-program hypotheses are judged every window: changes only
      if (was === n.state || (n.state === 'false' && n.parent !== null && was !== 'true')) return;
      shown.set(n.id, n.state);
      process.stderr.write(`paranode: ${c.now().toFixed(1)} s ${n.state === 'true' ? 'TRUE ' : 'false'} ${n.hypothesis}${n.focus ? ` @ ${n.focus}` : ''} ${((n.value ?? 0) * 100).toFixed(1)}% (threshold ${(n.threshold * 100).toFixed(1)}%)\n`);
    });
    // and where the search is, every 5 s
    let next = 5;
    c.on('tick', () => {
      if (c.now() < next || c.complete) return;
      next = Math.floor(c.now() / 5) * 5 + 5;
      const count = (st: string) => c.nodes.filter((n) => n.state === st && n.parent !== null).length;
      process.stderr.write(`paranode: ${c.now().toFixed(1)} s searching: ${count('testing')} testing, ${count('unknown') + count('waiting')} to test, ${count('true')} true, ${count('false')} false\n`);
    });
    return;
  }
  c.on('tick', () => {
    const last = c.costTrace[c.costTrace.length - 1];
    const testing = c.nodes.filter((n) => n.state === 'testing' && n.parent !== null).length;
    const waiting = c.nodes.filter((n) => n.state === 'waiting').length;
    const head = `paranode: searching ${c.now().toFixed(1)} s · cost ${last ? (100 * last.observed).toFixed(1) : '0.0'}% (limit ${Number.isFinite(c.limit) ? (100 * c.limit).toFixed(1) + '%' : 'none'}) · ${testing} testing, ${waiting} waiting, ${c.nodes.length} nodes\n`;
    const rows = renderHistory(c.nodes, { onlyTrue: true }).split('\n').filter(Boolean);
    const shown = rows.length > 30 ? [...rows.slice(0, 29), `  … ${rows.length - 29} more`] : rows;
    const text = head + shown.map((r) => `  ${r}\n`).join('');
    process.stderr.write((lines ? `\x1b[${lines}A\x1b[J` : '') + text);
    lines = text.split('\n').length - 1;
  });
}

/** Run a diagnosis and print it; returns it (and the launched program's process, if any). */
/** extra.since: performance.now() when this diagnosis began (--duration counts from it; default the command's start) */
export async function runDiagnose(target: DiagnoseTarget, opts: DiagnoseCliOpts, extra: { cwd?: string; since?: number } = {}): Promise<Diagnosis> {
  const lib = MdlLibrary.standard();
  for (const f of opts.mdl) lib.loadFile(f);
  const ac = new AbortController();
  let running: { c: PerformanceConsultant; s: Session } | null = null;
  const forward = (sig: NodeJS.Signals) => {
    // Ctrl-C on a terminal has reached a launched program already
    const child = running?.s.child;
    if (child && child.exitCode === null && child.signalCode === null && (sig !== 'SIGINT' || !process.stdin.isTTY)) child.kill(sig);
  };
  const off = onStopSignals((sig) => {
    process.stderr.write(`paranode: ${sig}: ending the search (again: stop at once with what was found)\n`);
    forward(sig);
    ac.abort();
  }, (sig) => {
    forward(sig);
    if (running) {
      // no more round trips to the target: the diagnosis of what was decided so far
      const d = diagnosis(running.c, running.s.pid, running.s.processFocus, () => false);
      d.targetFate = `was left as it was (${sig} again stopped the detach; the target restores itself)`;
      if (opts.json) fs.writeFileSync(opts.json, JSON.stringify(d, null, 2) + '\n');
      process.stdout.write(renderDiagnosis(d));
    }
    process.exit(signalStatus(sig));
  });
  const ui = await openUi(opts, `paranode diagnose ${'pid' in target ? `attach ${target.pid}` : `-- ${target.command.join(' ')}`}`, lib, true);
  let exports: CliExports | undefined;
  try {
    // the search's metric instances, as its tests enable and disable them
    exports = await CliExports.open(opts, (m) => process.stderr.write(`paranode: ${m}\n`));
    const { diagnosis: result, session } = await diagnose(target, {
      // --duration counts from the command's start, as run's and attach's do
      maxOverhead: opts.maxOverhead, maxTests: opts.maxTests, durationSeconds: opts.duration && durationLeft(opts.duration, extra.since) / 1000, testSeconds: opts.testTime,
      thresholds: opts.threshold, hypotheses: opts.hypotheses, intervalMs: opts.interval, signal: ac.signal, library: lib, cwd: extra.cwd,
      progress: (m) => process.stderr.write(`paranode: ${m}\n`),
      onStart: (c, s) => {
        running = { c, s };
        ui?.addSession(s, 'pid' in target ? `process ${s.pid}` : `${target.command.join(' ')} (pid ${s.pid})`);
        ui?.useConsultant(c);
        exports?.add(sessionSource(s, { manager: c.manager }));
        yieldCpu(opts.nice);
        process.stderr.write(`paranode: diagnosing process ${s.pid}; instrumentation limit ${Number.isFinite(c.limit) ? (100 * c.limit).toFixed(1) + '%' : 'none'} (Ctrl-C ends the search)\n`);
        if (!opts.quiet) liveView(c);
      },
    });
    if (opts.json) fs.writeFileSync(opts.json, JSON.stringify(result, null, 2) + '\n');
    ui?.report(result);
    await Promise.all([ui?.close('the diagnosis is done'), exports?.close()]);
    process.stdout.write(renderDiagnosis(result));
    if (opts.history) process.stdout.write('search history (+ true, - false, ~ testing, … waiting, ? not tested, $ too costly, x not testable):\n' + renderHistory(result.searchHistory));
    const child = session.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      if (opts.stop) child.kill();
      await new Promise((r) => child.once('exit', r));
    }
    // a launched program's status is paranode's (128 + n for a signal), unless --stop ended it
    if (child && !opts.stop) process.exitCode = child.signalCode ? signalStatus(child.signalCode) : (child.exitCode ?? 0);
    return result;
  } finally {
    off();
    await Promise.all([ui?.close('paranode stopped'), exports?.close()]);
  }
}

/** `diagnose attach <pid>` or `diagnose -- node app.js` */
export function targetOf(args: string[]): DiagnoseTarget {
  if (args[0] === 'attach') {
    const pid = Number(args[1]);
    if (args.length !== 2 || !(pid > 0)) throw new InvalidArgumentError('usage: paranode diagnose [options] attach <pid>');
    return { pid };
  }
  if (!args.length) throw new InvalidArgumentError('usage: paranode diagnose [options] (attach <pid> | -- node app.js)');
  return { command: args };
}
