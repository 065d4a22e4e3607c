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
import type { InstructionParts } from './callgrind-parts';
import { BenchOptions, fmt, median, Proc, progress, ROOT, Section, table, TARGETS, callgrindWorkParts } from './lib';

const AGENT = path.join(ROOT, 'dist', 'src', 'agent', 'dormant.js');
/** unscaled: dormant with V8's inlining budgets as they are (src/agent/inlining-budget.ts) */
type Kind = 'plain' | 'dormant' | 'unscaled';

async function instructions(lib: string, reps: number, kind: Kind, cache: string): Promise<InstructionParts> {
  const env = { ...process.env, PARANODE_CACHE_DIR: cache, ...(kind === 'unscaled' ? { PARANODE_INLINING_SCALE: '1' } : {}) };
  return callgrindWorkParts(lib, reps, kind, kind === 'plain' ? [] : ['--import', AGENT], env);
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
      const got: Record<string, InstructionParts> = {};
      const jobs: [Kind, number][] = [['plain', r1], ['dormant', r1], ['plain', r2], ['dormant', r2], ['unscaled', r1], ['unscaled', r2]];
      for (let i = 0; i < jobs.length; i += 2) {
        progress(`dormant: instructions: ${lib}: callgrind runs ${i + 1}-${i + 2} of ${jobs.length}`);
        const pair = jobs.slice(i, i + 2);
        const counts = await Promise.all(pair.map(([k, r]) => instructions(lib, r, k, cache)));
        pair.forEach(([k, r], j) => { got[`${k}${r}`] = counts[j]; });
      }
      const per = (k: Kind, part: keyof InstructionParts) => (got[`${k}${r2}`][part] - got[`${k}${r1}`][part]) / (r2 - r1);
      const ratio = (k: Kind, part: keyof InstructionParts) => { const x = per(k, part) / per('plain', part); return `${fmt(x, 4)} (${fmt((x - 1) * 100, 2)} %)`; };
      const delta = (k: Kind, part: keyof InstructionParts) => { const d = (per(k, part) - per('plain', part)) / 1e6; return `${d >= 0 ? '+' : ''}${fmt(d, 1)}`; };
      rows.push([lib, `${r1} and ${r2}`, fmt(per('plain', 'total') / 1e6, 1), fmt(per('dormant', 'total') / 1e6, 1), ratio('dormant', 'total'),
        fmt(per('plain', 'program') / 1e6, 1), fmt(per('dormant', 'program') / 1e6, 1), `**${ratio('dormant', 'program')}**`,
        delta('dormant', 'compiler'), delta('dormant', 'gc'), ratio('unscaled', 'total'), ratio('unscaled', 'program')]);
    }
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
  return [
    'Instructions (`valgrind --tool=callgrind`, every thread of the process) of `node --predictable bench/targets/work.js <lib> <reps>`, plainly and with ' +
    '`--import dist/src/agent/dormant.js` (warm prepared-code cache). Per repetition = (count at the larger repetition count − at the smaller) ÷ their difference: ' +
    'start-up, loading, preparation and the warm-up repetitions cancel out. Workloads: esprima parses its own source (283 KB) with ranges, locations, tokens and comments; ' +
    'marked renders its README ×20; typescript parses and prints its lib.es5.d.ts (218 KB) with createSourceFile and a printer. ' +
    'Each count is split by function (`callgrind_annotate`, bench/callgrind-parts.ts): **the program\'s own** instructions (V8\'s generated code, its builtins with the ' +
    'interpreter\'s handlers, the runtime they call), V8\'s compilers and parser, and the garbage collector. Under --predictable the last two run on the program\'s thread ' +
    'and move with when a collection or a tier-up falls (a full collection in the warm-up leaves its sweeping to the timed part), so the dormant cost of the slots is read ' +
    'in the program\'s own column; the two others are given as differences (10⁶ a repetition). ' +
    'Unscaled: dormant with V8\'s inlining budgets as V8 has them (`PARANODE_INLINING_SCALE=1`; by default the agent doubles them, see src/agent/inlining-budget.ts).',
    '',
    table(['library', 'repetitions', 'all, plain (10⁶ a rep.)', 'all, dormant', 'all: dormant ÷ plain', 'program\'s own, plain', 'program\'s own, dormant',
      'program\'s own: dormant ÷ plain', 'compilers: dormant − plain', 'collector: dormant − plain', 'unscaled ÷ plain: all', 'unscaled ÷ plain: program\'s own'], rows),
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
