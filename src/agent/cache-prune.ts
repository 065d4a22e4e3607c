// The start-up cache kept under a size. Programs only add to it (an entry per
// script version: every edit of a file, every Node and paranode version), so
// the tool, never the target, trims it after a session: the entries used least
// recently go first (a read updates a file's access time on Linux's default
// relatime at most once a day, so "used" is the later of access and write),
// until it holds three quarters of the limit. PARANODE_CACHE_MAX=<MB> sets the
// limit (default 1024), 0 keeps everything. Files written in the last minute
// are left alone: a program starting beside the tool may be about to read them.
import * as fs from 'fs';
import * as path from 'path';
import { cacheDir, ownerOnly } from './cache-dir';

export const DEFAULT_CACHE_MAX_MB = 1024;
const YOUNG_MS = 60_000;

/** PARANODE_CACHE_MAX as MB; undefined where it is unset or not a number. */
function limitMb(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.PARANODE_CACHE_MAX?.trim();
  return raw && /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : undefined;
}

/** The limit in bytes, or null for none (PARANODE_CACHE_MAX=0); a value that is not a number is the default. */
export function cacheLimit(env: NodeJS.ProcessEnv = process.env): number | null {
  const mb = limitMb(env) ?? DEFAULT_CACHE_MAX_MB;
  return mb === 0 ? null : Math.round(mb * 1024 * 1024);
}

interface Entry { file: string; bytes: number; used: number }

/** Prepared-code entries (*.pnc) and V8's code (Node's compile cache under v8/), as files. */
function entries(dir: string): Entry[] {
  const out: Entry[] = [];
  const walk = (d: string, depth: number) => {
    let names: fs.Dirent[];
    try { names = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
    for (const n of names) {
      const f = path.join(d, n.name);
      if (n.isDirectory()) { if (depth > 0) walk(f, depth - 1); continue; }
      if (!n.isFile() || (d === dir && !n.name.endsWith('.pnc'))) continue;
      try {
        const st = fs.statSync(f);
        out.push({ file: f, bytes: st.size, used: Math.max(st.atimeMs, st.mtimeMs) });
      } catch { /* removed meanwhile */ }
    }
  };
  walk(dir, 0);
  walk(path.join(dir, 'v8'), 3);
  return out;
}

export interface Pruned { removed: number; freedBytes: number; keptBytes: number }

/** Trim `dir` to 3/4 of `maxBytes` when it holds more than `maxBytes`, least recently used first. */
export function pruneCache(dir: string, maxBytes: number, now = Date.now()): Pruned {
  const all = entries(dir);
  let kept = all.reduce((s, e) => s + e.bytes, 0);
  const result: Pruned = { removed: 0, freedBytes: 0, keptBytes: kept };
  if (kept <= maxBytes) return result;
  const target = Math.floor(maxBytes * 0.75);
  for (const e of all.sort((a, b) => a.used - b.used)) {
    if (kept <= target) break;
    if (now - e.used < YOUNG_MS) continue;
    try {
      fs.unlinkSync(e.file);
      kept -= e.bytes;
      result.removed++;
      result.freedBytes += e.bytes;
    } catch { /* another tool removed it first */ }
  }
  result.keptBytes = kept;
  return result;
}

/** The tool's housekeeping after a session: the user's cache directory trimmed to its limit (never an error). */
export function pruneStartupCache(env: NodeJS.ProcessEnv = process.env): Pruned | null {
  const dir = cacheDir(env);
  const max = cacheLimit(env);
  if (env.PARANODE_CACHE_MAX?.trim() && limitMb(env) === undefined) {
    process.stderr.write(`paranode: PARANODE_CACHE_MAX=${env.PARANODE_CACHE_MAX.trim()} is not a size in MB: the start-up cache is kept under ${DEFAULT_CACHE_MAX_MB} MB\n`);
  }
  // only the directory the agent would use: this user's alone
  if (!dir || max === null || !ownerOnly(dir)) return null;
  try {
    return pruneCache(dir, max);
  } catch {
    return null;
  }
}
