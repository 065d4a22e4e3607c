// The name a module goes by in resources (/Code/<module>/<function>): its path
// relative to the program's working directory, as a user typed it. A file
// outside that directory gets no "../../" name: a package's file is named from
// its innermost node_modules/ on (node_modules/fastify/lib/route.js, as where
// it resolves from), anything else by its absolute path.
import * as path from 'path';

export function moduleNameOf(file: string, cwd: string): string {
  if (!path.isAbsolute(file)) return file;
  const rel = path.relative(cwd, file);
  if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) return rel;
  if (!rel) return file;
  const at = file.lastIndexOf(`${path.sep}node_modules${path.sep}`);
  return at >= 0 ? file.slice(at + 1) : file;
}
