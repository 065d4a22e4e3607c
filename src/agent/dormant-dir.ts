// Where a dormant agent listens: a Unix socket named by its pid in a directory
// only its user can enter, so no other local user can reach it. Shared by the
// agent (which creates the directory) and the tool (which finds the socket).
import * as fs from 'fs';
import * as path from 'path';
import { ownUid } from './cache-dir';

/** The directory for an environment: $XDG_RUNTIME_DIR/paranode, else <tmpdir>/paranode-<uid>. */
export function dormantDir(env: NodeJS.ProcessEnv = process.env, uid = ownUid()): string {
  if (env.XDG_RUNTIME_DIR && path.isAbsolute(env.XDG_RUNTIME_DIR)) return path.join(env.XDG_RUNTIME_DIR, 'paranode');
  // os.tmpdir() reads TMPDIR of this process: the target's may differ, so take it from env
  const tmp = env.TMPDIR && path.isAbsolute(env.TMPDIR) ? env.TMPDIR.replace(/(.)\/+$/, '$1') : '/tmp';
  return path.join(tmp, `paranode-${uid}`);
}

export function dormantSocket(dir: string, pid: number): string {
  return path.join(dir, `${pid}.sock`);
}

/**
 * Why `dir` cannot be trusted (null if it can): it must be a real directory
 * (not a symbolic link), owned by this user, with no access for group or others.
 */
export function untrustedDir(dir: string, uid = ownUid()): string | null {
  let st: fs.Stats;
  try { st = fs.lstatSync(dir); } catch (e) { return `${dir}: ${(e as NodeJS.ErrnoException).code ?? e}`; }
  if (!st.isDirectory()) return `${dir} is not a directory`;
  if (st.uid !== uid) return `${dir} belongs to uid ${st.uid}, not ${uid}`;
  if ((st.mode & 0o077) !== 0) return `${dir} has mode ${(st.mode & 0o777).toString(8)}, not 700`;
  return null;
}

/** Create the directory owner-only (or find it so); null when it cannot be trusted. */
export function ensureDormantDir(env: NodeJS.ProcessEnv = process.env): string | null {
  return ensureOwnDir(dormantDir(env), false);
}

/** Create `dir` owner-only (its parents too if `parents`) or find it so; null when it cannot be trusted. */
export function ensureOwnDir(dir: string, parents: boolean): string | null {
  try { fs.mkdirSync(dir, { mode: 0o700, recursive: parents }); } catch (e) { if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return null; }
  return untrustedDir(dir) ? null : dir;
}
