// Stack samples of source-mapped code named as its functions are. The analysis names a
// function of a script with a source map by the map (`hot.ts/crunch`), V8's samples by the
// script (`hot.js/crunch`): the search then found the module on the stack in none of them and
// never refined it. The runtime tags a frame of a file the tool says has a map with the file
// and the function's position ("<key>\u0001<file>\u0001<line>:<column>", see the runtime's
// frameKey); here the tag becomes the name the map gives, as the analysis makes it.
import * as fs from 'fs';
import { moduleNameOf } from '../analysis/module-name';
import { loadSourceMap, originalPosition, type SourceMap } from '../analysis/sourcemap';

const TAG = '\u0001';

export class FrameNames {
  /** per file checked: its source map, or null (none, or unreadable) */
  private readonly maps = new Map<string, SourceMap | null>();
  /** tagged key -> name */
  private readonly names = new Map<string, string>();

  constructor(private readonly cwd: string) {}

  /**
   * Of `files`, those not looked at before that have a source map (read from disk once
   * each, as the analysis reads it: the text's sourceMappingURL, inline or a file beside it).
   */
  newlyMapped(files: Iterable<string>): string[] {
    const out: string[] = [];
    for (const file of files) {
      if (this.maps.has(file)) continue;
      let map: SourceMap | null = null;
      try { map = loadSourceMap(fs.readFileSync(file, 'utf8'), file); } catch { /* gone, or not a file: named as V8 names it */ }
      this.maps.set(file, map);
      if (map) out.push(file);
    }
    return out;
  }

  /** A stack sample's key named by its map where the runtime tagged it; others as they are. */
  name(key: string): string {
    const at = key.indexOf(TAG);
    if (at < 0) return key;
    let named = this.names.get(key);
    if (named === undefined) this.names.set(key, (named = this.byMap(key.slice(0, at), key.slice(at + 1))));
    return named;
  }

  private byMap(plain: string, tag: string): string {
    const [file, position] = tag.split(TAG);
    // a file the runtime tagged itself (it prepared it): its map read now
    if (!this.maps.has(file)) this.newlyMapped([file]);
    const map = this.maps.get(file);
    const [line, column] = (position ?? '').split(':').map(Number);
    const o = map && Number.isInteger(line) && Number.isInteger(column) ? originalPosition(map, line, column) : null;
    if (!o) return plain;
    const name = plain.slice(plain.lastIndexOf('/') + 1);
    // an anonymous function by the line it starts at in the original, as the analysis names it
    return `${moduleNameOf(o.source, this.cwd)}/${name.startsWith('<anonymous>@') ? `<anonymous>@${o.line}` : name}`;
  }

  /** Every key of a sample's stacks named (a function once per stack, at its innermost frame, as before). */
  nameStacks(stacks: [string[], number, boolean?, string[]?, string?][]): void {
    for (const s of stacks) {
      if (!s[0].some((k) => k.includes(TAG)) && !s[3]?.some((c) => c.includes(TAG))) continue;
      s[0] = [...new Set(s[0].map((k) => this.name(k)))];
      if (s[3]) s[3] = s[3].map((c) => { const cut = c.indexOf('\0'); return this.name(c.slice(0, cut)) + c.slice(cut); });
    }
  }
}
