// Real applications under `paranode diagnose` against V8's sampling profiler
// (issue #12): a compiler (the TypeScript compiler type-checking and emitting
// a real project), a formatter (prettier on a 283 KB file) and an HTTP server
// built from npm libraries under load (bench/targets/http-server.js). Each
// run: the program once with --cpu-prof (V8's top self-time functions), once
// under `paranode diagnose` (launched; the server attached under load). Do
// V8's top three appear in paranode's report (its bottlenecks or its hottest
// functions), and how soon is the first function named?
// `npm run bench -- --only real-apps`, or: node dist/bench/real-apps.js [--quick] [--runs 3] [--node 24]
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { load, nodeBin, startServer, topSelf, type ProfileTop } from './http';
import { BenchOptions, firstFunctionSeconds, fmt, progress, ROOT, Section, table, TARGETS } from './lib';
import { HOTTEST, HOTTEST_PATHS, HOTTEST_TIED } from '../src/consultant/report';

const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');

interface App { name: string; what: string; script?: string }
const APPS: App[] = [
  { name: 'typecheck', what: "the TypeScript compiler checks and emits paranode's src/ (70 files) again and again", script: 'app-typecheck.js' },
  { name: 'format', what: 'prettier formats esprima.js (283 KB) again and again', script: 'app-format.js' },
  { name: 'http', what: 'Fastify server (marked, sanitize-html, Handlebars) under 10 connections on loopback, diagnose attached' },
];

interface Report { named: string[]; hottest: string[]; hottestNode: string[]; onPaths: string[]; firstFunction: number | null; complete: number | null; fate: string | null; exit: number | null }

function run(bin: string, args: string[], cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const c = spawn(bin, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
    c.stderr!.setEncoding('utf8').on('data', (d: string) => { out += d; });
    c.once('close', (code) => resolve({ code, out }));
  });
}

function readReport(json: string, exit: number | null): Report {
  const d = fs.existsSync(json) ? JSON.parse(fs.readFileSync(json, 'utf8')) : null;
  return {
    named: (d?.bottlenecks ?? []).map((b: any) => `${b.hypothesis} ${b.focus}`),
    hottest: (d?.hottest ?? []).filter((h: any) => h.thread === 'main' && !h.node).map((h: any) => h.function as string),
    hottestNode: (d?.hottest ?? []).filter((h: any) => h.thread === 'main' && h.node).map((h: any) => h.function as string),
    // the callers on the paths the report gives its bottlenecks and the main thread's hottest functions
    onPaths: [...(d?.bottlenecks ?? []), ...(d?.hottest ?? []).filter((h: any) => h.thread === 'main')]
      // (a loop's or call site's path ends in its function, then it: neither is a caller)
      .flatMap((x: any) => (x.paths ?? []).flatMap((p: any) => (p.functions as string[]).slice(0, p.functions[p.functions.length - 1].includes('/') ? -1 : -2))),
    firstFunction: firstFunctionSeconds(d?.searchHistory ?? []),
    complete: d?.searchSeconds ?? null, fate: d?.targetFate ?? null, exit,
  };
}

const stem = (file: string) => file.replace(/\.[cm]?[jt]sx?$/, '');

