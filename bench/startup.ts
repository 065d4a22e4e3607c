// Start-up cost of `paranode run` on the corpus of real npm programs
// (test/corpus): for each program, wall time and peak RSS of a plain run
// against a run under `paranode run -q` with no probe (every script the
// program loads is prepared at load: slots everywhere, all off), with an empty
// start-up cache (cold) and one filled by an earlier run (warm). Runs are
// interleaved (plain, cold, warm, plain, ...) and the median of each is taken.
// `npm run bench -- --only startup`, or standalone: node dist/bench/startup.js [--quick] [--runs n] [driver ...]
// With --dormant: start-up under the dormant agent (node --import paranode/agent),
// cold and warm prepared-code cache, against plain (`--only startup-dormant`); with
// --dormant --corpus every program of the corpus, not only the five large ones.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CORPUS, CorpusProgram, driverPath, run, Run } from '../test/support/corpus';
import { BenchOptions, fmt, median, progress, ratio, ROOT, Section, table, TARGETS } from './lib';

const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
const PRELOAD = path.join(TARGETS, 'max-rss.js');

interface Sample { ms: number; targetKb: number; toolKb: number; same: boolean }

/** plain; under `paranode run` with an empty start-up cache (cold) or one an earlier run filled (warm) */
type RunKind = 'plain' | 'cold' | 'warm';

/** One run: the target's peak RSS (and the tool's, when there is one) from the max-rss preload. */
async function once(p: CorpusProgram, kind: RunKind, warmDir: string, plain?: Run): Promise<{ sample: Sample; r: Run }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-startup-'));
  const cold = kind === 'cold' ? fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-cold-cache-')) : '';
  try {
    const target = [process.execPath, '-r', PRELOAD, driverPath(p)];
    const env = { PARANODE_BENCH_RSS: dir, PARANODE_CACHE_DIR: cold || warmDir };
    const prepared = kind !== 'plain';
    const r = prepared
      ? await run(process.execPath, ['-r', PRELOAD, CLI, 'run', '-q', '--', ...target], { env })
      : await run(target[0], target.slice(1), { env });
    const rss = new Map(fs.readdirSync(dir).map((f) => [Number(f), Number(fs.readFileSync(path.join(dir, f), 'utf8'))]));
    // the tool is the process we started; the target is the other one (plain: the only one)
    const toolKb = prepared ? rss.get(r.pid) ?? NaN : 0;
    const targetKb = prepared ? Math.max(...[...rss].filter(([pid]) => pid !== r.pid).map(([, kb]) => kb)) : rss.get(r.pid) ?? NaN;
    const same = !plain || (r.status === plain.status && r.stdout === plain.stdout && r.stderr === plain.stderr);
    return { sample: { ms: r.ms, targetKb, toolKb, same }, r };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    if (cold) fs.rmSync(cold, { recursive: true, force: true });
  }
}

export async function benchStartup(opts: BenchOptions & { runs?: number; only?: string[] }): Promise<Section> {
  const runs = opts.runs ?? (opts.quick ? 3 : 5);
  const programs = CORPUS.filter((p) => !opts.only?.length || opts.only.includes(p.driver));
  const rows: string[][] = [];
  const differs: string[] = [];
  const warmDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-startup-warm-'));
  const kinds: RunKind[] = ['plain', 'cold', 'warm'];
  try {
    for (const p of programs) {
      progress(`startup: ${p.driver} (${runs} runs each of plain, paranode run cold, paranode run warm, interleaved)`);
      // one warm-up of each (file cache; the warm run's cache filled), not counted; the plain one is the reference output
      const reference = (await once(p, 'plain', warmDir)).r;
      await once(p, 'warm', warmDir);
      const got = new Map<RunKind, Sample[]>(kinds.map((k) => [k, []]));
      for (let i = 0; i < runs; i++) for (const k of kinds) got.get(k)!.push((await once(p, k, warmDir, reference)).sample);
      const m = (k: RunKind, f: keyof Sample) => median(got.get(k)!.map((s) => Number(s[f])));
      if (![...got.values()].every((xs) => xs.every((s) => s.same))) differs.push(p.driver);
      const rel = (k: RunKind, f: 'ms' | 'targetKb', scale = 1) => `${fmt(m(k, f) / scale, f === 'ms' ? 0 : 1)} (${ratio(m(k, f), m('plain', f))})`;
      rows.push([
        p.driver, fmt(m('plain', 'ms'), 0), rel('cold', 'ms'), rel('warm', 'ms'),
        fmt(m('plain', 'targetKb') / 1024, 1), rel('cold', 'targetKb', 1024), rel('warm', 'targetKb', 1024),
        fmt(m('warm', 'toolKb') / 1024, 1),
      ]);
    }
  } finally {
    fs.rmSync(warmDir, { recursive: true, force: true });
  }
  return {
    title: 'Start-up: the corpus of npm programs, plain and under `paranode run` (prepared, no probe), cold and warm start-up cache',
    body: [
      `Each program of test/corpus run to its end: \`node <driver>\` against \`node dist/src/cli/main.js run -q -- node <driver>\`, ` +
      `${runs} runs of each kind, interleaved (plain, cold, warm, plain, ...), after one warm-up of plain and warm; medians, ratio to plain in parentheses. ` +
      'Cold: PARANODE_CACHE_DIR a new directory each run (every script parsed and rewritten, V8 compiles the prepared text); ' +
      'warm: the directory an earlier run filled (prepared text and V8\'s code for it). Wall: from spawn to exit of the whole command (the tool\'s start and end included). ' +
      `Peak RSS: \`process.resourceUsage().maxRSS\` of the program's process at exit (a preload, bench/targets/max-rss.js), and of the tool's own process.`,
      '',
      table(['program', 'plain ms', 'run cold ms', 'run warm ms', 'plain RSS MB', 'cold RSS MB', 'warm RSS MB', 'tool RSS MB'], rows),
      '',
      differs.length ? `Output differed under preparation for: ${differs.join(', ')} (see test/corpus.test.ts).` : 'Every prepared run printed what the plain run printed and exited the same way.',
    ],
  };
}

