// String helpers for code the tool runs in the target by inspector interrupt.
// Such code can land in the middle of the program's own regular expression,
// and a regexp run there corrupts the one it interrupted (V8's irregexp shares
// one backtrack stack per isolate): Node 22 and 26 segfault or abort in
// malloc, Node 24 too under paranode's attach (reproduced with a main thread
// busy in a deep-backtracking regexp; see docs/BENCHMARKS.md section 16).
// So what runs at every sampling window uses none.

/** The last dot-separated part of a name ("Parser.nextToken" → "nextToken"), as /^.*\./ would strip. */
export function lastPart(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1);
}

/** The words of a command line, split at whitespace (as .split(/\s+/) with empty words left out). */
export function words(s: string): string[] {
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i <= s.length; i++) {
    const c = i < s.length ? s.charCodeAt(i) : 32;
    const space = c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0xfeff || c === 0x2028 || c === 0x2029 || (c >= 0x2000 && c <= 0x200a) || c === 0x1680 || c === 0x202f || c === 0x205f || c === 0x3000;
    if (space) { if (start >= 0) out.push(s.slice(start, i)); start = -1; } else if (start < 0) start = i;
  }
  return out;
}
