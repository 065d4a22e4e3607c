// Switching slots, priced (issue #15 item 4): a switch of a slot guard makes
// V8 throw away the optimized code that read it; the observed cost prices each
// switch by the calibration (cost/calibration switchCost). One copy of
// bench/targets/work.js esprima, launched (prepared), parses without end while
// the tool samples it with V8's stack samples on (as a search does). Phases of
// a few seconds take turns: nothing switched; a counter at a hot function's
// entry switched in and out every 50 ms; the same counter put in and at once
// taken out again every 200 ms (a burst of requests, as a metric's placements
// are); the 50 ms toggle at a function the parse never calls (what switching
// costs without optimized code to lose). Each
// phase's mean ms per parse against the plain phases gives the measured
// slowdown; the observed cost over the same phase, its bounds.
// `npm run bench -- --only switching`, or: node dist/bench/switching.js [--quick] [--rounds n]
import { calibration } from '../src/cost/calibration';
import { MetricManager } from '../src/metrics/manager';
import { Session } from '../src/session/session';
import { BenchOptions, fmt, median, progress, Section, sleep, table, TARGETS } from './lib';

const HOT = 'Parser.prototype.nextToken';
const NEVER = 'Parser.prototype.parseDebuggerStatement';
const PERIOD_MS = 50;

type Kind = 'plain' | 'hot' | 'pair' | 'never';
interface Phase { kind: Kind; from: number; to: number; switches: number; observed: [number, number]; seen: number; unseen: number }

