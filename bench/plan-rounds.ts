// LiveEdit planning on the scripts of a real server: `planLiveEdit` on each of the
// http section's server's library scripts (Fastify, find-my-way, marked, Handlebars,
// sanitize-html, htmlparser2) and on esprima, in this process, one after another.
// Per script: the plan's time and rounds (each round diffs the whole script again
// with the model of V8's LiveEdit diff), against the baseline of one such diff of
// the same script with every slot in (measured in the same run); points left
// without a slot; scripts the plan gave up.
// `npm run bench -- --only plan-rounds`, or: node dist/bench/plan-rounds.js
import * as fs from 'fs';
import * as path from 'path';
import { analyzeScript } from '../src/analysis/functions';
import { compareStrings } from '../src/instrument/liveedit-diff';
import { MAX_ROUNDS, planLiveEdit } from '../src/instrument/liveedit';
import { applyInsertions, planInsertions } from '../src/instrument/transform';
import { BenchOptions, fmt, progress, ROOT, Section, table } from './lib';

const DIRS = ['fastify', 'fastify/lib', 'find-my-way', 'handlebars/dist/cjs/handlebars', 'handlebars/dist/cjs/handlebars/compiler', 'sanitize-html', 'htmlparser2/dist/commonjs'];
const FILES = ['marked/lib/marked.cjs', 'esprima/dist/esprima.js'];

function scripts(): string[] {
  const nm = path.join(ROOT, 'node_modules');
  const out: string[] = [];
  for (const d of DIRS) {
    const dir = path.join(nm, d);
    for (const f of fs.readdirSync(dir).sort()) if (f.endsWith('.js') && fs.statSync(path.join(dir, f)).isFile()) out.push(path.join(d, f));
  }
  return [...out, ...FILES];
}

export async function benchPlanRounds(opts: BenchOptions): Promise<Section> {
  const files = opts.quick ? scripts().slice(0, 12) : scripts();
  const rows: string[][] = [];
  let planMs = 0, diffMs = 0, rounds = 0, unslotted = 0, points = 0, gaveUp = 0;
  for (const [k, f] of files.entries()) {
    progress(`plan-rounds: ${f} (${k + 1} of ${files.length})`);
    const source = fs.readFileSync(path.join(ROOT, 'node_modules', f), 'utf8');
    // the baseline: one diff of the script with every slot in
    const { fns } = analyzeScript(source);
    const all = applyInsertions(source, planInsertions(source, fns, 1, 'liveedit').ins);
    let t = performance.now();
    compareStrings(source, all);
    const diff = performance.now() - t;
    t = performance.now();
    const plan = planLiveEdit(source, 1, 50e6);
    const ms = performance.now() - t;
    const n = fns.reduce((a, x) => a + x.points.length, 0);
    planMs += ms; diffMs += diff; rounds += plan.rounds; unslotted += plan.unslotted.length; points += n;
    if (plan.rounds >= MAX_ROUNDS) gaveUp++;
    if (ms > 300 || plan.rounds >= MAX_ROUNDS) {
      rows.push([`\`${f}\``, String(source.length), String(n), fmt(diff, 0), fmt(ms, 0), fmt(ms / diff, 1), String(plan.rounds), plan.rounds >= MAX_ROUNDS ? '**gave up**' : String(plan.unslotted.length)]);
    }
  }
  rows.push([`**all ${files.length} scripts**`, '', String(points), fmt(diffMs, 0), fmt(planMs, 0), fmt(planMs / diffMs, 1), String(rounds), `${unslotted}${gaveUp ? ` (${gaveUp} given up)` : ''}`]);
  return {
    title: 'LiveEdit planning on a real server\'s scripts: rounds of the diff model',
    body: [
      `\`planLiveEdit(source, 1, 50e6)\` on each library script of the http section's server and on esprima, one after another in one process (${process.version}). ` +
      'Baseline: one diff of the same script with every slot in, by the model of V8\'s LiveEdit diff (`compareStrings`), measured just before. ' +
      'Rows: scripts whose plan took over 300 ms or gave up, then the total.',
      '',
      table(['script', 'chars', 'points', 'one diff ms', 'plan ms', 'plan ÷ one diff', 'rounds', 'points left without a slot'], rows),
    ],
  };
}

if (require.main === module) {
  benchPlanRounds({ quick: process.argv.includes('--quick') })
    .then((s) => process.stdout.write(`## ${s.title}\n\n${s.body.join('\n')}\n`))
    .catch((e) => { process.stderr.write(`${e.stack ?? e}\n`); process.exit(1); });
}
