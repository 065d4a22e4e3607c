// paranode's own code inside a target (its dist/ and the packages the agent
// loads there): never prepared, never listed as the program's resources.
import * as fs from 'fs';
import * as path from 'path';

const DIST = path.resolve(__dirname, '..', '..');

/** The packages the agent runs in the target: the load hook's parser (and its import-phase plugin), source maps, TypeScript stripping. */
export const OWN_PACKAGES = ['acorn', 'acorn-import-phases', 'source-map-js', 'amaro'];

let packageDirs: readonly string[] | undefined;
let codeDirs: readonly string[] | undefined;

/** The directories (with a trailing separator) of OWN_PACKAGES as installed; found once per instance of this module (a few ms at start-up). */
export function ownPackageDirs(): readonly string[] {
  if (!packageDirs) {
    const dirs: string[] = [];
    for (const pkg of OWN_PACKAGES) for (const dir of installedAt(pkg)) dirs.push(dir + path.sep);
    packageDirs = Object.freeze(dirs);
  }
  return packageDirs;
}

/**
 * Where `require(pkg)` from here finds the package: the first node_modules on require's search
 * path that holds it, as found there and as its real path (the loader names files by the one or,
 * with --preserve-symlinks, the other). A stat per directory, where resolving `pkg/package.json`
 * runs the package's exports (~1 ms each); that resolution where no directory holds it (Yarn's
 * Plug'n'Play, say).
 */
function installedAt(pkg: string): string[] {
  for (const dir of require.resolve.paths(pkg) ?? []) {
    const at = path.join(dir, pkg);
    try {
      if (fs.statSync(path.join(at, 'package.json'), { throwIfNoEntry: false })?.isFile()) return [...new Set([at, fs.realpathSync(at)])];
    } catch { /* unreadable: not here */ }
  }
  try { return [path.dirname(require.resolve(`${pkg}/package.json`))]; } catch { return []; }
}

/** Directories (with a trailing separator) holding code the agent runs in the target. */
export function ownCodeDirs(): readonly string[] {
  return (codeDirs ??= Object.freeze([DIST + path.sep, ...ownPackageDirs()]));
}

export function isOwnCode(filename: string, dirs: readonly string[] = ownCodeDirs()): boolean {
  return dirs.some((d) => filename.startsWith(d));
}

/**
 * Take paranode's modules out of the program's require.cache (they stay loaded:
 * we hold them): a program listing its modules, or requiring acorn itself, must
 * not find ours.
 */
export function forgetOwnModules(dirs: readonly string[] = ownCodeDirs()): void {
  const cache = require.cache;
  for (const file of Object.keys(cache)) if (isOwnCode(file, dirs)) delete cache[file];
}