const AGENT = path.join(ROOT, 'dist', 'src', 'agent', 'dormant.js');

/** Programs of the dormant start-up comparison: large ones first (typescript is 9 MB of script). */
const DORMANT_PROGRAMS: { name: string; file: string }[] = [
  { name: "require('typescript')", file: path.join(TARGETS, 'require-typescript.js') },
  { name: 'tsc-check.js', file: driverPath(CORPUS.find((p) => p.driver === 'tsc-check.js')!) },
  { name: 'esprima-run.js', file: path.join(ROOT, 'test', 'fixtures', 'esprima-run.js') },
  { name: 'marked-run.js', file: path.join(ROOT, 'test', 'fixtures', 'marked-run.js') },
  { name: 'prettier-format.js', file: driverPath(CORPUS.find((p) => p.driver === 'prettier-format.js')!) },
];

type DormantKind = 'plain' | 'cold' | 'warm' | 'plain+ncc' | 'warm+ncc';

/**
 * One run of `file` plainly or under the dormant agent (`--import dist/src/agent/dormant.js`):
 * cold = an empty prepared-code cache, warm = the cache filled by an earlier run;
 * "+ncc" = Node's own compile cache (NODE_COMPILE_CACHE) on too, filled by an earlier run.
 */
async function dormantOnce(file: string, kind: DormantKind, dirs: { warm: string; nccPlain: string; nccDormant: string }): Promise<{ ms: number; kb: number; r: Run }> {
  const rssDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-startup-'));
  const cold = kind === 'cold' ? fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-cold-cache-')) : '';
  try {
    const env: Record<string, string> = { PARANODE_BENCH_RSS: rssDir, PARANODE_CACHE_DIR: cold || dirs.warm };
    if (kind === 'plain+ncc') env.NODE_COMPILE_CACHE = dirs.nccPlain;
    if (kind === 'warm+ncc') env.NODE_COMPILE_CACHE = dirs.nccDormant;
    const args = ['-r', PRELOAD, ...(kind.startsWith('plain') ? [] : ['--import', AGENT]), file];
    const r = await run(process.execPath, args, { env });
    const kb = Number(fs.readFileSync(path.join(rssDir, String(r.pid)), 'utf8'));
    return { ms: r.ms, kb, r };
  } finally {
    fs.rmSync(rssDir, { recursive: true, force: true });
    if (cold) fs.rmSync(cold, { recursive: true, force: true });
  }
}

