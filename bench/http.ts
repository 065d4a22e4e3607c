// A loaded HTTP server (issue #15): bench/targets/http-server.js (Fastify; marked,
// sanitize-html and Handlebars in its article route) under a 10-connection load
// generator (autocannon) on loopback, on each supported Node, started plainly
// (attach: unprepared) and with the dormant agent (prepared at load). In one
// server process, three windows in turn, each under the same load:
//   before   the plain server
//   during   `paranode diagnose --max-overhead 5% attach <pid>` runs (attach,
//            search, detach), with the observed cost it reports
//   after    the server once paranode has gone
// Each repeated three times, interleaved; a crash or a failed request is stated.
// Beside it the same load on a server started with --cpu-prof: its throughput
// and V8's top self-time functions, and whether diagnose named them.
// `npm run bench -- --only http`, or: node dist/bench/http.js [--quick] [--nodes 22,26] [--modes unprepared] [--reps 3] [--no-profile]
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
// eslint-disable-next-line @typescript-eslint/no-require-imports
import autocannon = require('autocannon');
import { BenchOptions, fmt, Proc, progress, ROOT, Section, table, TARGETS } from './lib';

export const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
export const AGENT = path.join(ROOT, 'dist', 'src', 'agent', 'dormant.js');
const SERVER = path.join(TARGETS, 'http-server.js');
const CONNECTIONS = 10;

export interface Load { rps: number; p99: number; errors: number; non2xx: number; slowestSecond: number; requests: number }

export const nodeBin = (v: string) => path.join(ROOT, 'node_modules', `node${v}`, 'bin', 'node');

export function startServer(v: string, nodeArgs: string[], env: NodeJS.ProcessEnv = process.env): Proc {
  const child = spawn(nodeBin(v), [...nodeArgs, SERVER, '0'], { cwd: TARGETS, stdio: ['pipe', 'pipe', 'pipe'], env });
  return new Proc(child, `http-server (Node ${v})`);
}

/** `seconds` of load on the article route; per-second counts give the slowest second. */
export async function load(port: number, seconds: number): Promise<Load> {
  const perSecond: number[] = [];
  const r: any = await new Promise((resolve, reject) => {
    const instance = autocannon({
      url: `http://127.0.0.1:${port}`, connections: CONNECTIONS, duration: seconds,
      requests: [{ method: 'GET', setupRequest: (req: any) => ({ ...req, path: `/article/${1 + Math.floor(Math.random() * 50)}` }) }],
    }, (err, result) => (err ? reject(err) : resolve(result)));
    (instance as unknown as NodeJS.EventEmitter).on('tick', (t: { counter: number }) => perSecond.push(t.counter));
  });
  return {
    rps: r.requests.average, p99: r.latency.p99, errors: r.errors + r.timeouts, non2xx: r.non2xx,
    // whole seconds only: the last tick may come after the load has ended
    slowestSecond: Math.min(...perSecond.slice(0, Math.max(1, seconds - 1))), requests: r.requests.total,
  };
}

interface DiagnoseRun { load: Load; observedAvg: number | null; observedMax: number | null; named: string[]; hottest: string[]; complete: number | null; exitCode: number | null; out: string }

