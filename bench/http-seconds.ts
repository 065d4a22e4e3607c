// The loaded server second by second (issue #15): bench/targets/http-server.js and a
// twin of the same Node and mode share a core, each under its own 10-connection load
// for 70 s; at the 8th second `paranode diagnose --max-overhead 5% --duration 30
// attach <server>` starts (or nothing: `--tool none`, the host's own drift). Each
// second's requests of the server over its twin's, divided by the same ratio's mean
// over seconds 1-7 (before the tool), then the mean over repetitions: where in the
// session the server loses its requests (the attach, the sampler's first seconds, the
// search, the tool's end, the seconds after it). bench/http.ts gives the totals.
// `npm run bench -- --only http-seconds`, or: node dist/bench/http-seconds.js [--nodes 24] [--modes unprepared,prepared] [--reps 3] [--tool diagnose|none]
import { execFileSync, spawn } from 'child_process';
import { BenchOptions, fmt, median, progress, Section, table } from './lib';
import { AGENT, CLI, load, startServer } from './http';

const SECONDS = 70;
const TOOL_AT = 8;
const TOOL_SECONDS = 30;
/** the stretches of the load summed up (seconds, from-to) */
const STRETCHES: [number, number][] = [[TOOL_AT, 10], [10, 20], [20, TOOL_AT + TOOL_SECONDS], [TOOL_AT + TOOL_SECONDS, 50], [50, SECONDS - 1]];

async function run(v: string, mode: 'unprepared' | 'prepared', tool: 'diagnose' | 'none'): Promise<{ seconds: number[]; exitedAt: number }> {
  const nodeArgs = mode === 'prepared' ? ['--import', AGENT] : [];
  const server = startServer(v, nodeArgs, process.env, 1), twin = startServer(v, nodeArgs, process.env, 1);
  try {
    const [port, tport] = await Promise.all([server, twin].map(async (p) => Number((await p.waitFor(/listening (\d+)/))[1])));
    await Promise.all([load(port, 3), load(tport, 3)]);
    const t0 = performance.now();
    let exitedAt = NaN;
    const toolDone = new Promise<void>((resolve) => {
      if (tool === 'none') { resolve(); return; }
      setTimeout(() => {
        const t = spawn(process.execPath, [CLI, 'diagnose', '-q', '--max-overhead', '5%', '--duration', String(TOOL_SECONDS), 'attach', String(server.pid)], { stdio: 'ignore' });
        t.once('close', () => { exitedAt = (performance.now() - t0) / 1000; resolve(); });
      }, TOOL_AT * 1000);
    });
    const [a, b] = await Promise.all([load(port, SECONDS), load(tport, SECONDS)]);
    await toolDone;
    const ratio = a.perSecond.map((x, i) => x / b.perSecond[i]);
    const base = ratio.slice(1, TOOL_AT).reduce((x, y) => x + y, 0) / (TOOL_AT - 1);
    return { seconds: ratio.map((x) => x / base), exitedAt };
  } finally {
    for (const p of [server, twin]) p.child.kill('SIGTERM');
    await Promise.all([server.exited, twin.exited]);
  }
}

export async function benchHttpSeconds(opts: BenchOptions & { nodes?: string[]; modes?: ('unprepared' | 'prepared')[]; reps?: number; tool?: 'diagnose' | 'none' }): Promise<Section> {
  const nodes = opts.nodes ?? ['24'], modes = opts.modes ?? ['unprepared', 'prepared'], reps = opts.reps ?? (opts.quick ? 1 : 3), tool = opts.tool ?? 'diagnose';
  // the load generators and paranode on core 0, the server and its twin on core 1 (as bench/http.ts)
  execFileSync('taskset', ['-a', '-cp', '0', String(process.pid)], { stdio: 'ignore' });
  const body: string[] = [];
  const summary: string[][] = [];
  for (const v of nodes) {
    for (const mode of modes) {
      const runs: { seconds: number[]; exitedAt: number }[] = [];
      for (let r = 1; r <= reps; r++) {
        progress(`http-seconds: Node ${v}, ${mode}, ${tool === 'none' ? 'no tool' : 'diagnose'}, repetition ${r} of ${reps}`);
        runs.push(await run(v, mode, tool));
      }
      const mean = Array.from({ length: SECONDS }, (_, i) => runs.reduce((s, x) => s + (x.seconds[i] ?? NaN), 0) / runs.length);
      const rows: string[][] = [];
      for (let i = 0; i < SECONDS; i += 10) rows.push([String(i), ...Array.from({ length: 10 }, (_, j) => (i + j < SECONDS ? fmt(mean[i + j], 2) : ''))]);
      body.push(`Node ${v}, ${mode}, ${tool === 'none' ? 'no tool' : `diagnose from the ${TOOL_AT}th second, ended at ${runs.map((x) => fmt(x.exitedAt, 1)).join(' / ')} s`} (${reps} runs): each second's requests over the twin's, over the same before the tool, the mean of the runs`, '',
        table(['s', ...Array.from({ length: 10 }, (_, j) => `+${j}`)], rows), '');
      const seg = ([from, to]: [number, number]) => mean.slice(from, to).reduce((s, x) => s + x, 0) / (to - from);
      summary.push([v, mode, ...STRETCHES.map((s) => fmt(seg(s), 3)), fmt(median(runs.map((x) => x.exitedAt)), 1)]);
    }
  }
  body.push(table(['Node', 'server', ...STRETCHES.map(([a, b]) => `${a}-${b} s`), 'tool ended (s, median)'], summary));
  return { title: `The loaded server second by second: ${tool === 'none' ? 'no tool' : `diagnose attached at the ${TOOL_AT}th second`}`, body };
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const value = (flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
  const tool = value('--tool');
  if (tool !== undefined && tool !== 'diagnose' && tool !== 'none') {
    process.stderr.write(`http-seconds: --tool ${tool}: expected diagnose or none\n`);
    process.exit(2);
  }
  benchHttpSeconds({
    quick: args.includes('--quick'), nodes: value('--nodes')?.split(','), modes: value('--modes')?.split(',') as ('unprepared' | 'prepared')[] | undefined,
    reps: value('--reps') ? Number(value('--reps')) : undefined, tool: value('--tool') as 'diagnose' | 'none' | undefined,
  })
    .then((s) => process.stdout.write(`## ${s.title}\n\n${s.body.join('\n')}\n`))
    .catch((e) => { process.stderr.write(`${e.stack ?? e}\n`); process.exit(1); });
}