/** Start-up under the dormant agent against plain: cold and warm prepared-code cache, wall time and peak RSS. */
export async function benchStartupDormant(opts: BenchOptions & { runs?: number; corpus?: boolean }): Promise<Section> {
  const runs = opts.runs ?? 5;
  // --corpus: every program of the corpus (issue #17 asks for the ratio per corpus program), after require('typescript')
  const programs = opts.corpus ? [DORMANT_PROGRAMS[0], ...CORPUS.map((p) => ({ name: p.driver, file: driverPath(p) }))] : DORMANT_PROGRAMS;
  const kinds: DormantKind[] = ['plain', 'cold', 'warm', 'plain+ncc', 'warm+ncc'];
  const rows: string[][] = [];
  const differs: string[] = [];
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-startup-caches-'));
  const dirs = { warm: path.join(root, 'prepared'), nccPlain: path.join(root, 'ncc-plain'), nccDormant: path.join(root, 'ncc-dormant') };
  try {
    for (const p of programs) {
      progress(`startup (dormant): ${p.name}: ${runs} runs of each of ${kinds.join(', ')}, interleaved`);
      // fill the caches (and the file cache); the plain run's output is the reference
      const reference = (await dormantOnce(p.file, 'plain', dirs)).r;
      for (const k of ['warm', 'plain+ncc', 'warm+ncc'] as const) await dormantOnce(p.file, k, dirs);
      const got = new Map<DormantKind, { ms: number; kb: number }[]>(kinds.map((k) => [k, []]));
      for (let i = 0; i < runs; i++) {
        for (const k of kinds) {
          const { ms, kb, r } = await dormantOnce(p.file, k, dirs);
          if (r.status !== reference.status || r.stdout !== reference.stdout || r.stderr !== reference.stderr) differs.push(`${p.name} (${k})`);
          got.get(k)!.push({ ms, kb });
        }
      }
      const m = (k: DormantKind, f: 'ms' | 'kb') => median(got.get(k)!.map((x) => x[f]));
      rows.push([
        p.name, fmt(m('plain', 'ms'), 0),
        `${fmt(m('cold', 'ms'), 0)} (${ratio(m('cold', 'ms'), m('plain', 'ms'))})`,
        `${fmt(m('warm', 'ms'), 0)} (${ratio(m('warm', 'ms'), m('plain', 'ms'))})`,
        fmt(m('plain+ncc', 'ms'), 0),
        `${fmt(m('warm+ncc', 'ms'), 0)} (${ratio(m('warm+ncc', 'ms'), m('plain+ncc', 'ms'))})`,
        fmt(m('plain', 'kb') / 1024, 1),
        `${fmt(m('cold', 'kb') / 1024, 1)} (${ratio(m('cold', 'kb'), m('plain', 'kb'))})`,
        `${fmt(m('warm', 'kb') / 1024, 1)} (${ratio(m('warm', 'kb'), m('plain', 'kb'))})`,
      ]);
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  return {
    title: 'Start-up under the dormant agent, cold and warm prepared-code cache',
    body: [
      `\`node [--import dist/src/agent/dormant.js] <program>\`, ${runs} runs of each kind, interleaved (plain, cold, warm, plain+ncc, warm+ncc, plain, ...), ` +
      'after one run of each cached kind to fill its cache; medians, ratio to plain in parentheses. Cold: an empty prepared-code cache ' +
      '(PARANODE_CACHE_DIR a new directory each run: every script is parsed and rewritten). Warm: the cache filled by an earlier run (with V8\'s code for the prepared text, which the agent keeps there through Node\'s compile cache unless NODE_COMPILE_CACHE is set). ' +
      '+ncc: Node\'s own compile cache (NODE_COMPILE_CACHE, V8 code for what it compiled) on as well, filled earlier, ratio to plain with it. ' +
      'Wall: spawn to exit. RSS: peak, `process.resourceUsage().maxRSS` at exit (bench/targets/max-rss.js).',
      '',
      table(['program', 'plain ms', 'dormant cold ms', 'dormant warm ms', 'plain+ncc ms', 'dormant warm+ncc ms', 'plain RSS MB', 'cold RSS MB', 'warm RSS MB'], rows),
      '',
      differs.length ? `Output differed from the plain run: ${differs.join(', ')}.` : 'Every run printed what the plain run printed and exited the same way.',
    ],
  };
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const i = args.indexOf('--runs');
  const runs = i >= 0 ? Number(args[i + 1]) : undefined;
  const only = args.filter((a, j) => !a.startsWith('--') && (i < 0 || j !== i + 1));
  (args.includes('--dormant') ? benchStartupDormant({ quick, runs, corpus: args.includes('--corpus') }) : benchStartup({ quick, runs, only })).then((s) => {
    process.stdout.write(`## ${s.title}\n\n${s.body.join('\n')}\n`);
  }).catch((e) => { process.stderr.write(`${e?.stack ?? e}\n`); process.exit(1); });
}
