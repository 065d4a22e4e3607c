// What a breakpoint's hits leave in the target's memory (issue #15, do no
// harm on Node 26, where every script loaded before attach is reached by
// breakpoints). V8 compiles a breakpoint's condition anew at each hit and
// announces the copy as a script; the inspector keeps every announced
// script's text for the session's life unless told otherwise. Attached to
// test/fixtures/soak.js with a pause limit of 0 (no LiveEdit, as on Node 26),
// a counter at f's entry is reached by a breakpoint; the target calls f in
// rounds and measures its own rss after a forced GC (and the time each round
// took) before and after each round; the count must be exact.
// `npm run bench -- --only condition-memory`, or: node dist/bench/condition-memory.js [--quick] [--rounds n]
import * as path from 'path';
import { Session } from '../src/session/session';
import { BenchOptions, FIXTURES, fmt, Proc, progress, Section, table, timeMs } from './lib';

export async function benchConditionMemory(opts: BenchOptions & { rounds?: number }): Promise<Section> {
  const rounds = opts.rounds ?? (opts.quick ? 2 : 5);
  const hits = opts.quick ? 10000 : 50000;
  const p = Proc.spawn(path.join(FIXTURES, 'soak.js'), [], FIXTURES);
  await p.waitFor(/ready/);
  /** [rss, V8's heap (its pages, garbage included)] in MB, after two forced GCs */
  const mem = async (): Promise<[number, number]> => {
    const st = JSON.parse((await p.request('state', /state (.*)\n/))[1]);
    return [st.rss / 1e6, st.heapTotal / 1e6];
  };
  const timed = async (n: number) => {
    const t0 = timeMs();
    await p.request(String(n), /done (\d+)/);
    return timeMs() - t0;
  };
  const rows: string[][] = [];
  try {
    const plainMs = await timed(hits);
    const s = await Session.attach(p.pid, { maxPauseMs: 0 });
    try {
      const r = await s.probe('/Code/soak.js/f.entry: n++');
      if (r.byBreakpoint !== 1) throw new Error(`f was not reached by a breakpoint: ${JSON.stringify(r)}`);
      let before = await mem();
      const start = before;
      for (let i = 1; i <= rounds; i++) {
        progress(`condition-memory: round ${i} of ${rounds} (${hits} hits)`);
        const ms = await timed(hits);
        const after = await mem();
        rows.push([String(i), fmt((ms * 1000) / hits, 1), fmt(before[0], 1), fmt(after[0], 1), fmt(after[0] - before[0], 1), fmt(after[1], 1)]);
        before = after;
      }
      await s.sample();
      if (s.value('n') !== rounds * hits) throw new Error(`count ${s.value('n')}, expected ${rounds * hits}`);
      rows.push(['all', '', fmt(start[0], 1), fmt(before[0], 1), fmt(before[0] - start[0], 1), `${fmt(start[1], 1)} -> ${fmt(before[1], 1)}`]);
    } finally {
      await s.detach();
    }
    const end = await mem();
    rows.push(['after detach', '', '', fmt(end[0], 1), '', fmt(end[1], 1)]);
    return {
      title: `Breakpoint conditions: the target's memory over ${rounds * hits} hits (Node ${process.versions.node})`,
      body: [
        `test/fixtures/soak.js attached with a pause limit of 0; \`/Code/soak.js/f.entry: n++\` by a breakpoint; ${rounds} rounds of ${hits} calls of f; ` +
        `rss and V8's heap total (its pages, whether used or not) measured by the target after two forced GCs; plain: the same ${hits} calls before the attach took ${fmt((plainMs * 1000) / hits, 2)} µs a call. The count was exact (${rounds * hits}).`,
        table(['round', 'µs a hit', 'rss before (MB)', 'rss after (MB)', 'grew (MB)', 'V8 heap total after (MB)'], rows),
      ],
    };
  } finally {
    p.child.kill();
    await p.exited;
  }
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const rounds = args.includes('--rounds') ? Number(args[args.indexOf('--rounds') + 1]) : undefined;
  benchConditionMemory({ quick: args.includes('--quick'), rounds }).then((sec) => {
    process.stdout.write(`### ${sec.title}\n\n- Command: \`node dist/bench/condition-memory.js ${args.join(' ')}\`; Node ${process.version}\n\n${sec.body.join('\n\n')}\n`);
    process.exit(0);
  }, (e) => { console.error(e); process.exit(1); });
}