/** V8's "<function> <file>" against paranode's "<module>/<function>" (a method by its own name). */
function found(top: ProfileTop, r: Report): 'bottleneck' | 'hottest' | 'hottest, tied' | "hottest of Node's code" | 'a caller on a path' | null {
  const [fn, file] = top.name.split(' ');
  const short = fn.slice(fn.lastIndexOf('.') + 1).replace('(anonymous)', '<anonymous>');
  const base = file.slice(file.lastIndexOf('/') + 1);
  const is = (full: string) => {
    // a second anonymous function on a line has its column too: samples give lines; a named
    // function is listed with its start line where the module has two of its name (parse@12)
    const name = full.replace(/(<anonymous>@\d+):\d+$/, '$1').replace(/(\/(?!<anonymous>)[^/]*)@\d+$/, '$1');
    // a source-mapped file by its source (V8 names Tokenizer.js what paranode names by its map, src/Tokenizer.ts)
    const module = name.slice(0, -short.length - 1);
    return name.endsWith(`/${short}`) && (module.endsWith(base) || stem(module.slice(module.lastIndexOf('/') + 1)) === stem(base));
  };
  if (r.named.some((n) => is(n.split(' ')[1].replace(/^\/Code\//, '')))) return 'bottleneck';
  const at = r.hottest.findIndex(is);
  if (at >= 0) return at < HOTTEST ? 'hottest' : 'hottest, tied';
  if (r.hottestNode.some(is)) return "hottest of Node's code";
  if (r.onPaths.some(is)) return 'a caller on a path';
  return null;
}

async function v8Top(bin: string, v: string, app: App, seconds: number): Promise<ProfileTop[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-apps-prof-'));
  try {
    if (app.script) {
      await run(bin, ['--cpu-prof', '--cpu-prof-dir', dir, app.script, String(seconds)], TARGETS);
    } else {
      const s = startServer(v, ['--cpu-prof', '--cpu-prof-dir', dir]);
      await load(Number((await s.waitFor(/listening (\d+)/))[1]), 2);
      await load(Number(/listening (\d+)/.exec(s.out)![1]), seconds);
      s.child.kill('SIGTERM');
      await s.exited;
    }
    const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    return file ? topSelf(path.join(dir, file), 3).top : [];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** How the search is controlled (the cost paper's Figure 4): the default limit, three tests at a time, none. */
const CONTROLS: [string, string[]][] = [['3 tests at once', ['--max-overhead', 'none', '--max-tests', '3']], ['unlimited', ['--max-overhead', 'none']]];

async function diagnosed(bin: string, v: string, app: App, seconds: number, control: string[] = []): Promise<Report> {
  const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-apps-')), 'd.json');
  if (app.script) {
    // the program runs longer than the search may take; --stop ends it once the diagnosis is done
    const r = await run(bin, [CLI, 'diagnose', '-q', '--stop', '--duration', String(seconds), ...control, '--json', json, '--', bin, app.script, String(seconds * 3)], TARGETS);
    return readReport(json, r.code);
  }
  const s = startServer(v, []);
  const port = Number((await s.waitFor(/listening (\d+)/))[1]);
  await load(port, 2);
  const loading = load(port, seconds + 5);
  const r = await run(bin, [CLI, 'diagnose', '-q', '--duration', String(seconds), ...control, '--json', json, 'attach', String(s.pid)], TARGETS);
  await loading;
  s.child.kill('SIGTERM');
  await s.exited;
  return readReport(json, r.code);
}

export async function benchRealApps(opts: BenchOptions & { runs?: number; node?: string }): Promise<Section> {
  const v = opts.node ?? '24';
  const bin = nodeBin(v);
  const runs = opts.runs ?? (opts.quick ? 1 : 3);
  const seconds = opts.quick ? 15 : 30;
  const rows: string[][] = [];
  const summary: string[][] = [];
  const controls: string[][] = [];
  // the start-up cache of this bench alone (the programs and paranode inherit it), filled for a
  // launched program by one short run first: every diagnose starts it warm, as a user's second run
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-apps-cache-'));
  process.env.PARANODE_CACHE_DIR = cache;
  const only = process.env.PARANODE_APPS?.split(',');
  for (const app of APPS.filter((a) => !only || only.includes(a.name))) {
    let all = 0, allHot = 0, firsts: number[] = [];
    const reports: Report[] = [];
    if (app.script) await run(bin, [CLI, 'run', '-q', '--', bin, app.script, '1'], TARGETS);
    for (let i = 1; i <= runs; i++) {
      progress(`real-apps: ${app.name}, run ${i} of ${runs}: V8's profile, then diagnose (${seconds} s each)`);
      const top = await v8Top(bin, v, app, seconds);
      const r = await diagnosed(bin, v, app, seconds);
      reports.push(r);
      const marks = top.map((t) => `${t.name} ${fmt(100 * t.share, 1)} %: ${found(t, r) ?? '**missing**'}`);
      const every = top.length === 3 && top.every((t) => found(t, r));
      if (every) all++;
      if (every && top.every((t) => found(t, r) !== 'a caller on a path')) allHot++;
      if (r.firstFunction !== null) firsts.push(r.firstFunction);
      rows.push([app.name, String(i), marks.join('; ') || '(no profile)', r.named.slice(0, 4).join('; ') || '(nothing)', r.hottest.join('; ') || '(no stack samples)', r.hottestNode.slice(0, 3).join('; ') || '–',
        r.firstFunction === null ? '–' : fmt(r.firstFunction, 1), r.complete === null ? 'not complete' : fmt(r.complete, 1), r.fate ?? `exit ${r.exit}`]);
    }
    firsts = firsts.sort((a, b) => a - b);
    const range = (xs: (number | null)[]) => {
      const ok = xs.filter((x): x is number => x !== null).sort((a, b) => a - b);
      return `${ok.length ? `${fmt(ok[0], 1)}${ok.length > 1 ? `-${fmt(ok[ok.length - 1], 1)}` : ''} s` : '–'}${ok.length < xs.length ? ` (${xs.length - ok.length} of ${xs.length} none)` : ''}`;
    };
    controls.push([app.name, `--max-overhead 5% (the ${runs} runs above)`, range(reports.map((r) => r.firstFunction)), range(reports.map((r) => r.complete))]);
    if (!opts.quick) {
      for (const [name, args] of CONTROLS) {
        progress(`real-apps: ${app.name}, diagnose with ${name} (${args.join(' ')}), ${seconds} s`);
        const r = await diagnosed(bin, v, app, seconds, args);
        controls.push([app.name, `${name} (\`${args.join(' ')}\`)`, range([r.firstFunction]), range([r.complete])]);
      }
    }
    summary.push([app.name, app.what, `${allHot} of ${runs}`, `${all} of ${runs}`, firsts.length ? `${fmt(firsts[0], 1)}-${fmt(firsts[firsts.length - 1], 1)} s` : '–']);
  }
  fs.rmSync(cache, { recursive: true, force: true });
  return {
    title: '23. Real applications: what diagnose names against V8\'s sampling profiler (issue #12)',
    body: [
      `Node ${v} (\`node_modules/node${v}\`) runs the programs and paranode, ${os.cpus().length} shared cores. Per run: the program alone with \`--cpu-prof\` for ${seconds} s (V8's top three functions by self time, GC and idle left out), then \`paranode diagnose -q --duration ${seconds}\` (the compiler and the formatter launched, \`--stop\` at the end, their start-up cache filled by one short \`paranode run\` before the first; the server attached under the same load). "bottleneck": the function is among the bottlenecks; "hottest": among the main thread's ${HOTTEST} hottest functions by self time (from V8's stack samples, reported whatever the thresholds); "hottest, tied": listed after them, as tied with the ${HOTTEST}th (fewer samples by at most one standard error of the difference, up to ${HOTTEST_TIED} listed); "hottest of Node's code": among its ${HOTTEST} hottest functions of Node's own code by self time (a native such as \`writeUtf8String\` as \`(native)/writeUtf8String\`); "a caller on a path": only as a caller on one of the paths of calls the report gives a bottleneck or one of the main thread's ${HOTTEST_PATHS} hottest functions (from the stack samples). \`PARANODE_APPS=format,…\` runs only those. First function: when the first test of a function (not a module) that held ended (s since the search started).`,
      '',
      table(['program', 'what', "V8's top 3 all in the report as hot functions", "… or as a caller on a reported path", 'first function named'], summary),
      '',
      table(['program', 'run', "V8's top 3 (share of samples): where in paranode's report", 'diagnose named (first four)', 'hottest (main thread)', "hottest of Node's code (first three)", 'first function, s', 'search complete, s', 'program'], rows),
      '',
      `Search times by how the search is controlled (the cost paper's Figure 4): the runs above under the default limit, then one run each with three tests at a time and no limit${opts.quick ? ' (not run with --quick)' : ''}; "none": no function named, or the search not complete, within the ${seconds} s.`,
      '',
      table(['program', 'control', 'first function named', 'search complete'], controls),
    ],
  };
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const num = (f: string) => { const i = args.indexOf(f); return i >= 0 ? args[i + 1] : undefined; };
  benchRealApps({ quick: args.includes('--quick'), runs: num('--runs') ? Number(num('--runs')) : undefined, node: num('--node') })
    .then((s) => { process.stdout.write(`### ${s.title}\n\n${s.body.join('\n')}\n`); })
    .catch((e) => { console.error(e); process.exit(1); });
}
