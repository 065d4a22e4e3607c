// The ways into a target: how a probe's handlers are reached at a point, and
// what reaching them costs. Which way reaches a function is fixed when its
// script is registered with the in-target runtime (its `how`): slots prepared
// at load or by LiveEdit, a wrapper around a built-in's export, or conditional
// breakpoints for a script that could not be prepared; in a prepared script a
// point that has no slot falls back to a breakpoint. The cost system prices a
// handler run through the way that reaches it (cost/calibration classCost,
// cost/predict), never by knowing each way itself.
//
// Placing, per thread: the in-target runtime places by slot and by wrapping
// (R.addProbe, see session/thread.ts); ThreadLiveEdits (./liveedit) prepares
// loaded scripts for slots; ThreadBreakpoints (./breakpoints) places the rest.
import type { Mechanism as ScriptHow } from '../../agent/runtime';

/** ns per run: [in optimized code, in code V8 did not optimize] */
export type Pair = [number, number];

export type MechanismName = 'slot' | 'wrap' | 'breakpoint';

/** What reaching a handler costs per run, by way: the calibration of this machine (Calibration.mechanism). */
export type ReachRates = Record<MechanismName, Pair>;

/** How the runtime registered a function's script (RuntimeScript.how), or 'no' for one not prepared yet (Resource.prepared). */
export type Prepared = ScriptHow | 'no';

/** One way into a target. */
export interface Mechanism {
  /** its name in cost classes ("slot:n1"), in the calibration and in placement counts */
  readonly name: MechanismName;
  /** whether the functions of a script registered as `how` are reached this way */
  reaches(how: Prepared): boolean;
  /** ns that reaching one run of a handler this way adds to the handler's own primitives: [low, high] */
  price(rates: ReachRates): Pair;
}

/** The calibrated pair of a way, as [low, high]. */
const calibrated = (name: MechanismName) => (rates: ReachRates): Pair => [Math.min(...rates[name]), Math.max(...rates[name])];

/**
 * Slots: every point of a function prepared at load or by LiveEdit has one,
 * switched by an assignment in the target (about a nanosecond per call). Code
 * not prepared yet is predicted as slotted: it is LiveEdited when a probe needs it.
 */
export const SLOT: Mechanism = {
  name: 'slot',
  reaches: (how) => how === 'load' || how === 'liveedit' || how === 'no',
  price: calibrated('slot'),
};

/** A Proxy around an exported function of a Node.js built-in module (its export replaced). */
export const WRAP: Mechanism = {
  name: 'wrap',
  reaches: (how) => how === 'wrap',
  price: calibrated('wrap'),
};

/**
 * A conditional breakpoint that runs the point's handlers and never pauses: a
 * debugger evaluation per hit. Reaches every point of a script that was not
 * prepared (and, point by point, those without a slot in a prepared one).
 */
export const BREAKPOINT: Mechanism = {
  name: 'breakpoint',
  reaches: (how) => how === 'breakpoint',
  price: calibrated('breakpoint'),
};

export const MECHANISMS: readonly Mechanism[] = [SLOT, WRAP, BREAKPOINT];

/** The way that reaches the functions of a script registered as `how`. */
export function mechanismFor(how: Prepared): Mechanism {
  return MECHANISMS.find((m) => m.reaches(how)) ?? SLOT;
}

/** The way a cost class names ("wrap" of "wrap:n1"); a name it does not know is a slot's. */
export function mechanismNamed(name: string): Mechanism {
  return MECHANISMS.find((m) => m.name === name) ?? SLOT;
}

/** How many of a probe's points each way took in one thread, and how many none could reach. */
export type PlacedCounts = Record<MechanismName, number> & { missed: number };
