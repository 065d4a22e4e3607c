// Attach `diagnose` to a loaded HTTP server again and again, a new server each
// time, and count the servers that died, with how (issue #15: no crash). The
// server and the load are section 16's (bench/http.ts).
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { AGENT, CLI, load, startServer } from './http';
import { BenchOptions, progress, Section, table } from './lib';

export async function benchAttachStress(opts: BenchOptions & { nodes?: string[]; modes?: ('unprepared' | 'prepared')[]; attaches?: number }): Promise<Section> {
  const versions = opts.nodes ?? ['22', '24', '26'];
  const modes = opts.modes ?? ['unprepared', 'prepared'];
  const n = opts.attaches ?? (opts.quick ? 5 : 30);
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-stress-'));
  const rows: string[][] = [];
  try {
    for (const v of versions) {
      for (const mode of modes) {
        const deaths: string[] = [];
        for (let i = 1; i <= n; i++) {
          progress(`attach-stress: Node ${v}, ${mode}: attach ${i} of ${n} (${deaths.length} died so far)`);
          const server = startServer(v, mode === 'prepared' ? ['--import', AGENT] : [], { ...process.env, PARANODE_CACHE_DIR: cache });
          const port = Number((await server.waitFor(/listening (\d+)/))[1]);
          const loaded = load(port, 12).catch(() => null);
          await new Promise((r) => setTimeout(r, 1500));
          const tool = spawn(process.execPath, [CLI, 'diagnose', '-q', '--max-overhead', '5%', '--duration', '6', 'attach', String(server.pid)], { stdio: 'ignore' });
          await new Promise((r) => tool.once('exit', r));
          await loaded;
          if (server.exitCode !== undefined) deaths.push(`${i}: ${server.exitSignal ?? `exit ${server.exitCode}`}`);
          else { server.child.kill('SIGTERM'); await server.exited; }
        }
        rows.push([v, mode, String(n), String(deaths.length), deaths.join('; ') || '–']);
      }
    }
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
  return {
    title: 'Attaching to a loaded server again and again',
    body: [
      `Each attach: a new server (bench/targets/http-server.js) under 10 connections of load, and 1.5 s into the load \`paranode diagnose -q --max-overhead 5% --duration 6 attach <pid>\`; ` +
      'the server counted as dead if it ended before the load did. "prepared": started with `--import paranode/agent`.',
      '',
      table(['Node', 'server', 'attaches', 'died', 'which, how'], rows),
    ],
  };
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const value = (flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
  benchAttachStress({
    quick: args.includes('--quick'), nodes: value('--nodes')?.split(','),
    modes: value('--modes')?.split(',') as ('unprepared' | 'prepared')[] | undefined, attaches: value('--attaches') ? Number(value('--attaches')) : undefined,
  })
    .then((s) => process.stdout.write(`## ${s.title}\n\n${s.body.join('\n')}\n`))
    .catch((e) => { process.stderr.write(`${e.stack ?? e}\n`); process.exit(1); });
}