/** `paranode diagnose` attached for `seconds`, under load the whole time. */
async function diagnoseUnderLoad(pid: number, port: number, seconds: number, json: string): Promise<DiagnoseRun> {
  const tool = spawn(process.execPath, [CLI, 'diagnose', '-q', '--max-overhead', '5%', '--duration', String(seconds), '--json', json, 'attach', String(pid)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  tool.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  tool.stderr!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  const exited = new Promise<number | null>((r) => tool.once('close', (c) => r(c)));
  const l = await load(port, seconds + 4);
  const exitCode = await exited;
  let d: any = null;
  try { d = JSON.parse(fs.readFileSync(json, 'utf8')); } catch { /* stated below */ }
  const named = (d?.bottlenecks ?? []).map((b: any) => `${b.hypothesis} ${b.focus}${b.source ? ` (${b.source})` : ''}`);
  const hottest = (d?.hottest ?? []).filter((h: any) => h.thread === 'main').map((h: any) => `${h.function} ${fmt(h.self * 100, 0)} %`);
  return { load: l, observedAvg: d?.cost?.observed?.avg ?? null, observedMax: d?.cost?.observed?.max ?? null, named, hottest, complete: d?.completeAfter ?? null, exitCode, out };
}

export interface ProfileTop { name: string; share: number }

/** V8's sampling profiler: self time per function (by name and script), the top ones. */
export function topSelf(file: string, n: number): { top: ProfileTop[]; gc: number } {
  const p = JSON.parse(fs.readFileSync(file, 'utf8'));
  const self = new Map<string, number>();
  let total = 0, gc = 0;
  for (const node of p.nodes) {
    const cf = node.callFrame;
    const hits = node.hitCount ?? 0;
    if (cf.functionName === '(idle)' || cf.functionName === '(program)') continue;
    total += hits;
    if (cf.functionName === '(garbage collector)') { gc += hits; continue; }
    // an anonymous function by its start line, as paranode names it
    const key = `${cf.functionName || `(anonymous)@${cf.lineNumber + 1}`} ${cf.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/bench\/targets\//, '')}`;
    self.set(key, (self.get(key) ?? 0) + hits);
  }
  const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, h]) => ({ name, share: h / total }));
  return { top, gc: gc / total };
}

