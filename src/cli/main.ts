#!/usr/bin/env node
// paranode command line: run | attach | resources | demo
import { Command, InvalidArgumentError } from 'commander';
import * as fs from 'fs';
import * as path from 'path';
import { Session } from '../api/session';
import { renderTable } from './live-view';

interface CommonOpts { probe: string[]; duration?: number; interval: number; json?: string; maxPause: number; maxBreakpoints: number; quiet?: boolean }

const collect = (v: string, prev: string[]) => [...prev, v];
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
  return cmd
    .option('-p, --probe <probe>', "'<function>.<point>: <snippet>', e.g. '/Code/app.js/f.entry: c++' (repeatable)", collect, [])
    .option('-d, --duration <seconds>', 'detach after this many seconds', positive('--duration'))
    .option('-i, --interval <ms>', 'sampling interval', positive('--interval'), 200)
    .option('--json <file>', 'write metrics and notes to this file at the end')
    .option('--max-pause <ms>', 'refuse LiveEdits predicted to pause the target longer (breakpoints are used instead)', positive('--max-pause'), 2000)
    .option('--max-breakpoints <n>', 'points per thread that may be reached by breakpoints where code cannot be prepared (0: none)', count('--max-breakpoints'), 200)
    .option('-q, --quiet', 'no live view');
}

async function session(s: Session, opts: CommonOpts): Promise<void> {
  const live = !opts.quiet && process.stderr.isTTY;
  let lines = 0;
  const draw = () => {
    if (!live) return;
    const text = renderTable(s.metrics(), s.elapsedSeconds);
    process.stderr.write((lines ? `\x1b[${lines}A\x1b[J` : '') + text);
    lines = text.split('\n').length - 1;
  };
  s.on('sample', draw);
  s.startSampling(opts.interval);
  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    await s.detach();
    finish(s, opts, why);
  };
  process.once('SIGINT', () => { void stop('interrupted: detached'); });
  if (opts.duration) setTimeout(() => { void stop(`detached after ${opts.duration} s`); }, opts.duration * 1000).unref();
  await s.waitForExit();
  if (!stopping) { stopping = true; finish(s, opts, `target exited${s.exitCode !== null ? ` with code ${s.exitCode}` : ''}`); }
}

function finish(s: Session, opts: CommonOpts, why: string): void {
  const metrics = s.metrics();
  if (opts.json) {
    fs.writeFileSync(opts.json, JSON.stringify({ pid: s.pid, metrics, notes: s.notes }, null, 2) + '\n');
  }
  if (!opts.quiet) {
    process.stderr.write(`paranode: ${why}\n` + renderTable(metrics, s.elapsedSeconds));
    for (const n of s.notes.slice(shownNotes)) process.stderr.write(`note: ${n}\n`);
  }
  if (s.child && s.exitCode !== null) process.exitCode = s.exitCode;
}

const HOW: Record<string, string> = {
  load: 'slots (load)', liveedit: 'slots (LiveEdit)', breakpoint: 'breakpoints', wrap: 'wrapping', no: 'not prepared yet: LiveEdit on first probe',
};

async function main(argv: string[]): Promise<void> {
  const program = new Command();
  program.name('paranode').description('Dynamic instrumentation for live Node.js programs').showHelpAfterError();

  addCommon(program.command('run').description('launch a program under paranode: paranode run [options] -- node app.js')
    .argument('<command...>', 'the command to run (after --)'))
    .action(async (command: string[], opts: CommonOpts) => {
      const s = await Session.launch(command, opts.probe, { maxPauseMs: opts.maxPause, maxBreakpoints: opts.maxBreakpoints });
      await session(s, opts);
    });

  addCommon(program.command('attach').description('attach to a running Node.js process').argument('<pid>', 'process id', positive('pid')))
    .action(async (pid: number, opts: CommonOpts) => {
      const s = await Session.attach(pid, { maxPauseMs: opts.maxPause, maxBreakpoints: opts.maxBreakpoints });
      try {
        for (const p of opts.probe) {
          const seen = s.notes.length;
          const r = await s.probe(p);
          if (opts.quiet) continue;
          const how = [['slot', r.bySlot], ['wrapping', r.byWrapping], ['breakpoint', r.byBreakpoint]].filter(([, n]) => n).map(([k, n]) => `${n} by ${k}`);
          process.stderr.write(`paranode: probe ${r.id} placed at ${r.placed} point(s)${how.length ? ` (${how.join(', ')})` : ''}` +
            `${r.notPlaced ? `, ${r.notPlaced} not placed` : ''}: ${p}\n`);
          for (const n of s.notes.slice(seen)) process.stderr.write(`note: ${n}\n`);
          shownNotes = s.notes.length;
        }
      } catch (e) {
        await s.detach();
        throw e;
      }
      await session(s, opts);
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
          if (opts.points) for (const p of r.points) process.stdout.write(`    ${p.kind}${p.exit ? `(${p.exit})` : ''} ${p.line}:${p.column + 1}${p.callee ? ` ${p.callee}` : ''}\n`);
        }
      } finally {
        await s.detach();
      }
    });

  program.command('demo').description('run the built-in demo: count and time the calls of a CPU-bound program')
    .action(async () => {
      const demo = path.resolve(__dirname, '..', '..', '..', 'demo', 'cpu-bound.js');
      const probes = [
        '/Code/**/hashRecord.entry: calls++',
        '/Code/**/hashRecord.entry: startWallTimer(hashTime)',
        '/Code/**/hashRecord.exit: stopTimer(hashTime)',
        '/Code/**/processBatch.calls: batchCalls++',
        '/Code/**/hashRecord.entry: if ($arg[0].length > 40) longRecords++',
      ];
      process.stderr.write(`paranode: running node ${path.relative(process.cwd(), demo)} with probes:\n${probes.map((p) => '  ' + p).join('\n')}\n`);
      const s = await Session.launch([process.execPath, demo], probes);
      await session(s, { probe: probes, interval: 200, maxPause: 2000, maxBreakpoints: 200 });
    });

  await program.parseAsync(argv);
}

main(process.argv).catch((e: Error) => {
  process.stderr.write(`paranode: ${e.message}\n`);
  process.exit(2);
});
