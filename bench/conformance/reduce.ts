// Reduced examples, for failures where the rewritten text no longer compiles:
// the smallest function, class or statement of the test that compiles as
// written but not once paranode has prepared it on its own.
import type { Failing } from './classify';
export function reduceExample(_root: string, _f: Failing): string | undefined { return undefined; }
