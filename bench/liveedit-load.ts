// LiveEdit under load (issue #15, "Stall"): the loaded HTTP server of bench/http.ts,
// started plainly, attached through the inspector while autocannon runs, and a
// counter placed on sanitize-html's tagAllowed, a function of a script that is on
// the stack in most of the server's callbacks. With the quiet point (the default)
// and without it (quietPoint: false: LiveEdit only where the command lands,
// retried for activeWaitMs), interleaved. Per row: how the point was reached
// (slot = LiveEdit made, breakpoint = it was not), how long probe() took, the
// count over 3 s against the requests served then, and the throughput while the
// session ran against the same server's plain throughput just before.
// `npm run bench -- --only liveedit-load`, or: node dist/bench/liveedit-load.js [--quick] [--nodes 22,24] [--reps 3]
import * as os from 'os';
import * as path from 'path';
import { Session } from '../src/api';
import { load, loadCell, startServer } from './http';
import { BenchOptions, fmt, progress, ROOT, Section, table, TARGETS } from './lib';

const PROBE = '/Code/**/sanitize-html/index.js/tagAllowed.entry: n++';

export async function benchLiveEditLoad(opts: BenchOptions & { nodes?: string[]; reps?: number }): Promise<Section> {
  // Node 26's V8 has no LiveEdit: nothing to compare there
  const versions = opts.nodes ?? ['22', '24'];
  const reps = opts.reps ?? (opts.quick ? 1 : 3);
  const window = opts.quick ? 5 : 8;
  const during = opts.quick ? 12 : 16;
  const rows: string[][] = [];
  for (const v of versions) {
    for (let rep = 1; rep <= reps; rep++) {
      for (const quietPoint of [true, false]) {
        progress(`liveedit-load: Node ${v}, quiet point ${quietPoint ? 'on' : 'off'}, repetition ${rep} of ${reps}`);
        const server = startServer(v, []);
        try {
          const port = Number((await server.waitFor(/listening (\d+)/))[1]);
          await load(port, 2); // warm-up
          const before = await load(port, window);
          const underLoad = load(port, during);
          await new Promise((r) => setTimeout(r, 1500));
          const s = await Session.attach(server.pid, { quietPoint });
          const t0 = performance.now();
          const r = await s.probe(PROBE);
          const placeMs = performance.now() - t0;
          await s.sample();
          const n0 = s.value('n') ?? 0;
          const t1 = performance.now();
          await new Promise((res) => setTimeout(res, 3000));
          await s.sample();
          const perSecond = ((s.value('n') ?? 0) - n0) / ((performance.now() - t1) / 1000);
          const blocked = s.notes.find((n) => /stayed active/.test(n));
          await s.detach();
          const d = await underLoad;
          const alive = server.exitCode === undefined;
          rows.push([v, quietPoint ? 'on' : 'off', String(rep), r.bySlot ? 'slot (LiveEdit made)' : r.byBreakpoint ? `breakpoint${blocked ? ' (LiveEdit refused for 5 s)' : ''}` : 'not placed',
            `${fmt(placeMs / 1000, 2)} s`, `${fmt(perSecond, 0)} /s`, loadCell(before), loadCell(d), fmt(d.rps / before.rps, 3), alive ? 'alive' : `**died: ${server.exitSignal ?? `exit ${server.exitCode}`}**`]);
        } finally {
          server.child.kill('SIGTERM');
          await server.exited;
        }
      }
    }
  }
  const md = [
    `\`${path.join(TARGETS, 'http-server.js').slice(ROOT.length + 1)}\` started plainly on the Node named, under autocannon (10 connections, GET /article/<1..50>, ` +
    `the load generator and paranode on ${process.version}, same ${os.cpus().length} cores). Per row, one server: ${window} s of load ("before"), then ${during} s of load during which, ` +
    `1.5 s in, \`Session.attach(pid, { quietPoint })\`, \`probe('${PROBE}')\`, 3 s of counting, detach ("during"). ` +
    `"quiet point off": the LiveEdit is tried only where the command lands, every 50 ms for activeWaitMs (5 s), then breakpoints (the behaviour before).`,
    '',
    table(['Node', 'quiet point', 'rep.', 'tagAllowed reached by', 'probe() took', 'count rate', 'before', 'during the session', 'during ÷ before', 'server'], rows),
  ];
  return { title: 'LiveEdit under load: at a quiet point, and where the command lands', body: md };
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const value = (flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
  benchLiveEditLoad({ quick: args.includes('--quick'), nodes: value('--nodes')?.split(','), reps: value('--reps') ? Number(value('--reps')) : undefined })
    .then((s) => process.stdout.write(`## ${s.title}\n\n${s.body.join('\n')}\n`))
    .catch((e) => { process.stderr.write(`${e.stack ?? e}\n`); process.exit(1); });
}
