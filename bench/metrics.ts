// 7. Metrics (issue #3): the time to enable a metric for one function and for
// every function of a large program, and the overhead of procedure_calls and
// cpu on a real workload next to V8's own sampling CPU profiler, all against
// the plain run of the same benchmark.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Session } from '../src/api';
import { MetricManager } from '../src/metrics/manager';
import { BenchOptions, fmt, median, Proc, progress, Section, table, TARGETS, timeMs } from './lib';

/** Launch big.js <lib> under paranode (every module prepared at load) and time enabling metrics. */
async function enableTimes(lib: string): Promise<string[][]> {
  const s = await Session.launch([process.execPath, 'big.js', lib], [], { stdio: 'pipe', cwd: TARGETS });
  const p = new Proc(s.child!, `big.js ${lib}`);
  await p.waitFor(/ready/, 0);
  const mm = new MetricManager([s]);
  const script = lib === 'esprima' ? 'esprima/dist/esprima.js' : 'typescript/lib/typescript.js';
  const functions = (await s.resources(`/Code/**/${script}/*`)).length;
  const want = lib === 'esprima' ? 'Parser.prototype.parsePrimaryExpression' : 'createSourceFile';
  const one = (await s.resources(`/Code/**/${script}/${want}*`))[0]?.path;
  if (!one) throw new Error(`no function ${want} in ${script}`);
  const rows: string[][] = [];
  const time = async (what: string, fn: () => Promise<unknown>, check: () => string) => {
    const t0 = timeMs();
    await fn();
    const ms = timeMs() - t0;
    rows.push([lib, what, fmt(ms, 1), check()]);
  };
  let n = 0;
  const short = one.slice(one.lastIndexOf('/') + 1);
  await time(`\`procedure_calls@/Code/…/${short}\` (one function)`, () => mm.enable('procedure_calls', one), () => '1 instance');
  await time(`\`cpu@/Code/…/${short}\` (one function)`, () => mm.enable('cpu', one), () => '1 instance');
  await time(`\`procedure_calls@/Code/**/${path.basename(script)}/*\` (every function, one vectorized placement)`,
    async () => { n = (await mm.enableAll('procedure_calls', `/Code/**/${script}/*`)).length; }, () => `${n} instances of ${functions} functions`);
  await time(`\`cpu@/Code/**/${path.basename(script)}/*\` (every function, vectorized timers)`,
    async () => { n = (await mm.enableAll('cpu', `/Code/**/${script}/*`)).length; }, () => `${n} instances`);
  if (lib === 'esprima') {
    // without vectorization: the flag constraint of msgs needs one request per function
    await time(`\`msgs@/Code/**/${path.basename(script)}/*\` (every function, one request and one flag each)`,
      async () => { n = (await mm.enableAll('msgs', `/Code/**/${script}/*`)).length; }, () => `${n} instances`);
  }
  p.send('exit');
  await s.waitForExit().catch(() => undefined);
  return rows;
}

type Kind = 'plain' | 'v8prof' | 'calls' | 'callsPerFn' | 'cpu' | 'cpuPerFn';
const KINDS: Kind[] = ['plain', 'v8prof', 'calls', 'callsPerFn', 'cpu', 'cpuPerFn'];
const LABEL: Record<Kind, string> = {
  plain: 'plain (baseline)',
  v8prof: "V8's sampling CPU profiler (`node --cpu-prof`, 1 ms interval)",
  calls: '`procedure_calls` (whole program: one counter at every entry)',
  callsPerFn: '`procedure_calls@/Code/**` (a counter per function)',
  cpu: '`cpu` (whole program: the threads\' CPU clocks, nothing inserted)',
  cpuPerFn: '`cpu@/Code/**` (a CPU timer per function, stopped around every call)',
};

/** One run of work.js: the median ms per repetition as the program timed it. */
async function workRun(kind: Kind, lib: string, reps: number): Promise<number> {
  const args = ['work.js', lib, String(reps)];
  const parse = (out: string) => Number(/work (\S+)/.exec(out)?.[1]);
  if (kind === 'plain' || kind === 'v8prof') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-prof-'));
    const p = Proc.spawn(args[0], args.slice(1), TARGETS, kind === 'v8prof' ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []);
    const m = await p.waitFor(/work \S+ \S+ \S+\n/, 0);
    await p.exited;
    if (kind === 'v8prof' && !fs.readdirSync(dir).some((f) => f.endsWith('.cpuprofile'))) throw new Error('node --cpu-prof wrote no profile');
    fs.rmSync(dir, { recursive: true, force: true });
    return parse(m[0]);
  }
  const metric = kind.startsWith('calls') ? 'procedure_calls' : 'cpu';
  const focus = kind.endsWith('PerFn') ? '/Code/**' : '';
  const { session } = await MetricManager.launch([process.execPath, ...args], [{ metric, focus }], { stdio: 'pipe', cwd: TARGETS });
  const p = new Proc(session.child!, `work.js under ${kind}`);
  session.child!.stdin!.end();
  const m = await p.waitFor(/work \S+ \S+ \S+\n/, 0);
  await session.waitForExit();
  return parse(m[0]);
}

export async function benchMetrics(opts: BenchOptions): Promise<Section> {
  const body: string[] = [];
  const enableRows: string[][] = [];
  for (const lib of opts.quick ? ['esprima'] : ['esprima', 'typescript']) {
    progress(`metrics: enabling on ${lib}`);
    enableRows.push(...await enableTimes(lib));
  }
  body.push('**Enabling**: the target (`bench/targets/big.js <lib>`) runs under `Session.launch`, so its modules were prepared at load; ' +
    'each request is timed in the tool, from `enable`/`enableAll` to its promise resolving (a glob request includes one sample, to list its instances).', '',
    table(['library', 'request', 'tool ms', 'instances'], enableRows), '');

  const runs = opts.quick ? 2 : 3;
  const reps = opts.quick ? 4 : 8;
  const lib = 'esprima';
  const got: Record<Kind, number[]> = { plain: [], v8prof: [], calls: [], callsPerFn: [], cpu: [], cpuPerFn: [] };
  for (let r = 0; r < runs; r++) {
    // the kinds take turns; the order rotates every run
    const order = KINDS.map((_k, i) => KINDS[(i + r) % KINDS.length]);
    for (const k of order) {
      progress(`metrics: overhead run ${r + 1}/${runs}: ${k}`);
      got[k].push(await workRun(k, lib, reps));
    }
  }
  const base = median(got.plain);
  const rows = KINDS.map((k) => [LABEL[k], `${fmt(median(got[k]), 1)} (${fmt(Math.min(...got[k]), 1)}-${fmt(Math.max(...got[k]), 1)})`, k === 'plain' ? '1.00' : fmt(median(got[k]) / base, 2)]);
  body.push(`**Overhead on a real workload**: \`bench/targets/work.js ${lib} ${reps}\` (${reps} × parse esprima.js, 283 KB, with ranges, locations, tokens and comments, ` +
    `after 5 untimed warm-up parses), timed inside the program; ${runs} runs of each kind, the kinds taking turns. The metrics are on from the first line ` +
    '(`MetricManager.launch`). ms per parse: median over the runs of each run\'s median (min-max); ratio to plain.', '',
    table(['kind', 'ms per parse', '× plain'], rows));
  return { title: '7. Metrics: enabling, and overhead next to V8\'s sampling profiler', body };
}
