// Child process of the LiveEdit benchmark: time paranode's LiveEdit planning
// (analysis, slot insertions, the model of V8's diff) on one file, in-process.
// Prints one JSON line. Run as: node dist/bench/plan-child.js <file> <heapBytes>
import * as fs from 'fs';
import { analyzeScript } from '../src/analysis/functions';
import { planLiveEdit } from '../src/instrument/liveedit';

const file = process.argv[2];
const heap = Number(process.argv[3] ?? 0);
const source = fs.readFileSync(file, 'utf8');
let t0 = performance.now();
const { analysis } = analyzeScript(source);
const analyzeMs = performance.now() - t0;
const points = analysis.functions.reduce((n, f) => n + f.points.filter((p) => p.kind !== 'loop').length, 0);
process.stdout.write(JSON.stringify({ phase: 'analyzed', analyzeMs, functions: analysis.functions.length, points }) + '\n');
t0 = performance.now();
const plan = planLiveEdit(source, 1, heap);
const planMs = performance.now() - t0;
const unslotted = new Set(plan.unslotted.map((u) => `${u.fn}:${u.point}`)).size;
const fnsWithout = new Set(plan.unslotted.filter((u) => /old code|cannot be made safe/.test(u.reason)).map((u) => u.fn)).size;
process.stdout.write(JSON.stringify({
  phase: 'planned', analyzeMs, planMs, chars: source.length, functions: analysis.functions.length, points, unslotted,
  droppedFunctions: fnsWithout, predictedPauseMs: plan.predictedPauseMs, unchanged: plan.code === source,
}) + '\n');
