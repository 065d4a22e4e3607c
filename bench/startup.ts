// Start-up cost of `paranode run` on the corpus of real npm programs
// (test/corpus): for each program, wall time and peak RSS of a plain run
// against a run under `paranode run -q` with no probe (every script the
// program loads is prepared at load: slots everywhere, all off). Runs are
// interleaved (plain, prepared, plain, ...) and the median of each is taken.
// `npm run bench -- --only startup`, or standalone: node dist/bench/startup.js [--quick] [--runs n] [driver ...]
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { CORPUS, CorpusProgram, driverPath, run, Run } from '../test/support/corpus';
import { BenchOptions, fmt, median, progress, ratio, ROOT, Section, table, TARGETS } from './lib';

const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
const PRELOAD = path.join(TARGETS, 'max-rss.js');

interface Sample { ms: number; targetKb: number; toolKb: number; same: boolean }

/** One run: the target's peak RSS (and the tool's, when there is one) from the max-rss preload. */
async function once(p: CorpusProgram, prepared: boolean, plain?: Run): Promise<{ sample: Sample; r: Run }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-startup-'));
  try {
    const target = [process.execPath, '-r', PRELOAD, driverPath(p)];
    const env = { PARANODE_BENCH_RSS: dir };
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
  }
}

export async function benchStartup(opts: BenchOptions & { runs?: number; only?: string[] }): Promise<Section> {
  const runs = opts.runs ?? (opts.quick ? 3 : 5);
  const programs = CORPUS.filter((p) => !opts.only?.length || opts.only.includes(p.driver));
  const rows: string[][] = [];
  const differs: string[] = [];
  for (const p of programs) {
    progress(`startup: ${p.driver} (${runs} plain and ${runs} prepared runs, interleaved)`);
    const plain: Sample[] = [];
    const prep: Sample[] = [];
    // one warm-up of each (file cache), not counted; the plain one is the reference output
    const reference = (await once(p, false)).r;
    await once(p, true);
    for (let i = 0; i < runs; i++) {
      plain.push((await once(p, false, reference)).sample);
      prep.push((await once(p, true, reference)).sample);
    }
    const m = (xs: Sample[], k: keyof Sample) => median(xs.map((s) => Number(s[k])));
    const same = prep.every((s) => s.same);
    if (!same) differs.push(p.driver);
    rows.push([
      p.driver, fmt(m(plain, 'ms'), 0), fmt(m(prep, 'ms'), 0), ratio(m(prep, 'ms'), m(plain, 'ms')),
      fmt(m(plain, 'targetKb') / 1024, 1), fmt(m(prep, 'targetKb') / 1024, 1), ratio(m(prep, 'targetKb'), m(plain, 'targetKb')),
      fmt(m(prep, 'toolKb') / 1024, 1), same ? 'yes' : '**no**',
    ]);
  }
  return {
    title: 'Start-up: the corpus of npm programs, plain and under `paranode run` (prepared, no probe)',
    body: [
      `Each program of test/corpus run to its end: \`node <driver>\` against \`node dist/src/cli/main.js run -q -- node <driver>\`, ` +
      `${runs} runs each, interleaved, after one warm-up of each; medians. Wall: from spawn to exit of the whole command. ` +
      `Peak RSS: \`process.resourceUsage().maxRSS\` of the program's process at exit (a preload, bench/targets/max-rss.js), and of the tool's own process. ` +
      `"same output": the prepared run printed exactly what the plain run printed and exited the same way; where not, the prepared run did ` +
      `different work (it failed early, say) and its ratio does not measure preparation.`,
      '',
      table(['program', 'plain ms', 'prepared ms', 'wall ×', 'plain RSS MB', 'prepared RSS MB', 'RSS ×', 'tool RSS MB', 'same output'], rows),
      '',
      differs.length ? `Output differed under preparation for: ${differs.join(', ')} (see test/corpus.test.ts).` : 'Every prepared run printed what the plain run printed.',
    ],
  };
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const i = args.indexOf('--runs');
  const runs = i >= 0 ? Number(args[i + 1]) : undefined;
  const only = args.filter((a, j) => !a.startsWith('--') && (i < 0 || j !== i + 1));
  benchStartup({ quick, runs, only }).then((s) => {
    process.stdout.write(`## ${s.title}\n\n${s.body.join('\n')}\n`);
  }).catch((e) => { process.stderr.write(`${e?.stack ?? e}\n`); process.exit(1); });
}
