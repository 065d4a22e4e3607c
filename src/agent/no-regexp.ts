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
