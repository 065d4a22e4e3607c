// How a point is named in notes, by the tool and by the in-target runtime
// (no parser here: the runtime loads this file on attach).
import type { PointInfo } from './functions';

/**
 * The key a function has in stack samples: a method by its own name (a stack
 * trace says "Parser.nextToken", the profiler "Parser.prototype.nextToken");
 * an anonymous function by its start line (`<anonymous>@12`, the column of a
 * second one on that line dropped: samples give lines); a function whose name
 * the module has more than once by that name (`parse@10`): samples cannot tell them apart.
 */
export const sampleKey = (code: string): string => code
  .replace(/\/[^/]*\.([^./]*)$/, '/$1')
  .replace(/(\/<anonymous>@\d+):\d+$/, '$1')
  .replace(/(\/(?!<anonymous>)[^/]*)@\d+(?::\d+)?$/, '$1');

export function describePoint(p: PointInfo): string {
  return p.kind === 'exit' ? `exit (${p.exit}) at line ${p.line}` : `${p.kind}${p.callee ? ` ${p.callee}` : ''} at line ${p.line}`;
}
