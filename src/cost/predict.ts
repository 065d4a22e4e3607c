// Predicted cost (section 3.1 of the cost-system paper): before a request is
// inserted, each point it would instrument costs its handler's calibrated cost
// times the point's expected frequency. Frequencies start from static estimates
// by point kind; what the running program shows corrects them: a function's
// entry rate once it has been counted, or a factor over the static estimates.
import type { PointInfo } from '../analysis/functions';
import { pointMatches } from '../analysis/point-select';
import { mechanismFor, MechanismName } from '../session/mechanisms/mechanism';
import type { Resource, Session } from '../session/session';
import type { Placement, Plan } from '../mdl/evaluate';
import { Calibration, classCost } from './calibration';

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
    ['w', n(/startWallTimer\(/g)],
    ['c', n(/startProcessTimer\(/g)],
    ['p', n(/stopTimer\(/g)],
    ['v', n(/\$(file|channel)\(/g)],
  ];
  return `${how}:${kinds.filter(([, k]) => k > 0).map(([c, k]) => c + k).join('')}`;
}

/** Entries per second of a function when known from the running program (undefined: not known). */
export type EntryRate = (r: Resource) => number | undefined;

/** Runs per second of one placement over one function: the function's known entry rate, else the static estimate. */
function runsOf(p: Placement, r: Resource, known?: EntryRate): number {
  const entry = known?.(r) ?? (r.module.startsWith('node:') ? STATIC_BUILTIN : STATIC_ENTRY);
  const kind = p.point.startsWith('call') || p.point.startsWith('inner') ? 'call' : p.point;
  if (kind === 'entry' || kind === 'exit') return entry;
  if (kind === 'throw') return entry / 100;
  return r.points.filter((x) => pointMatches(p.point, x, r.points)).reduce((a, x) => a + tripsOf(x, r.points), 0) * entry;
}

export interface Prediction {
  /** seconds of instrumentation per second of the target (a fraction of one thread's time) */
  cost: number;
  /** points the request would instrument */
  points: number;
}

/**
 * The predicted cost of a plan in one session: its own placements and its
 * constraint flags' (`flagsPlaced`: flags already in place cost nothing more).
 * `known` gives functions' counted entry rates; `factor` scales the static
 * estimates of the others.
 */
export async function predictPlan(plan: Plan, s: Session, cal: Calibration, factor = 1, flagsPlaced: (key: string) => boolean = () => false, known?: EntryRate): Promise<Prediction> {
  const all = [...plan.placements, ...plan.flags.filter((f) => !flagsPlaced(f.key)).flatMap((f) => f.placements)];
  const cache = new Map<string, Resource[]>();
  let cost = 0, points = 0;
  for (const p of all) {
    let rs = cache.get(p.resource);
    if (!rs) cache.set(p.resource, (rs = await s.resources(p.resource)));
    for (const r of rs) {
      const runs = runsOf(p, r, known) * (known?.(r) !== undefined ? 1 : factor);
      if (!runs) continue;
      points += r.points.filter((x) => pointMatches(p.point, x, r.points)).length;
      cost += runs * classCost(cal, snippetClass(p.snippet, mechanismFor(r.prepared).name))[1] / 1e9;
    }
  }
  return { cost, points };
}
