// The parts of a search node's focus the consultant reads.
import { parseCallSite, parseLoop, splitFocus } from '../metrics/focus';

/** The /Code part without "/Code/" ("<module>" or "<module>/<function>"), if any. */
export const codeOf = (focus: string): string | undefined => splitFocus(focus).find((p) => p.startsWith('/Code/'))?.slice(6);

/** Which level of /Code a search node is at, given its parent's focus (undefined: no /Code part). */
export function codeLevel(focus: string, parentFocus: string | undefined): 'module' | 'function' | 'callsite' | 'loop' | undefined {
  const code = codeOf(focus);
  if (code === undefined) return undefined;
  if (parseCallSite(`/Code/${code}`)) return 'callsite';
  if (parseLoop(`/Code/${code}`)) return 'loop';
  return parentFocus !== undefined && codeOf(parentFocus) !== undefined ? 'function' : 'module';
}

/** The /Thread part as "<pid>/<thread>", if any. */
export const threadOf = (focus: string): string | undefined => splitFocus(focus).find((p) => p.startsWith('/Thread/'))?.slice(8);

/** The thread label ('main' or a worker id) a focus is in: 'main' without a /Thread part. */
export const threadLabel = (focus: string): string => threadOf(focus)?.split('/')[1] ?? 'main';

export { sampleKey } from '../session/series';
