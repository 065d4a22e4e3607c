// Stack samples of source-mapped code named as its functions are. The analysis names a
// function of a script with a source map by the map (`hot.ts/crunch`), V8's samples by the
// script (`hot.js/crunch`): the search then found the module on the stack in none of them and
// never refined it. The runtime tags a frame of a file the tool says has a map with the file
// and the function's position ("<key>\u0001<file>\u0001<line>:<column>", see the runtime's
// frameKey); here the tag becomes the name the map gives, as the analysis makes it.
import * as fs from 'fs';
import { moduleNameOf } from '../analysis/module-name';
import { loadSourceMap, originalPosition, sourceMapAt, type SourceMap } from '../analysis/sourcemap';
import type { StackRecord } from '../agent/cpu-sampler';

const TAG = '\u0001';

export class FrameNames {
  /** per script file read: its source map, or null (none, or unreadable) */
  private readonly maps = new Map<string, SourceMap | null>();
  /** the files the runtime was told of (newlyMapped) */
  private readonly told = new Set<string>();
  /** tagged key -> name, and its function's start line in the original where the map gives it */
  private readonly names = new Map<string, { name: string; line?: number }>();

  constructor(private readonly cwd: string) {}

  /**
   * A script file's source map, read once: from the sourceMappingURL the debugger reported
   * where it gave one that is a file, else from the script's text on disk (inline, or a file
   * beside it, as the analysis reads it).
   */
  mapOf(file: string, url?: string): SourceMap | null {
    let map = this.maps.get(file);
    if (map === undefined) {
      try { map = url !== undefined ? sourceMapAt(url, file) : loadSourceMap(fs.readFileSync(file, 'utf8'), file); } catch { map = null; }
      this.maps.set(file, map);
    }
    return map;
  }

  /** Of these scripts, those with a source map the runtime has not been told of yet (it is, by the caller). */
  newlyMapped(scripts: Iterable<{ file: string; url?: string }>): string[] {
    const out: string[] = [];
    for (const { file, url } of scripts) {
      if (this.told.has(file) || !this.mapOf(file, url)) continue;
      this.told.add(file);
      out.push(file);
    }
    return out;
  }

  /** A stack sample's key named by its map where the runtime tagged it; others as they are. */
  name(key: string): string {
    return this.named(key)?.name ?? key;
  }

  /** A tagged key's name and the line its function starts at in the original (undefined: not tagged). */
  private named(key: string): { name: string; line?: number } | undefined {
    const at = key.indexOf(TAG);
    if (at < 0) return undefined;
    let named = this.names.get(key);
    if (named === undefined) this.names.set(key, (named = this.byMap(key.slice(0, at), key.slice(at + 1))));
    return named;
  }

  private byMap(plain: string, tag: string): { name: string; line?: number } {
    const [file, position] = tag.split(TAG);
    // (a file the runtime tagged itself, having prepared it: its map read now)
    const map = this.mapOf(file);
    const [line, column] = (position ?? '').split(':').map(Number);
    const o = map && Number.isInteger(line) && Number.isInteger(column) ? originalPosition(map, line, column) : null;
    if (!o) return { name: plain };
    const name = plain.slice(plain.lastIndexOf('/') + 1);
    // an anonymous function by the line it starts at in the original, as the analysis names it
    return { name: `${moduleNameOf(o.source, this.cwd)}/${name.startsWith('<anonymous>@') ? `<anonymous>@${o.line}` : name}`, line: o.line };
  }

  /**
   * Every key of a sample's stacks named (a function once per stack, at its innermost frame, as
   * before), and its start line with it: the original's, as the analysis gives its functions.
   */
  nameStacks(stacks: StackRecord[]): void {
    for (const s of stacks) {
      if (!s[0].some((k) => k.includes(TAG)) && !s[3]?.some((c) => c.includes(TAG))) continue;
      const keys: string[] = [], lines: number[] = [];
      s[0].forEach((k, i) => {
        const n = this.named(k);
        const name = n?.name ?? k;
        if (keys.includes(name)) return;
        keys.push(name);
        lines.push(n?.line ?? s[5]?.[i] ?? 0);
      });
      s[0] = keys;
      if (s[5]) s[5] = lines;
      if (s[3]) s[3] = s[3].map((c) => { const cut = c.indexOf('\0'); return this.name(c.slice(0, cut)) + c.slice(cut); });
    }
  }
}
