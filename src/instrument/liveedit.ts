// Preparing an already-loaded script by LiveEdit: one batched edit that places
// slots at all its points, predicted safe against V8's diff before it is sent,
// refused when its predicted pause is over the limit, retried while a function
// it changes is active, and verified after.
import * as path from 'path';
import { Worker } from 'worker_threads';
import { analyzeScript, AnalyzedFunction, Naming, ScriptAnalysis } from '../analysis/functions';
import { applyInsertions, bodyEnd, Insertion, planInsertions } from './transform';
import { Change, compareStrings, damagedLiterals, Literal, v8LiteralStart } from './liveedit-diff';

export interface LiveEditPlan {
  code: string;
  analysis: ScriptAnalysis;
  /** points without a slot and why */
  unslotted: { fn: number; point: number; reason: string }[];
  /** predicted pause of the target in ms */
  predictedPauseMs: number;
  /** functions whose insertions were dropped so that LiveEdit maps them */
  dropped: number;
  /** the insertions made: where a position of the original text is in the new one */
  ins: Insertion[];
  /** rounds of the model of V8's diff the plan took (each diffs the whole script) */
  rounds: number;
}

/**
 * Pause model fitted to the figures measured on Node 20 (DESIGN.md §2): a heap
 * walk that grows with the heap, plus re-parsing and recompiling the script.
 */
export function predictPauseMs(heapBytes: number, scriptChars: number): number {
  return 2 + 7 * (heapBytes / 1e6) + 0.004 * scriptChars;
}

const PAD_VARIANTS = ['void 0;', ' ', '0;', ';;'];
/** rounds of remedies before the plan gives up the whole script */
export const MAX_ROUNDS = 60;
const PAD_RE = /(void 0;| |0;|;;)$/;

export function planLiveEdit(source: string, scriptNo: number, heapBytes: number, naming?: Naming): LiveEditPlan {
  const { analysis, fns } = analyzeScript(source, undefined, naming);
  const plan = planInsertions(source, fns, scriptNo, 'liveedit');
  let ins = plan.ins;
  const unslotted = [...plan.unslotted];
  const oldLits = literals(source, fns);
  const throwOf = (fn: number) => fns[fn].points.findIndex((q) => q.exit === 'throw');
  const endOf = (fn: number) => fns[fn].points.findIndex((q) => q.exit === 'end');
  // per damaged function, the next remedy to try: 1..PAD_VARIANTS.length pad the
  // slots before its closing brace (V8's diff may align an inserted '}' with the
  // function's own), then drop its try/catch wrapper, then drop all its slots
  const stage = new Map<number, number>();
  const TRY_STAGE = PAD_VARIANTS.length + 1;
  let dropped = 0;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const code = applyInsertions(source, ins);
    const diffs = compareStrings(source, code);
    const damaged = damagedLiterals(oldLits, literalsAfter(oldLits, ins), diffs);
    if (damaged.size === 0) {
      return { code, analysis, unslotted: dedupe(unslotted), predictedPauseMs: predictPauseMs(heapBytes, source.length), dropped, ins, rounds: round + 1 };
    }
    const drop = new Set<number>();
    const dropPoint = new Set<string>();
    const noTry = new Set<number>();
    const pad = new Map<number, number>();
    const covers = (d: Change, p: number) => (d.start < p && p < d.end) || (d.start === d.end ? d.start === p : d.start <= p && p <= d.end);
    for (const id of damaged) {
      let st = (stage.get(id) ?? 0) + 1;
      // a pad moves only the slots before the closing brace, within a line: no help where the
      // function's start is inside a change, or an end inside a run of lines changed whole
      // (each round diffs the whole script again: a round saved is ~0.1-0.4 s of a real one)
      const lit = oldLits[id];
      if (st < TRY_STAGE && diffs.some((d) => covers(d, lit.start) || (d.whole && covers(d, lit.end)))) st = TRY_STAGE;
      if (st === TRY_STAGE && !ins.some((x) => x.fn === id && x.point === throwOf(id))) st++;
      stage.set(id, st);
      if (st < TRY_STAGE) pad.set(id, st);
      else if (st === TRY_STAGE) noTry.add(id);
      else {
        drop.add(id);
        // the changed range over a boundary may come from other functions' slots
        // (an inserted closer at its end, a run of changed lines over 800 chars)
        for (const d of diffs) {
          if (!covers(d, lit.start) && !covers(d, lit.end)) continue;
          for (const x of ins) if (x.pos >= d.start - 2 && x.pos <= d.end + 2) drop.add(x.fn);
        }
        // still damaged with no slot of its own: another function's text beside its start or
        // end (`.map(s => s.trim())`: the call's inserted ')' aligned before the arrow's own)
        if (st > TRY_STAGE + 1) {
          for (const x of ins) if (Math.abs(x.pos - lit.start) <= 2 || Math.abs(x.pos - lit.end) <= 2) dropPoint.add(`${x.fn}:${x.point}`);
        }
      }
    }
    ins = ins.flatMap((x) => {
      if (dropPoint.has(`${x.fn}:${x.point}`) && !drop.has(x.fn)) {
        unslotted.push({ fn: x.fn, point: x.point, reason: 'LiveEdit would not map the function beside this slot' });
        return [];
      }
      if (drop.has(x.fn)) {
        unslotted.push({ fn: x.fn, point: x.point, reason: 'LiveEdit would leave this function on its old code' });
        return [];
      }
      if (noTry.has(x.fn) && x.point === throwOf(x.fn)) {
        unslotted.push({ fn: x.fn, point: x.point, reason: 'LiveEdit would not map the try/catch wrapper' });
        return [];
      }
      const k = pad.get(x.fn);
      if (k && (x.point === throwOf(x.fn) || x.point === endOf(x.fn)) && x.pos === bodyEnd(fns[x.fn].node.body)) {
        return [{ ...x, text: x.text.replace(PAD_RE, '') + PAD_VARIANTS[k - 1] }];
      }
      return [x];
    });
    dropped += drop.size;
  }
  // give up on slots for the whole script
  for (const x of ins) unslotted.push({ fn: x.fn, point: x.point, reason: 'LiveEdit cannot be made safe for this script' });
  return { code: source, analysis, unslotted: dedupe(unslotted), predictedPauseMs: 0, dropped, ins: [], rounds: MAX_ROUNDS };
}

