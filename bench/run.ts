// paranode benchmark suite: `npm run bench` (add `-- --quick` for a short run,
// `-- --only fig6,attach` for some sections, `-- --out file.md` to write the report,
// `-- --large-limit <s>` for the time limit of LiveEdit planning on the 9 MB script).
// Every section compares against a baseline measured in the same run and
// prints markdown tables on stdout; progress goes to stderr.
import { execSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import { benchAttach } from './attach';
import { benchAttachStress } from './attach-stress';
import { benchCallPaths } from './call-paths';
import { benchCompensation } from './compensation';
import { benchConditionMemory } from './condition-memory';
import { benchConsultant, benchSearch } from './consultant';
import { benchCost } from './cost';
import { benchFig6 } from './fig6';
import { benchHttp } from './http';
import { benchHttpSeconds } from './http-seconds';
import { benchLiveEditLoad } from './liveedit-load';
import { benchInstructions } from './instructions';
import { benchLarge } from './large';
import { benchMetrics } from './metrics';
import { BenchOptions, progress, Section } from './lib';
import { benchPause } from './pause';
import { benchPinning } from './pinning';
import { benchStartup, benchStartupDormant } from './startup';
import { benchSwitching } from './switching';
import { benchDormant } from './dormant';
import { benchWorkload } from './workload';
import { benchUi } from './ui';
import { benchRealApps } from './real-apps';
import { benchWholeApp } from './whole-app';
import { benchPlanRounds } from './plan-rounds';
import { benchMessages } from './messages';

const SECTIONS: Record<string, (o: BenchOptions) => Promise<Section>> = {
  fig6: benchFig6,
  attach: benchAttach,
  large: benchLarge,
  pause: benchPause,
  workload: benchWorkload,
  instructions: benchInstructions,
  metrics: benchMetrics,
  cost: benchCost,
  consultant: benchConsultant,
  search: benchSearch,
  startup: benchStartup,
  'startup-dormant': benchStartupDormant,
  dormant: benchDormant,
  http: benchHttp,
  'http-seconds': benchHttpSeconds,
  'attach-stress': benchAttachStress,
  'liveedit-load': benchLiveEditLoad,
  pinning: benchPinning,
  switching: benchSwitching,
  'condition-memory': benchConditionMemory,
  'call-paths': benchCallPaths,
  compensation: benchCompensation,
  ui: benchUi,
  'real-apps': benchRealApps,
  'whole-app': benchWholeApp,
  'plan-rounds': benchPlanRounds,
  messages: benchMessages,
};

function usage(): never {
  process.stderr.write(`usage: node dist/bench/run.js [--quick] [--only ${Object.keys(SECTIONS).join(',')}] [--out report.md] [--large-limit seconds]\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const opts: BenchOptions = { quick: false };
  let only = Object.keys(SECTIONS);
  let out: string | null = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--quick') opts.quick = true;
    else if (a === '--only') only = (args[++i] ?? usage()).split(',');
    else if (a === '--out') out = args[++i] ?? usage();
    else if (a === '--large-limit') opts.largeLimitS = Number(args[++i] ?? usage());
    else usage();
  }
  for (const s of only) if (!SECTIONS[s]) usage();
  const command = `npm run bench${args.length ? ' -- ' + args.join(' ') : ''}`;
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  // BENCH_SOURCE names the source measured when this is not a git checkout (e.g. a `git archive` export)
  let commit = process.env.BENCH_SOURCE ?? 'no git checkout';
  if (!process.env.BENCH_SOURCE) {
    try { commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() + (isDirty() ? ' + working tree' : ''); } catch { /* not a checkout */ }
  }
  const started = new Date();
  const header = [
    `Command: \`${command}\``,
    `Date: ${started.toISOString()}`,
    `Node: \`node --version\` = ${process.version} (V8 ${process.versions.v8})`,
    `Machine: ${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.platform()} ${os.release()}; paranode at ${commit}`,
  ];
  progress(`paranode benchmarks${opts.quick ? ' (quick)' : ''}: ${only.join(', ')}`);
  const parts: string[] = [header.map((h) => `- ${h}`).join('\n'), ''];
  process.stdout.write(parts.join('\n') + '\n');
  let failed = 0;
  for (const name of only) {
    const t0 = Date.now();
    let section: Section;
    try {
      section = await SECTIONS[name](opts);
    } catch (e) {
      failed++;
      section = { title: name, body: [`**FAILED**: ${String((e as Error)?.stack ?? e)}`] };
    }
    const secs = ((Date.now() - t0) / 1000).toFixed(0);
    progress(`${name}: done in ${secs} s`);
    const text = [`## ${section.title}`, '', `_Section run time ${secs} s._`, '', ...section.body].join('\n');
    process.stdout.write(text + '\n\n');
    parts.push(text, '');
  }
  const total = ((Date.now() - started.getTime()) / 1000).toFixed(0);
  parts.push(`_Total run time ${total} s._`);
  if (out) fs.writeFileSync(out, parts.join('\n') + '\n');
  progress(`all done in ${total} s${failed ? `; ${failed} section(s) FAILED` : ''}`);
  if (failed) process.exitCode = 1;
}

function isDirty(): boolean {
  try { return execSync('git status --porcelain', { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== ''; } catch { return false; }
}

main().catch((e) => { process.stderr.write(`${e?.stack ?? e}\n`); process.exit(1); });
