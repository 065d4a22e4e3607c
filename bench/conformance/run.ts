// paranode's test262 conformance runner: every test of test/language run
// three ways in one process — the original text, the text prepared by
// paranode with every slot off, and prepared with a counting handler at every
// point — and the rewritten runs compared against the original.
//   npm run conformance -- <test262 dir> [--filter s] [--jobs N] [--limit N] [--json file]
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vm from 'vm';
import { findTests, locateSuite, makeFilter, UsageError } from './discover';
import { runPool, type TestResult } from './pool';
import { Tally } from './tally';
import { printReport, writeJson } from './report';

interface Options {
  dir: string;
  filter?: string;
  json?: string;
  jobs: number;
  limit?: number;
  asyncTimeoutMs: number;
  hangMs: number;
  examples: number;
}

const USAGE = `usage: npm run conformance -- <test262 dir> [options]
  <test262 dir>      a test262 checkout (harness/ and test/language/)
  --filter <s>       only tests whose path contains s, or matches s if it has * or ? (** crosses /)
  --jobs <n>         worker processes (default: ${Math.min(2, os.availableParallelism?.() ?? os.cpus().length)})
  --limit <n>        only the first n tests (after the filter)
  --json <file>      write every failing run (and the counts) as JSON
  --timeout <ms>     how long an async test may take to call $DONE (default 5000)
  --hang <ms>        a worker silent this long is killed, its run a timeout (default 20000)
  --examples <n>     examples shown per failure class (default 3)`;

function parseArgs(argv: string[]): Options {
  const o: Partial<Options> = { jobs: Math.min(2, os.availableParallelism?.() ?? os.cpus().length), asyncTimeoutMs: 5000, hangMs: 20000, examples: 3 };
  const num = (flag: string, v: string | undefined): number => {
    const n = Number(v);
    if (v === undefined || !Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} needs a positive whole number, got ${v === undefined ? 'nothing' : `'${v}'`}`);
    return n;
  };
  const val = (flag: string, v: string | undefined): string => {
    if (v === undefined || v.startsWith('--')) throw new UsageError(`${flag} needs a value`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case '--filter': o.filter = val(a, argv[++i]); break;
      case '--json': o.json = val(a, argv[++i]); break;
      case '--jobs': o.jobs = num(a, argv[++i]); break;
      case '--limit': o.limit = num(a, argv[++i]); break;
      case '--timeout': o.asyncTimeoutMs = num(a, argv[++i]); break;
      case '--hang': o.hangMs = num(a, argv[++i]); break;
      case '--examples': o.examples = num(a, argv[++i]); break;
      case '-h': case '--help': console.log(USAGE); process.exit(0); break;
      default:
        if (a.startsWith('-')) throw new UsageError(`unknown option ${a}`);
        if (o.dir) throw new UsageError(`one test262 directory, got '${o.dir}' and '${a}'`);
        o.dir = a;
    }
  }
  if (!o.dir) throw new UsageError('no test262 directory given');
  if (o.hangMs! <= o.asyncTimeoutMs!) o.hangMs = o.asyncTimeoutMs! + 5000;
  return o as Options;
}

async function main(): Promise<void> {
  if (!(vm as any).constants?.DONT_CONTEXTIFY) {
    console.error(`conformance: Node ${process.version} is not a supported runtime (vm.constants.DONT_CONTEXTIFY is missing); ` +
      `run it with node_modules/node22, node24 or node26, e.g. node_modules/node24/bin/node dist/bench/conformance/run.js <test262 dir>`);
    process.exit(2);
  }
  let opts: Options;
  let suite: ReturnType<typeof locateSuite>;
  try {
    opts = parseArgs(process.argv.slice(2));
    suite = locateSuite(opts.dir);
  } catch (e) {
    if (e instanceof UsageError) { console.error(`conformance: ${e.message}\n\n${USAGE}`); process.exit(2); }
    throw e;
  }
  let tests = findTests(suite).filter(makeFilter(opts.filter));
  if (opts.limit) tests = tests.slice(0, opts.limit);
  if (!tests.length) { console.error(`conformance: no test under ${suite.languageDir} matches${opts.filter ? ` '${opts.filter}'` : ''}`); process.exit(2); }

  const tally = new Tally();
  const t0 = Date.now();
  const tty = process.stderr.isTTY;
  let lastShown = 0;
  const progress = (force = false): void => {
    const now = Date.now();
    if (!force && now - lastShown < (tty ? 250 : 10000)) return;
    lastShown = now;
    const s = (now - t0) / 1000;
    const eta = tally.tests ? Math.round(s / tally.tests * (tests.length - tally.tests)) : 0;
    const line = `conformance: ${tally.tests}/${tests.length} tests, ${tally.originalRuns} runs, ` +
      `${tally.variantFailures('slots-off')} slots-off / ${tally.variantFailures('slots-on')} slots-on failures, ${Math.round(s)} s` + (tally.tests < tests.length ? `, ~${eta} s left` : '');
    process.stderr.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
  };
  console.error(`conformance: ${tests.length} tests from ${suite.languageDir}, ${opts.jobs} worker process${opts.jobs > 1 ? 'es' : ''}, Node ${process.version}`);
  await runPool(tests, {
    jobs: opts.jobs, root: suite.root, harnessDir: suite.harnessDir, asyncTimeoutMs: opts.asyncTimeoutMs, hangMs: opts.hangMs, recycleAfter: 2000,
    onTest: (r: TestResult) => { tally.add(r); progress(); },
  });
  progress(true);
  if (tty) process.stderr.write('\n');
  const elapsedMs = Date.now() - t0;
  const info = { root: suite.root, commit: suiteCommit(suite.root), node: process.version, v8: process.versions.v8, jobs: opts.jobs, filter: opts.filter ?? null, limit: opts.limit ?? null, elapsedMs };
  printReport(tally, info, opts.examples);
  if (opts.json) {
    writeJson(opts.json, tally, info);
    console.log(`\nJSON: ${path.resolve(opts.json)}`);
  }
}

/** The test262 commit, when the directory is a git checkout (an extracted archive has none). */
function suiteCommit(root: string): string | null {
  try {
    const head = fs.readFileSync(path.join(root, '.git', 'HEAD'), 'utf8').trim();
    if (!head.startsWith('ref: ')) return head;
    return fs.readFileSync(path.join(root, '.git', head.slice(5)), 'utf8').trim();
  } catch {
    return null;
  }
}

main().catch((e) => { console.error(e?.stack ?? String(e)); process.exit(1); });
