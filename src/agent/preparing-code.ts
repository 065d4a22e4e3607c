// The code that prepares scripts at load (dist/src/instrument and analysis, and acorn): what a
// prepared-code cache entry depends on besides its source, and what must not change between
// this process's start and the first script it prepares (the preparer is loaded only then).
import * as fs from 'fs';
import * as path from 'path';
import { ownPackageDirs } from './own-code';

/** The preparing code's files: the compiled instrument and analysis modules, and acorn's package.json. */
export function preparingFiles(): string[] {
  const src = path.resolve(__dirname, '..');
  const files: string[] = [];
  for (const d of ['instrument', 'analysis']) {
    const dir = path.join(src, d);
    for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.js')).sort()) files.push(path.join(dir, f));
  }
  // (found as the agent's own packages are: resolving acorn/package.json runs its exports, ~1 ms)
  const acorn = ownPackageDirs().find((d) => path.basename(d) === 'acorn');
  if (acorn) files.push(path.join(acorn, 'package.json'));
  return files;
}

/**
 * The files' identity (inode, size, change and modification times: a file written or replaced
 * has a new change time) and the Node version, as one line of text: cheap (a stat per file, no
 * hash: `crypto` alone takes 2-6 ms to load), and it moves when an install or a build replaces
 * any of them.
 */
export function preparingIdentity(): string {
  return JSON.stringify([process.version, ...preparingFiles().map((f) => {
    const st = fs.statSync(f, { bigint: true });
    return [f, String(st.ino), String(st.size), String(st.ctimeNs), String(st.mtimeNs)];
  })]);
}

let atStart: string | undefined;
/** preparingIdentity() as first taken in this process (the agent's start): the cache's build id and the load hook's check share it. */
export function identityAtStart(): string {
  return (atStart ??= preparingIdentity());
}
