// How long the inspector port is open per attach (SIGUSR1 to port closed, as
// the session notes it): N attach/detach cycles on one idle target.
//   node dist/bench/exposure.js [--runs N]     (tool and target on this node)
import { spawn } from 'child_process';
import { Session } from '../src/session/session';
import { fmt, median } from './lib';

async function main(): Promise<void> {
  const at = process.argv.indexOf('--runs');
  const runs = at > 0 ? Number(process.argv[at + 1]) : 10;
  const t = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000); console.log("ready")'], { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise((r) => t.stdout!.once('data', r));
  const ms: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const s = await Session.attach(t.pid!);
      const note = s.notes.find((n) => /was open for \d+ ms/.test(n));
      if (!note) throw new Error(`no exposure note: ${s.notes.join(' | ')}`);
      ms.push(Number(/for (\d+) ms/.exec(note)![1]));
      await s.detach();
    }
  } finally {
    t.kill();
  }
  ms.sort((a, b) => a - b);
  process.stdout.write(`Node ${process.versions.node}: inspector port open per attach over ${runs} attaches: median ${fmt(median(ms))} ms, min ${ms[0]}, max ${ms[ms.length - 1]}\n`);
}

main().catch((e) => { process.stderr.write(`${(e as Error).stack}\n`); process.exit(1); });
