// A probe request as the in-target runtime takes it (a ProbeSpec): its snippet
// compiled for its point, its resource glob turned into the regexes the
// runtime matches functions and built-in modules with.
import type { ProbeSpec } from '../agent/runtime';
import { codeGlobToRegex, pointClass, ProbeRequest } from '../instrument/probe';
import { compileSnippet } from '../instrument/snippet';

/** The spec of probe `id`; `kinds` holds the timers' kinds (wall or CPU) across probes. */
export function toSpec(req: ProbeRequest, id: number, kinds: Map<string, 'wall' | 'cpu'>): ProbeSpec {
  const snippet = compileSnippet(req.snippet, { point: pointClass(req.point), timerKinds: kinds });
  const spec: ProbeSpec = { id, match: codeGlobToRegex(req.resource), point: req.point, where: req.where, order: req.order, snippet };
  if (!/[*?]/.test(req.resource)) spec.exact = req.resource.slice('/Code/'.length);
  const builtins = builtinModuleMatch(req.resource);
  if (builtins) spec.builtins = builtins;
  return spec;
}

/** For a glob over built-in modules (/Code/node:fs/*), the regex over "node:<name>" they must match. */
export function builtinModuleMatch(glob: string): string | undefined {
  const g = glob.slice('/Code/'.length);
  if (!g.startsWith('node:')) return undefined;
  // the function is the last part: a module's name may have a '/' (node:fs/promises)
  const cut = g.lastIndexOf('/');
  return codeGlobToRegex('/Code/' + (cut < 0 ? g : g.slice(0, cut)));
}
