// Predicted cost (section 3.1 of the cost-system paper): before a request is
// inserted, each point it would instrument costs its handler's calibrated cost
// times the point's expected frequency. Frequencies start from static estimates
// by point kind; what the running program shows corrects them: a function's
// entry rate once it has been counted, or a factor over the static estimates.
// A function reached by breakpoints pays once more, on every call, whatever the
// points: V8 never optimizes a function that holds a breakpoint, so its own code
// runs in the interpreter (the calibration's `pinned` factor) for as long as the
// breakpoint is set; that is priced from the share of the thread's time its own
// code takes, which the stack samples show.
import type { PointInfo } from '../analysis/functions';
import { pointMatches } from '../analysis/point-select';
import { mechanismFor, MechanismName } from '../session/mechanisms/mechanism';
import type { Resource, Session } from '../session/session';
import type { Placement, Plan } from '../mdl/evaluate';
import { Calibration, classCost, pinningFactor } from './calibration';

/**
 * Static estimates, runs per second of one point: a function of the program is
 * entered STATIC_ENTRY times a second, a wrapped built-in STATIC_BUILTIN times;
 * each exit of a function runs as often as its entry, each call site and await
 * as often too, times the trips of the loops around it.
 */
export const STATIC_ENTRY = 200;
export const STATIC_BUILTIN = 50;
/**
 * A point inside a loop runs STATIC_TRIPS times per entry for each loop around
 * it (two levels at most): a call site in a loop body was otherwise predicted
 * as if it ran once per entry (createHash() in the cpu-bound demo's 20-round
 * loop, 20 times too cheap).
 */
export const STATIC_TRIPS = 10;

/** Runs of a point per entry of its function: STATIC_TRIPS per enclosing loop, two levels at most. */
export function tripsOf(point: PointInfo, points: readonly PointInfo[]): number {
  const loops = points.filter((l) => l.kind === 'loop' && l.pos <= point.pos && point.end <= l.end && l !== point).length;
  return STATIC_TRIPS ** Math.min(2, loops);
}

/** The cost class a snippet's handler would have when reached by the way `how` (see costClass in the runtime), from its MDL text. */
export function snippetClass(snippet: string, how: MechanismName): string {
  const n = (re: RegExp) => (snippet.match(re) ?? []).length;
  const kinds: [string, number][] = [
    ['n', n(/\+\+/g)],
    ['a', n(/\+=|-=|--/g)],
    ['i', n(/\bif\s*\(/g)],
    ['w', n(/startWallTimer\(|queueIn\(|queueOut\(/g)],
    ['c', n(/startProcessTimer\(/g)],
    ['p', n(/stopTimer\(/g)],
    ['v', n(/\$(file|channel)\(/g)],
    ['k', n(/\b(enter|exit|await|resume)Path\(/g)],
  ];
  return `${how}:${kinds.filter(([, k]) => k > 0).map(([c, k]) => c + k).join('')}`;
}

/** Entries per second of a function when known from the running program (undefined: not known). */
export type EntryRate = (r: Resource) => number | undefined;

/** The share of its thread's time a function's own code takes, from the stack samples (undefined: not known). */
export type SelfShare = (r: Resource) => number | undefined;

/**
 * A function whose own time is not known is priced as if it took this share
 * of its thread: with the calibrated pinning factors (4-30x on this project's
 * machines) its breakpoints cost tens of percent, so where the samples cannot
 * say a function is cold, no limit lets it be pinned.
 */
export const STATIC_SELF = 0.01;

export interface PredictOptions {
  /** scales the static entry estimates of functions whose rate is not known */
  factor?: number;
  /** constraint flags already in place cost nothing more */
  flagsPlaced?: (key: string) => boolean;
  known?: EntryRate;
  selfShare?: SelfShare;
}

/** Runs per second of one placement over one function: the function's known entry rate, else the static estimate. */
function runsOf(p: Placement, r: Resource, known?: EntryRate): number {
  const entry = known?.(r) ?? (r.module.startsWith('node:') ? STATIC_BUILTIN : STATIC_ENTRY);
  const kind = p.point.startsWith('call') || p.point.startsWith('inner') ? 'call' : p.point;
  if (kind === 'entry' || kind === 'exit') return entry;
  if (kind === 'throw') return entry / 100;
  return r.points.filter((x) => pointMatches(p.point, x, r.points)).reduce((a, x) => a + tripsOf(x, r.points), 0) * entry;
}

export interface Prediction {
  /** seconds of instrumentation per second of the target (a fraction of one thread's time), pinning included */
  cost: number;
  /** points the request would instrument */
  points: number;
  /** of the cost, what keeping functions reached by breakpoints in V8's interpreter costs */
  pinned: number;
  /** those functions, the dearest first, with their own share of the thread and what pinning it costs */
  pinning: { path: string; thread: string; share: number; known: boolean; factor: number; cost: number }[];
}

/**
 * The predicted cost of a plan in one session: its own placements and its
 * constraint flags' (those already in place cost nothing more), and the
 * pinning of each function reached by breakpoints, once per function, at the
 * calibrated factor of its shape (a loop: the highest; none: straight-line code's).
 */
export async function predictPlan(plan: Plan, s: Session, cal: Calibration, opts: PredictOptions = {}): Promise<Prediction> {
  const { factor = 1, flagsPlaced = () => false, known, selfShare } = opts;
  const all = [...plan.placements, ...plan.flags.filter((f) => !flagsPlaced(f.key)).flatMap((f) => f.placements)];
  const cache = new Map<string, Resource[]>();
  const pinning = new Map<string, Prediction['pinning'][number]>();
  let cost = 0, points = 0;
  for (const p of all) {
    let rs = cache.get(p.resource);
    if (!rs) cache.set(p.resource, (rs = await s.resources(p.resource)));
    for (const r of rs) {
      const matched = r.points.filter((x) => pointMatches(p.point, x, r.points)).length;
      const how = mechanismFor(r.prepared).name;
      const key = `${r.thread}\0${r.path}`;
      if (how === 'breakpoint' && matched && !pinning.has(key)) {
        const share = selfShare?.(r);
        const own = share ?? STATIC_SELF;
        const factor = pinningFactor(cal, r.points.some((x) => x.kind === 'loop'));
        pinning.set(key, { path: r.path, thread: r.thread, share: own, known: share !== undefined, factor, cost: own * (factor - 1) });
      }
      const runs = runsOf(p, r, known) * (known?.(r) !== undefined ? 1 : factor);
      if (!runs) continue;
      points += matched;
      cost += runs * classCost(cal, snippetClass(p.snippet, how))[1] / 1e9;
    }
  }
  const pins = [...pinning.values()].sort((a, b) => b.cost - a.cost);
  const pinned = pins.reduce((a, x) => a + x.cost, 0);
  return { cost: cost + pinned, points, pinned, pinning: pins };
}
