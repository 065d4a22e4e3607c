// What an attach costs a large program started with the dormant agent: the
// TypeScript compiler loaded (bench/targets/lag-meter.js), the tool attaches,
// lists every function (`resources /Code/**`), places one probe, samples and
// detaches; the program's own 2 ms timer gives the longest its thread was held.
// Two starts of the program, the same run: with the agent alone (every module
// prepared at load: the debugger stays off), and with a preload before the agent
// (-r, a module the load hook never saw: the debugger goes on at attach).
// Baseline: the same timer over as long a window with nobody attached. The heap
// the program keeps (after a full collection, --expose-gc) before the first attach
// and after each.
//   npm run build && node dist/bench/attach-large.js [--runs N]
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { performance } from 'perf_hooks';
import { Session } from '../src/api';
import { FIXTURES, median, Proc, ROOT, sleep, table, TARGETS } from './lib';

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 3;
const AGENT = path.join(ROOT, 'dist', 'src', 'agent', 'dormant.js');
const PROBE = '/Code/node_modules/typescript/lib/typescript.js/createSourceFile@*.entry: n++';

async function main(): Promise<void> {
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-attach-large-'));
  process.env.PARANODE_CACHE_DIR = cache;
  const rows: string[][] = [];
  try {
    // one start first, to fill the prepared-code cache: both measured starts read it (a start that
    // prepares keeps every function's points decoded, one from the cache decodes them when read)
    const fill = Proc.spawn(path.join(TARGETS, 'lag-meter.js'), [], ROOT, ['--import', AGENT]);
    await fill.waitFor(/ready/);
    fill.child.kill();
    await fill.exited;
    for (const [label, pre] of [['agent alone', []], ['a preload before the agent', ['-r', path.join(FIXTURES, 'preload-before.js')]]] as [string, string[]][]) {
      const p = Proc.spawn(path.join(TARGETS, 'lag-meter.js'), [], ROOT, ['--expose-gc', ...pre, '--import', AGENT]);
      try {
        await p.waitFor(/ready/);
        await sleep(1000);
        const worst = async () => Number((await p.request('worst', /worst ([\d.]+)\n/))[1]);
        const phases: number[][] = [], lags: number[] = [], idle: number[] = [];
        const heap = async () => (await p.request('heap', /heap ([\d.]+)\n/))[1];
        const heaps = [await heap()];
        let off = 0;
        for (let r = 0; r < RUNS; r++) {
          await p.request('reset', /reset\n/);
          const t0 = performance.now();
          const at = [t0];
          const s = await Session.attach(p.pid);
          at.push(performance.now());
          const n = (await s.resources('/Code/**')).length;
          at.push(performance.now());
          await s.probe(PROBE);
          at.push(performance.now());
          await s.sample();
          at.push(performance.now());
          if (s.notes.some((x) => /debugger stays off/.test(x))) off++;
          await s.detach();
          at.push(performance.now());
          lags.push(await worst());
          heaps.push(await heap());
          phases.push(at.slice(1).map((t, i) => t - at[i]));
          if (!n) throw new Error('no functions listed');
          // nobody attached, as long
          await p.request('reset', /reset\n/);
          await sleep(at[at.length - 1] - t0);
          idle.push(await worst());
        }
        const col = (i: number) => median(phases.map((x) => x[i])).toFixed(0);
        rows.push([label, `${off} of ${RUNS}`, col(0), col(1), col(2), col(3), col(4), `${median(lags).toFixed(1)} (${Math.min(...lags).toFixed(1)}-${Math.max(...lags).toFixed(1)})`, median(idle).toFixed(1), heaps.join(' → ')]);
      } finally {
        p.child.kill();
        await p.exited;
      }
    }
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
  process.stdout.write(`Node ${process.version}, ${RUNS} attaches per start, medians\n\n`);
  process.stdout.write(table(['program started with', 'debugger stayed off', 'attach ms', 'resources /Code/** ms', 'probe ms', 'sample ms', 'detach ms',
    'longest hold of the program\'s thread, ms (min-max)', 'same window, nobody attached, ms', 'heap kept, MB: before, after each attach'], rows) + '\n');
}

main().catch((e) => { process.stderr.write(`${(e as Error).stack}\n`); process.exit(1); });
