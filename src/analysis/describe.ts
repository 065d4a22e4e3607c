// How a point is named in notes, by the tool and by the in-target runtime
// (no parser here: the runtime loads this file on attach).
import type { PointInfo } from './functions';

/** A function as stack samples name it: "<module>/<own name>" (a method without its class). */
export const sampleKey = (code: string): string => code.replace(/\/[^/]*\.([^./]*)$/, '/$1');

export function describePoint(p: PointInfo): string {
  return p.kind === 'exit' ? `exit (${p.exit}) at line ${p.line}` : `${p.kind}${p.callee ? ` ${p.callee}` : ''} at line ${p.line}`;
}
