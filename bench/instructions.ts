// 6. The prepared-but-off overhead counted in instructions, not seconds: on
// this shared machine the timing of section 5 varies by 10-20 % from run to
// run, far over the 2 % goal. Valgrind's callgrind counts the instructions the
// whole process executes (all threads), which does not depend on what else the
// machine does (V8 runs in --predictable mode so that it repeats). The work's own count is the difference of two runs with
// different repetition counts, so start-up, module loading, load-time
// preparation and the untimed warm-up repetitions cancel out.
import { spawnSync } from 'child_process';
import * as path from 'path';
import { BenchOptions, fmt, progress, Section, table, TARGETS, callgrindWork } from './lib';

type Kind = 'plain' | 'slots';

async function instructions(lib: string, reps: number, kind: Kind): Promise<number> {
  return callgrindWork(lib, reps, kind, kind === 'slots' ? ['-r', path.join(TARGETS, 'slots-only.js')] : []);
}

export async function benchInstructions(opts: BenchOptions): Promise<Section> {
  const title = '6. A real workload prepared with nothing switched on, in instructions';
  if (spawnSync('valgrind', ['--version']).status !== 0) {
    return { title, body: ['Not measured: valgrind is not installed (`apt-get install valgrind`).'] };
  }
  // esprima: ~5 s per repetition under callgrind; marked is fast
  const plan: { lib: string; r1: number; r2: number }[] = opts.quick ? [{ lib: 'marked', r1: 5, r2: 25 }] : [{ lib: 'esprima', r1: 1, r2: 4 }, { lib: 'marked', r1: 5, r2: 45 }];
  const rows: string[][] = [];
  for (const { lib, r1, r2 } of plan) {
    const got: Record<string, number> = {};
    // two at a time (instruction counts do not mind sharing the machine)
    const jobs: [Kind, number][] = [['plain', r1], ['slots', r1], ['plain', r2], ['slots', r2]];
    for (let i = 0; i < jobs.length; i += 2) {
      progress(`instructions: ${lib}: callgrind runs ${i + 1}-${i + 2} of 4`);
      const pair = jobs.slice(i, i + 2);
      const counts = await Promise.all(pair.map(([k, r]) => instructions(lib, r, k)));
      pair.forEach(([k, r], j) => { got[`${k}${r}`] = counts[j]; });
    }
    const per = (k: Kind) => (got[`${k}${r2}`] - got[`${k}${r1}`]) / (r2 - r1);
    const plain = per('plain'), slots = per('slots');
    rows.push([lib, `${r1} and ${r2}`, fmt(got[`plain${r1}`] / 1e9, 3), fmt(got[`slots${r1}`] / 1e9, 3), fmt(plain / 1e6, 1), fmt(slots / 1e6, 1),
      `${fmt(slots / plain, 4)} (${fmt((slots / plain - 1) * 100, 2)} %)`]);
  }
  return {
    title,
    body: [
      'Method: `valgrind --tool=callgrind` counts the instructions the whole process executes (every thread) for `node --predictable bench/targets/work.js <lib> <reps>` ' +
      '(V8\'s predictable mode: no concurrent compilation or parallel GC; without it two identical runs differed by 10 %, with it by 0.002 %), ' +
      'plainly and with `-r bench/targets/slots-only.js` (every module prepared at load with its slots, all off, as under `Session.launch`). ' +
      'Instructions per repetition of the work = (count at the larger repetition count − count at the smaller) ÷ their difference, so start-up, ' +
      'loading, preparation and warm-up cancel out. Instruction counts do not depend on the machine\'s load; they are not time (a cache miss costs more than an add).',
      '',
      table(['library', 'repetitions', 'whole run, plain (10⁹ instr., fewer reps)', 'whole run, prepared (10⁹)', 'per repetition, plain (10⁶)', 'per repetition, prepared (10⁶)', 'prepared ÷ plain'], rows),
    ],
  };
}
