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
export function sampleKey(code: string): string {
  // by hand, not by regexp: the runtime names the functions it switched with it, by interrupt
  // (src/agent/no-regexp.ts); as /\/[^/]*\.([^./]*)$/ → '/$1', /(\/<anonymous>@\d+):\d+$/ → '$1',
  // /(\/(?!<anonymous>)[^/]*)@\d+(?::\d+)?$/ → '$1', one after the other
  const slash = code.lastIndexOf('/');
  if (slash < 0) return code;
  const head = code.slice(0, slash + 1);
  let last = code.slice(slash + 1);
  if (last.includes('.')) last = last.slice(last.lastIndexOf('.') + 1);
  if (last.startsWith('<anonymous>@')) {
    const colon = last.lastIndexOf(':');
    if (colon > 12 && digits(last, 12, colon) && digits(last, colon + 1, last.length)) last = last.slice(0, colon);
  }
  if (last.startsWith('<anonymous>')) return head + last;
  const at = last.lastIndexOf('@');
  if (at >= 0) {
    const colon = last.indexOf(':', at);
    const numbered = colon < 0 ? digits(last, at + 1, last.length) : digits(last, at + 1, colon) && digits(last, colon + 1, last.length);
    if (numbered) last = last.slice(0, at);
  }
  return head + last;
}

/** s[from, to) is one or more ASCII digits. */
function digits(s: string, from: number, to: number): boolean {
  if (to <= from) return false;
  for (let i = from; i < to; i++) if (s.charCodeAt(i) < 48 || s.charCodeAt(i) > 57) return false;
  return true;
}

export function describePoint(p: PointInfo): string {
  return p.kind === 'exit' ? `exit (${p.exit}) at line ${p.line}` : `${p.kind}${p.callee ? ` ${p.callee}` : ''} at line ${p.line}`;
}
