// The watchdog's time to restore: the CLI attached to test/fixtures/watchdog.js
// (main thread and a worker, f probed in both) is SIGKILLed while sampling;
// measured from the kill until the target itself sees every thread back
// (f's original text, slots off), and until the relay thread is gone.
//   node dist/bench/watchdog.js [--runs N]     (tool and target on this node)
import { spawn } from 'child_process';
import * as path from 'path';
import { fmt, median } from './lib';
import { CLI, FIXTURES, Target } from '../test/support/helpers';

interface State { main: { runtime: { active: boolean; probes: number } | null }; resident: { runtime: { active: boolean; probes: number } | null }; threads: number }

async function once(): Promise<{ restored: number; threadsBack: number }> {
  const target = new Target(path.join(FIXTURES, 'watchdog.js'));
  try {
    await target.waitFor(/ready/);
    const state = async (): Promise<State> => JSON.parse((await target.request('state', /state (.*)\n/))[1]);
    const base = (await state()).threads;
    const cli = spawn(process.execPath, [CLI, 'attach', String(target.pid), '-q', '-i', '100', '-p', '/Code/watchdog.js/f.entry: n++'], { stdio: 'ignore' });
    for (const deadline = Date.now() + 60000; ;) {
      const s = await state();
      if (s.main.runtime?.probes && s.resident.runtime?.probes) break;
      if (Date.now() > deadline) throw new Error('the probe was not placed within 60 s');
      await new Promise((r) => setTimeout(r, 25));
    }
    await target.request('resident 1000', /resident \d+/);
    const restored = target.waitFor(/restored (\d+)/);
    target.send('watch');
    const killed = Date.now();
    cli.kill('SIGKILL');
    const at = Number((await restored)[1]) - killed;
    for (;;) {
      const s = await state();
      if (s.threads === base) return { restored: at, threadsBack: Date.now() - killed };
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    target.kill();
  }
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--runs');
  const runs = i > 0 ? Number(process.argv[i + 1]) : 10;
  const restored: number[] = [];
  const back: number[] = [];
  for (let r = 0; r < runs; r++) {
    const x = await once();
    restored.push(x.restored);
    back.push(x.threadsBack);
    process.stderr.write(`run ${r + 1}/${runs}: restored ${x.restored} ms, relay gone ${x.threadsBack} ms\n`);
  }
  console.log(`Node ${process.version}, ${runs} runs: kill -> every thread restored: median ${fmt(median(restored), 0)} ms, max ${Math.max(...restored)} ms; ` +
    `kill -> relay thread gone: median ${fmt(median(back), 0)} ms, max ${Math.max(...back)} ms`);
}

main().catch((e) => { console.error(e); process.exit(1); });