export async function benchSwitching(opts: BenchOptions & { rounds?: number }): Promise<Section> {
  const rounds = opts.rounds ?? (opts.quick ? 1 : 6);
  const secs = opts.quick ? 2 : 4;
  const cal = await calibration({ progress });
  const saved = process.env.WORK_STAMPS;
  process.env.WORK_STAMPS = '1';
  const s = await Session.launch([process.execPath, 'work.js', 'esprima', '1000000'], [], { cwd: TARGETS, stdio: 'pipe' });
  if (saved === undefined) delete process.env.WORK_STAMPS; else process.env.WORK_STAMPS = saved;
  let err = '';
  s.child!.stderr!.setEncoding('utf8').on('data', (x: string) => { err += x; });
  s.child!.stdout!.resume();
  const reps = () => [...err.matchAll(/^rep (\S+) (\d+)$/gm)].map((m) => ({ ms: Number(m[1]), at: Number(m[2]) }));
  const phases: Phase[] = [];
  try {
    const cost = await new MetricManager([s]).enable('observed_cost');
    await s.watchThreads({ stacks: true });
    s.startSampling(200);
    // esprima loaded and its code optimized
    while (reps().length < 20) await sleep(100);
    const count = (cls: string) => s.sampled(`_pnx:${cls}`)?.last ?? 0;
    for (let r = 0; r < rounds; r++) {
      for (const kind of ['plain', 'hot', 'pair', 'never'] as const) {
        progress(`switching: round ${r + 1} of ${rounds}, ${kind}`);
        await s.sample();
        const c0 = cost.value().range!, seen0 = count('switch'), unseen0 = count('switch-unseen');
        const from = Date.now(), until = from + secs * 1000;
        let switches = 0;
        if (kind === 'plain') await sleep(secs * 1000);
        else if (kind === 'pair') {
          while (Date.now() < until) {
            await s.removeProbe((await s.probe(`/Code/**/esprima.js/${HOT}.entry: c++`)).id);
            await sleep(200);
            switches += 2;
          }
        } else {
          while (Date.now() < until) {
            const p = await s.probe(`/Code/**/esprima.js/${kind === 'hot' ? HOT : NEVER}.entry: c++`);
            await sleep(PERIOD_MS);
            await s.removeProbe(p.id);
            await sleep(PERIOD_MS);
            switches += 2;
          }
        }
        await s.sample();
        const to = Date.now(), c1 = cost.value().range!, sec = (to - from) / 1000;
        phases.push({ kind, from, to, switches, observed: [(c1[0] - c0[0]) / sec, (c1[1] - c0[1]) / sec], seen: count('switch') - seen0, unseen: count('switch-unseen') - unseen0 });
      }
    }
  } finally {
    await s.detach().catch(() => undefined);
    s.child?.kill();
  }
  const all = reps();
  // the parses that ran wholly inside each phase
  const within = (p: Phase) => all.filter((x) => x.at - x.ms >= p.from && x.at <= p.to).map((x) => x.ms);
  const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / (xs.length || 1);
  // each phase against the plain phase of its own round (the host drifts over a run), then the median over rounds
  const perRound = (kind: Kind) => phases.map((p, i) => ({ p, plain: phases[i - (i % 4)] })).filter((x) => x.p.kind === kind).map(({ p, plain }) => {
    const sec = (p.to - p.from) / 1000;
    const slow = mean(within(p)) / mean(within(plain)) - 1;
    return {
      slow, parses: within(p).length, switches: p.switches, seen: p.seen, unseen: p.unseen,
      // ms of the thread lost to each switch: the slowdown's share of the phase's time
      perSwitch: p.switches ? (slow / (1 + slow)) * sec * 1000 / p.switches : NaN,
      observed: [p.observed[0] - plain.observed[0], p.observed[1] - plain.observed[0]],
      repMs: mean(within(p)), plainObserved: p.observed,
    };
  });
  const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0);
  const span = (xs: number[], digits: number, scale = 1) => `${fmt(scale * median(xs), digits)} (${fmt(scale * Math.min(...xs), digits)} to ${fmt(scale * Math.max(...xs), digits)})`;
  const label: Record<Kind, string> = {
    plain: 'nothing switched', hot: `${HOT}, in ${PERIOD_MS} ms, out ${PERIOD_MS} ms`,
    pair: `${HOT}, in and at once out, every 200 ms`, never: `${NEVER} (never called), in ${PERIOD_MS} ms, out ${PERIOD_MS} ms`,
  };
  const rows = (['plain', 'hot', 'pair', 'never'] as const).map((kind) => {
    const r = perRound(kind);
    if (kind === 'plain') {
      return [label[kind], '0', '0 / 0', String(sum(r.map((x) => x.parses))), fmt(median(r.map((x) => x.repMs)), 1), '—', '—',
        `${fmt(100 * median(r.map((x) => x.plainObserved[0])), 2)} %`];
    }
    return [
      label[kind], String(sum(r.map((x) => x.switches))), `${sum(r.map((x) => x.seen))} / ${sum(r.map((x) => x.unseen))}`, String(sum(r.map((x) => x.parses))),
      fmt(median(r.map((x) => x.repMs)), 1), `${span(r.map((x) => x.slow), 1, 100)} %`, span(r.map((x) => x.perSwitch), 2),
      `${fmt(100 * median(r.map((x) => x.observed[0])), 1)}-${fmt(100 * median(r.map((x) => x.observed[1])), 1)} %`,
    ];
  });
  return {
    title: 'Switching slots, priced: the observed cost of a switch against the measured slowdown',
    body: [
      `\`bench/targets/work.js esprima\` launched (prepared), parsing without end, sampled every 200 ms with V8's stack samples on; ` +
      `${rounds} round(s) of four ${secs} s phases: nothing switched; a counter at \`${HOT}\`'s entry (15 % of V8's self time) switched in for ${PERIOD_MS} ms and out for ${PERIOD_MS} ms; ` +
      `the same counter put in and at once taken out again every 200 ms (two requests, as a burst of a metric's placements: counted as one switch); ` +
      `the ${PERIOD_MS} ms toggle at \`${NEVER}\`, never called by the parse. ` +
      `Calibrated cost of a switch: ${fmt(cal.switched[0] / 1e6, 2)}-${fmt(cal.switched[1] / 1e6, 2)} ms. ` +
      `Switches: requests that switched the function; seen / unseen: the switches the runtime counted as of a function V8's samples saw running (priced at the calibrated cost) or not (0 to it). ` +
      `Each phase is compared with the plain phase of its own round; medians over the rounds, with their range. ` +
      `Slowdown: the phase's mean ms per parse against the plain phase's; ms per switch: that slowdown's share of the phase's time, per switch request. ` +
      `Observed: the observed cost over the phase, low-high bound, less the plain phase's (the samples, the tool's own work: its value in the plain row).`,
      '',
      table(['switched', 'switches', 'seen / unseen', 'parses', 'ms per parse', 'slowdown', 'ms per switch', 'observed'], rows),
    ],
  };
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const rounds = args.includes('--rounds') ? Number(args[args.indexOf('--rounds') + 1]) : undefined;
  benchSwitching({ quick: args.includes('--quick'), rounds }).then((sec) => {
    process.stdout.write(`### ${sec.title}\n\n- Command: \`node dist/bench/switching.js ${args.join(' ')}\`; Node ${process.version}\n\n${sec.body.join('\n')}\n`);
    process.exit(0);
  }, (e) => { console.error(e); process.exit(1); });
}
