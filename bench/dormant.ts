// The dormant agent's costs (issue #15): what a process started with
// `--import paranode/agent` pays while nobody is attached, in instructions
// (callgrind, as section 6: whole process, the work's share by the difference
// of two repetition counts), and what a counter placed on attach costs per
// counted call (timed in the program, slots off against on).
// `npm run bench -- --only dormant`, or: node dist/bench/dormant.js [--quick] [--skip-instructions]
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Session } from '../src/api';
import { BenchOptions, fmt, median, Proc, progress, ROOT, Section, table, TARGETS, callgrindWork } from './lib';

const AGENT = path.join(ROOT, 'dist', 'src', 'agent', 'dormant.js');
/** unscaled: dormant with V8's inlining budgets as they are (src/agent/inlining-budget.ts) */
type Kind = 'plain' | 'dormant' | 'unscaled';

async function instructions(lib: string, reps: number, kind: Kind, cache: string): Promise<number> {
  const env = { ...process.env, PARANODE_CACHE_DIR: cache, ...(kind === 'unscaled' ? { PARANODE_INLINING_SCALE: '1' } : {}) };
  return callgrindWork(lib, reps, kind, kind === 'plain' ? [] : ['--import', AGENT], env);
}

async function dormantInstructions(opts: BenchOptions): Promise<string[]> {
  if (spawnSync('valgrind', ['--version']).status !== 0) return ['Instructions: not measured, valgrind is not installed.'];
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-cg-cache-'));
  // a window of many repetitions: under --predictable the garbage collector's incremental marking runs in
  // bursts of slow repetitions (4-8× for a dozen of them), and a short window holds one or not by chance
  // (esprima, old call-site shape: 186 per repetition over 1..4, 251 over 1..13, 273 over 4..13)
  const plan = opts.quick ? [{ lib: 'marked', r1: 5, r2: 105 }] : [{ lib: 'esprima', r1: 1, r2: 13 }, { lib: 'marked', r1: 5, r2: 205 }, { lib: 'typescript', r1: 2, r2: 20 }];
  const rows: string[][] = [];
  try {
    for (const { lib, r1, r2 } of plan) {
      // fill the prepared-code cache natively first: preparation is start-up, not the work
      spawnSync(process.execPath, ['--import', AGENT, 'work.js', lib, '1'], { cwd: TARGETS, env: { ...process.env, PARANODE_CACHE_DIR: cache } });
      const got: Record<string, number> = {};
      const jobs: [Kind, number][] = [['plain', r1], ['dormant', r1], ['plain', r2], ['dormant', r2], ['unscaled', r1], ['unscaled', r2]];
      for (let i = 0; i < jobs.length; i += 2) {
        progress(`dormant: instructions: ${lib}: callgrind runs ${i + 1}-${i + 2} of ${jobs.length}`);
        const pair = jobs.slice(i, i + 2);
        const counts = await Promise.all(pair.map(([k, r]) => instructions(lib, r, k, cache)));
        pair.forEach(([k, r], j) => { got[`${k}${r}`] = counts[j]; });
      }
      const per = (k: Kind) => (got[`${k}${r2}`] - got[`${k}${r1}`]) / (r2 - r1);
      const plain = per('plain'), dormant = per('dormant'), unscaled = per('unscaled');
      const ratio = (x: number) => `${fmt(x / plain, 4)} (${fmt((x / plain - 1) * 100, 2)} %)`;
      rows.push([lib, `${r1} and ${r2}`, fmt(got[`plain${r1}`] / 1e9, 3), fmt(got[`dormant${r1}`] / 1e9, 3), fmt(plain / 1e6, 1), fmt(dormant / 1e6, 1),
        ratio(dormant), fmt(unscaled / 1e6, 1), ratio(unscaled)]);
    }
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
  return [
    'Instructions (`valgrind --tool=callgrind`, every thread of the process) of `node --predictable bench/targets/work.js <lib> <reps>`, plainly and with ' +
    '`--import dist/src/agent/dormant.js` (warm prepared-code cache). Per repetition = (count at the larger repetition count − at the smaller) ÷ their difference: ' +
    'start-up, loading, preparation and the warm-up repetitions cancel out. Workloads: esprima parses its own source (283 KB) with ranges, locations, tokens and comments; ' +
    'marked renders its README ×20; typescript parses and prints its lib.es5.d.ts (218 KB) with createSourceFile and a printer. ' +
    'Unscaled: dormant with V8\'s inlining budgets as V8 has them (`PARANODE_INLINING_SCALE=1`; by default the agent doubles them, see src/agent/inlining-budget.ts).',
    '',
    table(['library', 'repetitions', 'whole run, plain (10⁹ instr.)', 'whole run, dormant (10⁹)', 'per repetition, plain (10⁶)', 'per repetition, dormant (10⁶)', 'dormant ÷ plain',
      'per repetition, unscaled (10⁶)', 'unscaled ÷ plain'], rows),
  ];
}

/** ns per call of f, slots off (dormant) against a counter on f (attached), and the plain program. */
async function counterCost(opts: BenchOptions): Promise<string[]> {
  const k = 21, m = 20_000_000;
  const rounds = opts.quick ? 2 : 5;
  const plain = Proc.spawn('dormant-counter.js');
  const dormant = Proc.spawn('dormant-counter.js', [], TARGETS, ['--import', AGENT]);
  const ask = async (p: Proc) => { const r = await p.request(`run ${k} ${m}`, /ns (\S+) (\d+)/); return { ns: Number(r[1]), calls: Number(r[2]) }; };
  const off: number[] = [], on: number[] = [], base: number[] = [];
  let exact = true;
  try {
    await plain.waitFor(/ready/, 0);
    await dormant.waitFor(/ready/, 0);
    for (let i = 0; i < rounds; i++) {
      progress(`dormant: counter cost, round ${i + 1} of ${rounds}`);
      base.push((await ask(plain)).ns);
      off.push((await ask(dormant)).ns);
      const s = await Session.attach(dormant.pid);
      const r = await s.probe('/Code/dormant-counter.js/f.entry: n++');
      if (r.bySlot !== 1 || r.placed !== 1) throw new Error(`counter not placed by slot: ${JSON.stringify(r)}`);
      const got = await ask(dormant);
      on.push(got.ns);
      await s.sample();
      if (s.value('n') !== got.calls) exact = false;
      await s.detach();
    }
  } finally {
    plain.child.kill();
    dormant.child.kill();
  }
  const b = median(base), o = median(off), n = median(on);
  return [
    `Counter cost: bench/targets/dormant-counter.js calls \`function f(x) { return (x + 1) | 0; }\` ${m.toLocaleString('en')} times in a loop, ${k} times over, and prints the median ns per call; ` +
    `a plain process and a dormant one take turns, ${rounds} rounds; in each round the dormant one runs once dormant (slots off), then \`Session.attach\` places ` +
    '`/Code/dormant-counter.js/f.entry: n++` (by slot) and it runs again, then the tool detaches. Medians over the rounds, ns per call:',
    '',
    table(['plain', 'dormant, slots off', 'attached, counter on', 'counter cost per counted call', 'counts exact'], [[fmt(b, 3), fmt(o, 3), fmt(n, 3), fmt(n - o, 3), exact ? 'yes' : '**no**']]),
    '',
    `Rounds (plain / off / on): ${base.map((x, i) => `${fmt(x, 2)} / ${fmt(off[i], 2)} / ${fmt(on[i], 2)}`).join('; ')}.`,
  ];
}

export async function benchDormant(opts: BenchOptions & { skipInstructions?: boolean }): Promise<Section> {
  const body = await counterCost(opts);
  if (!opts.skipInstructions) body.push('', ...(await dormantInstructions(opts)));
  return { title: 'The dormant agent: cost while dormant, and of a counter placed on attach', body };
}

if (require.main === module) {
  const args = process.argv.slice(2);
  benchDormant({ quick: args.includes('--quick'), skipInstructions: args.includes('--skip-instructions') }).then((s) => {
    process.stdout.write(`## ${s.title}\n\n${s.body.join('\n')}\n`);
  }).catch((e) => { process.stderr.write(`${e?.stack ?? e}\n`); process.exit(1); });
}
