// 39. The message metrics per message (issue #13): a worker echoing messages, 100
// at a time, plain and launched under paranode with nothing requested, msgs,
// msg_time or msg_wait; the time per message against the plain run's in the same
// round, and msg_wait's value against the wait each message's receiver measured.
import { MetricManager } from '../src/metrics/manager';
import { BenchOptions, fmt, median, Proc, progress, Section, table, TARGETS } from './lib';

type Mode = 'plain' | 'prepared' | 'msgs' | 'msg_time' | 'msg_wait';
const MODES: Mode[] = ['plain', 'prepared', 'msgs', 'msg_time', 'msg_wait'];
const LABEL: Record<Mode, string> = {
  plain: 'plain (baseline)',
  prepared: '`paranode run`, nothing requested',
  msgs: '`msgs` (a counter at each send)',
  msg_time: '`msg_time` (a wall timer around each send)',
  msg_wait: '`msg_wait` (each send and each dispatch: a queue)',
};

interface Run { us: number; waited: number; metric?: number }

async function run(mode: Mode, n: number, size: number): Promise<Run> {
  const args = ['messages.js', String(n), String(size)];
  const parse = (m: RegExpMatchArray) => ({ us: Number(m[1]), waited: Number(m[2]) });
  if (mode === 'plain') {
    const p = Proc.spawn(args[0], args.slice(1), TARGETS);
    const r = parse(await p.waitFor(/messages (\S+) (\S+)\n/, 0));
    await p.exited;
    return r;
  }
  const requests = mode === 'prepared' ? [] : [{ metric: mode, focus: '' }];
  const { session, manager } = await MetricManager.launch([process.execPath, ...args], requests, { stdio: 'pipe', cwd: TARGETS });
  const p = new Proc(session.child!, `messages.js under ${mode}`);
  session.child!.stdin!.end();
  const r = parse(await p.waitFor(/messages (\S+) (\S+)\n/, 0));
  await session.waitForExit();
  const v = manager.values().find((x) => x.name === mode);
  return { ...r, metric: v?.total };
}

export async function benchMessages(o: BenchOptions): Promise<Section> {
  const rounds = o.quick ? 1 : 3;
  const rows: string[][] = [];
  for (const [n, size, what] of [[o.quick ? 5000 : 20000, 0, 'a short string'], [o.quick ? 1000 : 5000, 65536, '64 KiB Buffer']] as [number, number, string][]) {
    const runs = new Map<Mode, Run[]>(MODES.map((m) => [m, []]));
    // interleaved: each round runs every mode once, in turn
    for (let r = 0; r < rounds; r++) {
      for (const m of MODES) {
        progress(`messages: ${what}, ${m}, round ${r + 1}/${rounds}`);
        runs.get(m)!.push(await run(m, n, size));
      }
    }
    const plain = median(runs.get('plain')!.map((x) => x.us));
    for (const m of MODES) {
      const rs = runs.get(m)!;
      const us = median(rs.map((x) => x.us));
      const check = m === 'msg_wait'
        ? rs.map((x) => `${fmt(x.metric ?? NaN, 3)} / ${fmt(x.waited, 3)}`).join('; ')
        : m === 'msgs' ? rs.map((x) => fmt(x.metric ?? NaN, 0)).join('; ') : '';
      rows.push([what, LABEL[m], fmt(us, 2), fmt(us / plain, 2), check]);
    }
  }
  return {
    title: '39. The message metrics per message (issue #13)',
    body: [
      'A worker echoes every message, 100 in flight at a time (`bench/targets/messages.js`); per message sent (both ways), the median of ' +
      `${rounds} interleaved rounds; ratio to the plain run. Last column: for \`msgs\`, its value (messages both ways, ` +
      'with the end\'s two); for `msg_wait`, its value against the seconds the messages\' receivers measured (each message carries its send time), per round.',
      table(['messages', 'mode', 'µs per message', '÷ plain', 'value (msg_wait: paranode / the messages\' own clocks, s)'], rows),
    ],
  };
}