function dedupe(list: LiveEditPlan['unslotted']): LiveEditPlan['unslotted'] {
  const seen = new Set<string>();
  return list.filter((u) => { const k = `${u.fn}:${u.point}`; if (seen.has(k)) return false; seen.add(k); return true; });
}

function literals(source: string, fns: AnalyzedFunction[]): Literal[] {
  return fns.map((f) => ({ id: f.index, start: v8LiteralStart(source, f.node), end: f.node.end }));
}

/** Where the old literals land in the new text, given our insertions. */
function literalsAfter(oldLits: Literal[], ins: Insertion[]): Literal[] {
  // Insertions at a literal's start belong inside it only if they sort after
  // the start; we place none there by construction except openers of
  // expressions that start with the literal (those sit before it).
  const sorted = [...ins].sort((a, b) => a.pos - b.pos);
  const prefixLen: number[] = [];
  let acc = 0;
  for (const x of sorted) { acc += x.text.length; prefixLen.push(acc); }
  const shiftBefore = (pos: number, inclusive: boolean) => {
    let lo = 0, hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid].pos < pos || (inclusive && sorted[mid].pos === pos)) lo = mid + 1; else hi = mid;
    }
    return lo === 0 ? 0 : prefixLen[lo - 1];
  };
  return oldLits.map((l) => ({
    id: l.id,
    start: l.start + shiftBefore(l.start, true),
    end: l.end + shiftBefore(l.end, false),
  }));
}

/**
 * The worker that plans (one per tool process, made when a plan needs it, not keeping
 * the process alive, ended after PLANNER_IDLE_MS without a plan); plans are asked of
 * it in turn.
 */
let planner: { worker: Worker; idle?: NodeJS.Timeout } | null = null;
let planTurn: Promise<unknown> = Promise.resolve();
let plansPending = 0;
let planIds = 1;
const PLANNER_IDLE_MS = 10_000;

function currentPlanner(): { worker: Worker; idle?: NodeJS.Timeout } {
  if (!planner) {
    const worker = new Worker(path.join(__dirname, 'plan-worker.js'));
    worker.unref();
    planner = { worker };
  }
  clearTimeout(planner.idle);
  return planner;
}

/**
 * planLiveEdit in a worker thread, given up after limitMs (then rejects with
 * PlanTimeout, so that the caller can fall back to another mechanism). Plans run
 * one at a time in one worker; one given up ends that worker (a plan cannot be
 * stopped midway) and the next plan starts another.
 */
export function planLiveEditOffThread(source: string, scriptNo: number, heapBytes: number, naming: Naming, limitMs: number): Promise<LiveEditPlan> {
  const id = planIds++;
  plansPending++;
  const mine = planTurn.catch(() => undefined).then(() => new Promise<LiveEditPlan>((resolve, reject) => {
    const p = currentPlanner();
    const w = p.worker;
    const done = () => { clearTimeout(timer); w.off('message', onMessage); w.off('error', onError); w.off('exit', onExit); };
    const gone = () => { if (planner === p) planner = null; };
    const onMessage = (m: { id: number; plan?: LiveEditPlan; error?: string }) => {
      if (m.id !== id) return;
      done();
      if (m.plan) resolve(m.plan); else reject(new Error(m.error));
    };
    const onError = (e: Error) => { done(); gone(); reject(e); };
    const onExit = (code: number) => { done(); gone(); reject(new Error(`the LiveEdit planner stopped (exit ${code})`)); };
    const timer = setTimeout(() => { done(); gone(); void w.terminate(); reject(new PlanTimeout(limitMs)); }, limitMs);
    w.on('message', onMessage);
    w.once('error', onError);
    w.once('exit', onExit);
    w.postMessage({ id, source, scriptNo, heapBytes, naming });
  }));
  planTurn = mine;
  const settled = () => {
    if (--plansPending > 0 || !planner) return;
    const p = planner;
    p.idle = setTimeout(() => { if (planner === p && plansPending === 0) { planner = null; void p.worker.terminate(); } }, PLANNER_IDLE_MS);
    p.idle.unref();
  };
  mine.then(settled, settled);
  return mine;
}

export class PlanTimeout extends Error {
  constructor(readonly limitMs: number) { super(`planning the LiveEdit took longer than ${limitMs / 1000} s`); }
}
