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

type GlobPart = { lit: string } | { any: 'all' | 'segment' | 'one' };

/**
 * A tester for the regex sources paranode makes of /Code/ globs
 * (probe.ts codeGlobToRegex: ^…$ of literals, `\`-escaped characters,
 * `.*`, `[^/]*` and `[^/]`), matched without a regexp; any other source is
 * left to RegExp (a caller's own pattern).
 */
export function nameTester(source: string): (name: string) => boolean {
  const parts = globParts(source);
  if (!parts) {
    const re = new RegExp(source);
    return (name) => re.test(name);
  }
  return (name) => globMatch(parts, 0, name, 0);
}

function globParts(source: string): GlobPart[] | null {
  if (!source.startsWith('^') || !source.endsWith('$') || source.endsWith('\\$')) return null;
  const parts: GlobPart[] = [];
  const lit = (c: string) => { const last = parts[parts.length - 1]; if (last && 'lit' in last) last.lit += c; else parts.push({ lit: c }); };
  for (let i = 1; i < source.length - 1; i++) {
    const c = source[i];
    if (c === '\\') { if (i + 1 >= source.length - 1) return null; lit(source[++i]); continue; }
    if (source.startsWith('.*', i)) { parts.push({ any: 'all' }); i += 1; continue; }
    if (source.startsWith('[^/]*', i)) { parts.push({ any: 'segment' }); i += 4; continue; }
    if (source.startsWith('[^/]', i)) { parts.push({ any: 'one' }); i += 3; continue; }
    // a character with a meaning of its own in a regexp: not one of ours
    if ('.+*?^$()[]{}|'.includes(c)) return null;
    lit(c);
  }
  return parts;
}

function globMatch(parts: GlobPart[], p: number, s: string, i: number): boolean {
  for (; p < parts.length; p++) {
    const part = parts[p];
    if ('lit' in part) {
      if (!s.startsWith(part.lit, i)) return false;
      i += part.lit.length;
    } else if (part.any === 'one') {
      if (i >= s.length || s[i] === '/') return false;
      i++;
    } else {
      // the rest must match from some end of this run (names are short: the tries are few)
      const stop = part.any === 'all' ? s.length : (s.indexOf('/', i) < 0 ? s.length : s.indexOf('/', i));
      for (let j = stop; j >= i; j--) if (globMatch(parts, p + 1, s, j)) return true;
      return false;
    }
  }
  return i === s.length;
}

