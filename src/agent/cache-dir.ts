// paranode's start-up cache directory: $PARANODE_CACHE_DIR, else
// $XDG_CACHE_HOME/paranode, else ~/.cache/paranode; PARANODE_CACHE=off turns
// caching off. Used only when owner-only: what is read from it becomes code the
// program runs (prepared text, and V8's code for it).
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/** A switch set to off (`off`, `0`, `false`, `no`). */
export const isOff = (value: string | undefined): boolean => /^(off|0|false|no)$/i.test(value ?? '');

export function cacheDir(env: NodeJS.ProcessEnv = process.env): string | null {
  if (isOff(env.PARANODE_CACHE)) return null;
  if (env.PARANODE_CACHE_DIR) return path.resolve(env.PARANODE_CACHE_DIR);
  if (env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME)) return path.join(env.XDG_CACHE_HOME, 'paranode');
  const home = os.homedir();
  return home ? path.join(home, '.cache', 'paranode') : null;
}

/** The cache directory, made if missing (0700), or null: turned off, or not a directory that this user alone owns and can write. */
export function openCacheDir(env: NodeJS.ProcessEnv = process.env): string | null {
  const dir = cacheDir(env);
  if (!dir) return null;
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return ownerOnly(dir) ? dir : null;
  } catch {
    return null;
  }
}

/** This process's effective uid (what os.userInfo() gives, without its read of the user database: ~0.4 ms at each start). */
export const ownUid = (): number => process.geteuid?.() ?? os.userInfo().uid;

/** A directory (not a link to one) this user owns and no one else can enter; false if missing. */
export function ownerOnly(dir: string): boolean {
  try {
    const st = fs.lstatSync(dir);
    return st.isDirectory() && st.uid === ownUid() && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
}
