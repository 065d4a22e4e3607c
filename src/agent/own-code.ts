// paranode's own code inside a target (its dist/ and the packages the agent
// loads there): never prepared, never listed as the program's resources.
import * as path from 'path';

const DIST = path.resolve(__dirname, '..', '..');

/** The packages the agent runs in the target: the load hook's parser (and its import-phase plugin), source maps, TypeScript stripping. */
export const OWN_PACKAGES = ['acorn', 'acorn-import-phases', 'source-map-js', 'amaro'];

/** Directories (with a trailing separator) holding code the agent runs in the target. */
export function ownCodeDirs(): string[] {
  const dirs = [DIST];
  for (const pkg of OWN_PACKAGES) {
    try { dirs.push(path.dirname(require.resolve(`${pkg}/package.json`))); } catch { /* not installed */ }
  }
  return dirs.map((d) => d + path.sep);
}

export function isOwnCode(filename: string, dirs = ownCodeDirs()): boolean {
  return dirs.some((d) => filename.startsWith(d));
}

/**
 * Take paranode's modules out of the program's require.cache (they stay loaded:
 * we hold them): a program listing its modules, or requiring acorn itself, must
 * not find ours.
 */
export function forgetOwnModules(dirs = ownCodeDirs()): void {
  const cache = require.cache;
  for (const file of Object.keys(cache)) if (isOwnCode(file, dirs)) delete cache[file];
}