async function cpuProfRun(v: string, seconds: number): Promise<{ plain: Load; prof: Load; top: ProfileTop[]; gc: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-cpuprof-'));
  try {
    const plain = startServer(v, []);
    const port1 = Number((await plain.waitFor(/listening (\d+)/))[1]);
    await load(port1, 2);
    const plainLoad = await load(port1, seconds);
    plain.child.kill('SIGTERM');
    await plain.exited;
    const s = startServer(v, ['--cpu-prof', '--cpu-prof-dir', dir]);
    const port = Number((await s.waitFor(/listening (\d+)/))[1]);
    await load(port, 2);
    const prof = await load(port, seconds);
    s.child.kill('SIGTERM');
    await s.exited;
    const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    const { top, gc } = file ? topSelf(path.join(dir, file), 5) : { top: [], gc: 0 };
    return { plain: plainLoad, prof, top, gc };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export const loadCell = (l: Load) => `${fmt(l.rps, 0)} req/s, p99 ${fmt(l.p99, 0)} ms, slowest second ${l.slowestSecond}${l.errors || l.non2xx ? `, **${l.errors} errors, ${l.non2xx} non-2xx**` : ''}`;

export async function benchHttp(opts: BenchOptions & { nodes?: string[]; modes?: ('unprepared' | 'prepared')[]; reps?: number; noProfile?: boolean }): Promise<Section> {
  const versions = opts.nodes ?? ['22', '24', '26'];
  const modes = opts.modes ?? ['unprepared', 'prepared'];
  const reps = opts.reps ?? (opts.quick ? 1 : 3);
  const window = opts.quick ? 6 : 10;
  const diagnoseSeconds = opts.quick ? 15 : 30;
  const rows: string[][] = [];
  const namedRows: string[][] = [];
  const profRows: string[][] = [];
  const tops = new Map<string, ProfileTop[]>();
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-http-cache-'));
  try {
    for (const v of versions) {
      if (!opts.noProfile) {
        progress(`http: Node ${v}: --cpu-prof beside a plain server`);
        const cp = await cpuProfRun(v, window);
        tops.set(v, cp.top);
        profRows.push([v, loadCell(cp.plain), loadCell(cp.prof), fmt(cp.prof.rps / cp.plain.rps, 3),
          cp.top.map((t) => `${t.name} ${fmt(t.share * 100, 1)} %`).join('; ') + `; GC ${fmt(cp.gc * 100, 1)} %`]);
      }
      for (let rep = 1; rep <= reps; rep++) {
        for (const mode of modes) {
          progress(`http: Node ${v}: ${mode}, repetition ${rep} of ${reps}`);
          const env = { ...process.env, PARANODE_CACHE_DIR: cache };
          const server = startServer(v, mode === 'prepared' ? ['--import', AGENT] : [], env);
          const port = Number((await server.waitFor(/listening (\d+)/))[1]);
          await load(port, 2); // warm-up
          const before = await load(port, window);
          const json = path.join(cache, `diagnose-${v}-${mode}-${rep}.json`);
          const d = await diagnoseUnderLoad(server.pid, port, diagnoseSeconds, json);
          const alive = server.exitCode === undefined;
          const after = alive ? await load(port, window) : null;
          const fate = alive ? 'alive' : `**died: ${server.exitSignal ?? `exit ${server.exitCode}`}**`;
          server.child.kill('SIGTERM');
          await server.exited;
          rows.push([v, mode, String(rep), loadCell(before), loadCell(d.load), after ? loadCell(after) : '–', fmt(d.load.rps / before.rps, 3),
            d.observedAvg === null ? `no report (exit ${d.exitCode}): ${d.out.trim().split('\n').pop()}` : `${fmt(d.observedAvg * 100, 2)} % (max ${fmt((d.observedMax ?? 0) * 100, 1)} %)`, fate]);
          const top = tops.get(v)?.[0];
          const topName = top?.name.split(' ')[0] ?? '';
          const inHottest = topName ? (d.hottest.some((h) => h.split(' ')[0].endsWith(`/${topName}`)) ? 'yes' : 'no') : '–';
          namedRows.push([v, mode, String(rep), d.named.slice(0, 4).join('; ') || '(nothing)', topName ? (d.named.some((n) => n.includes(`/${topName}`)) ? `yes (${topName})` : `no (${topName})`) : '–',
            d.hottest.join('; ') || '(no stack samples)', inHottest]);
        }
      }
    }
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
  const md = [
    `\`${SERVER.slice(ROOT.length + 1)}\` (Fastify; its article route runs marked, sanitize-html and a Handlebars layout) under autocannon, ${CONNECTIONS} connections on loopback, ` +
    `GET /article/<1..50>. The server runs on the Node named; the load generator and paranode run on the Node running the suite (${process.version}), on the same ${os.cpus().length} cores. ` +
    `One server process per row: ${window} s of load plainly ("before"), then \`paranode diagnose -q --max-overhead 5% --duration ${diagnoseSeconds} attach <pid>\` under load ` +
    `(the load runs ${diagnoseSeconds + 4} s: attach, search and detach), then ${window} s again ("after"). "prepared": the server started with \`--import paranode/agent\` (dormant agent); ` +
    `"unprepared": started plainly, attached through the inspector. Ratio = during ÷ before. Observed cost: what diagnose reported (its average over windows).`,
    '',
    table(['Node', 'server', 'rep.', 'before', 'during diagnose', 'after', 'during ÷ before', 'observed cost (diagnose)', 'server'], rows),
    '',
    'What diagnose named (its first four bottlenecks), and whether V8\'s top self-time function of the same load (below) is among them:',
    '',
    table(['Node', 'server', 'rep.', 'diagnose named', 'V8\'s top function named', 'diagnose\'s hottest functions (main thread, own code)', 'V8\'s top among them'], namedRows),
    '',
    `V8's sampling profiler (\`--cpu-prof\`) on the same server and load, ${window} s, against a plain server just before (separate processes); self time per function over all non-idle samples:`,
    '',
    table(['Node', 'plain', '--cpu-prof', 'ratio', 'top self time (V8)'], profRows),
  ];
  return { title: 'A loaded HTTP server: throughput and p99 under diagnose, against --cpu-prof', body: md };
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const value = (flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
  benchHttp({
    quick: args.includes('--quick'), noProfile: args.includes('--no-profile'), nodes: value('--nodes')?.split(','),
    modes: value('--modes')?.split(',') as ('unprepared' | 'prepared')[] | undefined, reps: value('--reps') ? Number(value('--reps')) : undefined,
  })
    .then((s) => process.stdout.write(`## ${s.title}\n\n${s.body.join('\n')}\n`))
    .catch((e) => { process.stderr.write(`${e.stack ?? e}\n`); process.exit(1); });
}
