// A whole-program glob on a loaded server (issue #15 item 6): `paranode attach
// <pid> -e 'cpu@/Code/**' -d <D>` on bench/targets/http-server.js (Fastify,
// marked, sanitize-html, Handlebars: some 5,500 functions in 440 scripts) under
// the 10-connection load of the http section, on each supported Node, started
// plainly (every script LiveEdited, or reached by breakpoints where V8 has no
// LiveEdit) and with the dormant agent (slots switched on). Per run: when the
// request was in place (its "metric request(s) on" line) or how far it got
// (the "stopped preparing scripts ... after k of n" note), the command's whole
// time against --duration, the functions measured and their exclusive CPU
// times summed against the time (one thread cannot use more than 1 CPU s/s),
// the throughput during against a plain window of the same process just before.
// `npm run bench -- --only whole-app`, or: node dist/bench/whole-app.js [--quick] [--nodes 24] [--modes 'prepared;unprepared, --max-overhead 5%']
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { AGENT, CLI, load, Load, loadCell, startServer } from './http';
import { BenchOptions, fmt, progress, Section, table } from './lib';

interface Run { load: Load; wall: number; enabledAt: number | null; scripts: string; functions: number; cpuSum: number; exitCode: number | null; lastLine: string; price: string }

/** The command under load from its start to its end; its stderr lines timed as they come. */
async function wholeApp(pid: number, port: number, seconds: number, json: string, env: NodeJS.ProcessEnv, extra: string[] = []): Promise<Run> {
  const t0 = performance.now();
  const tool = spawn(process.execPath, [CLI, 'attach', String(pid), '-e', 'cpu@/Code/**', '-d', String(seconds), '--json', json, ...extra], { stdio: ['ignore', 'ignore', 'pipe'], env });
  let enabledAt: number | null = null, err = '', lastPreparing = '';
  tool.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    if (enabledAt === null && /metric request\(s\) on/.test(d)) enabledAt = (performance.now() - t0) / 1000;
    const m = [...d.matchAll(/\(script (\d+) of (\d+)\)/g)].pop();
    if (m) lastPreparing = `${m[1]} of ${m[2]}`;
  });
  const exited = new Promise<number | null>((r) => tool.once('close', (c) => r(c)));
  let wall = 0;
  const [l, exitCode] = await Promise.all([load(port, seconds + 4), exited.then((c) => { wall = (performance.now() - t0) / 1000; return c; })]);
  const stopped = /stopped preparing scripts for \S+ after (\d+) of (\d+)/.exec(err);
  let functions = 0, cpuSum = 0;
  try {
    const out = JSON.parse(fs.readFileSync(json, 'utf8')) as { metrics: { name: string; total: number }[] };
    for (const m of out.metrics) if (m.name === 'cpu') { functions++; cpuSum += m.total; }
  } catch { /* no report: stated by the exit code */ }
  const scripts = stopped ? `${stopped[1]} of ${stopped[2]} (stopped)` : lastPreparing ? `${lastPreparing.split(' of ')[1]} (all)` : 'none needed';
  // with --max-overhead: the request's price, and whether it was placed
  const priced = /cpu@\/Code\/\*\*(?: not placed: its predicted cost,|: predicted cost) ([\d.]+%) of a thread \(([\d,]+) point\(s\)(?:, of which ([\d.]+%) keeping (\d+) function)?/.exec(err);
  const price = !priced ? '–' : `${priced[1]} over ${priced[2]} points${priced[3] ? ` (${priced[3]} pinning ${priced[4]} functions)` : ''}: ${/not placed: its predicted/.test(err) ? '**not placed**' : 'placed'}`;
  return { load: l, wall, enabledAt, scripts, functions, cpuSum, exitCode, lastLine: err.trim().split('\n').pop() ?? '', price };
}

type Mode = 'unprepared' | 'prepared' | 'unprepared, --max-overhead 5%' | 'prepared, --max-overhead 5%';

export async function benchWholeApp(opts: BenchOptions & { nodes?: string[]; modes?: Mode[] }): Promise<Section> {
  const versions = opts.nodes ?? ['22', '24', '26'];
  const modes: Mode[] = opts.modes ?? ['unprepared', 'prepared', 'unprepared, --max-overhead 5%', 'prepared, --max-overhead 5%'];
  const seconds = opts.quick ? 10 : 20;
  const window = opts.quick ? 6 : 10;
  const rows: string[][] = [];
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-whole-app-'));
  try {
    for (const v of versions) {
      for (const mode of modes) {
        progress(`whole-app: Node ${v}, ${mode}`);
        const env = { ...process.env, PARANODE_CACHE_DIR: cache };
        const server = startServer(v, mode.startsWith('prepared') ? ['--import', AGENT] : [], env);
        const port = Number((await server.waitFor(/listening (\d+)/))[1]);
        await load(port, 2); // warm-up
        const before = await load(port, window);
        const r = await wholeApp(server.pid, port, seconds, path.join(cache, `out-${v}-${modes.indexOf(mode)}.json`), env, mode.endsWith('5%') ? ['--max-overhead', '5%'] : []);
        const fate = server.exitCode === undefined ? 'alive' : `**died: ${server.exitSignal ?? `exit ${server.exitCode}`}**`;
        server.child.kill('SIGTERM');
        await server.exited;
        rows.push([v, mode, r.enabledAt === null ? 'not within the duration' : `${fmt(r.enabledAt, 1)} s`, r.scripts, `${fmt(r.wall, 1)} s (${fmt(r.wall / seconds, 2)}×)`,
          r.exitCode === 0 ? String(r.functions) : `exit ${r.exitCode}: ${r.lastLine}`, `${fmt(r.cpuSum, 2)} CPU s (${fmt(r.cpuSum / seconds, 2)} CPU s/s)`,
          loadCell(before), loadCell(r.load), fmt(r.load.rps / before.rps, 3), r.price, fate]);
      }
    }
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
  return {
    title: 'A whole-program glob on a loaded server: time to enable, --duration, plausible values',
    body: [
      `\`paranode attach <pid> -e 'cpu@/Code/**' -d ${seconds} --json out.json\` on bench/targets/http-server.js under the http section's load ` +
      `(10 connections, ${seconds + 4} s from the command's start). "enabled": from the command's start to its "metric request(s) on" line; ` +
      `"scripts prepared": LiveEdited (or registered for breakpoints) for the request, of those it needs; "command": start to exit, against --duration; ` +
      `"functions": cpu instances in the report; "exclusive CPU summed": over them, against the ${seconds} s (one thread: at most 1 CPU s/s). ` +
      `Ratio = during ÷ before (a plain window of the same process just before). With --max-overhead 5%: the request's predicted cost as the tool said it, and whether it was placed. ` +
      `paranode and the load generator on ${process.version}.`,
      '',
      table(['Node', 'server', 'enabled', 'scripts prepared', 'command', 'functions', 'exclusive CPU summed', 'before', 'during', 'during ÷ before', 'predicted cost (--max-overhead)', 'server'], rows),
    ],
  };
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const value = (flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
  benchWholeApp({ quick: args.includes('--quick'), nodes: value('--nodes')?.split(','), modes: value('--modes')?.split(';') as Mode[] | undefined })
    .then((s) => process.stdout.write(`## ${s.title}\n\n${s.body.join('\n')}\n`))
    .catch((e) => { process.stderr.write(`${e.stack ?? e}\n`); process.exit(1); });
}
