// Naming by source maps: a script produced by TypeScript (tsc, tsx, ts-node)
// names its functions by their original file and line.
import * as fs from 'fs';
import * as path from 'path';
import { SourceMapConsumer } from 'source-map-js';

export interface OriginalPosition { source: string; line: number; column: number }

export type SourceMap = { consumer: SourceMapConsumer; base: string };

/** The source map of a script, from its sourceMappingURL comment (inline data: URL or a file beside it). */
export function loadSourceMap(source: string, filename: string | undefined): SourceMap | null {
  const m = /\/\/[#@] sourceMappingURL=(\S+)\s*$/.exec(source.slice(-200000));
  return m ? sourceMapAt(m[1], filename) : null;
}

/** The source map a script's sourceMappingURL names (as V8's debugger reports it), null where it cannot be read. */
export function sourceMapAt(url: string, filename: string | undefined): SourceMap | null {
  let json: string;
  try {
    if (url.startsWith('data:')) {
      const comma = url.indexOf(',');
      const meta = url.slice(5, comma);
      const data = url.slice(comma + 1);
      json = meta.endsWith(';base64') ? Buffer.from(data, 'base64').toString('utf8') : decodeURIComponent(data);
    } else {
      if (!filename || !path.isAbsolute(filename)) return null;
      json = fs.readFileSync(path.resolve(path.dirname(filename), url), 'utf8');
    }
    const raw = JSON.parse(json);
    const base = filename && path.isAbsolute(filename) ? path.dirname(filename) : '';
    return { consumer: new SourceMapConsumer(raw), base: raw.sourceRoot ? path.resolve(base, raw.sourceRoot) : base };
  } catch {
    return null;
  }
}

/** Original position of a generated (1-based line, 0-based column), or null where unmapped. */
export function originalPosition(map: SourceMap, line: number, column: number): OriginalPosition | null {
  let p = map.consumer.originalPositionFor({ line, column, bias: SourceMapConsumer.GREATEST_LOWER_BOUND });
  if (p.source === null) p = map.consumer.originalPositionFor({ line, column, bias: SourceMapConsumer.LEAST_UPPER_BOUND });
  if (p.source === null || p.line === null) return null;
  return { source: sourcePath(map, p.source), line: p.line, column: p.column ?? 0 };
}

/** Every source a map names, as originalPosition names them (without reading its mappings). */
export function mapSources(map: SourceMap): string[] {
  return (map.consumer as unknown as { sources: string[] }).sources.map((s) => sourcePath(map, s));
}

function sourcePath(map: SourceMap, source: string): string {
  const src = source.startsWith('file://') ? new URL(source).pathname : source;
  // a source given as a URL (https://..., webpack://pkg/./src/x.ts) is named by its host and path, not joined to a directory
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.exec(src) ? urlName(src) : null;
  return url ?? (map.base ? path.resolve(map.base, src) : src);
}

/** "host/path" of a URL, its "." and ".." segments resolved: a clean module name. */
function urlName(src: string): string {
  try {
    const u = new URL(src);
    return path.posix.normalize(`${u.host}/${decodeURIComponent(u.pathname)}`).replace(/^\/+/, '');
  } catch {
    return src;
  }
}
