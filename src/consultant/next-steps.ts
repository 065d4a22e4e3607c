// What a developer does with a bottleneck (issue #12 item 4): the call paths
// that lead to it, from its thread's stack samples, and the paranode command
// that measures it exactly (its metric at its focus, and how often it runs).
import * as path from 'path';
import { OTHER_PATHS, type StackSamples } from '../session/series';
import { parseCallSite, parseLoop, splitFocus } from '../metrics/focus';
import { codeLevel, sampleKey, threadLabel } from './focus-parts';
import { hypothesis } from './hypotheses';
import type { Bottleneck } from './report';
import type { SearchNode } from './search';

/** A path of calls to a bottleneck's function, as its thread's stack samples saw it. */
export interface SampledPath {
  /** its callers, outermost first ('…' first where the stack went on), the function (then a loop or call site in it) last */
  functions: string[];
  /** the share of the samples with the function on the stack that had these callers */
  share: number;
}

/** Paths listed per bottleneck at most, and the least share of its samples one needs. */
const PATHS = 2, PATH_SHARE = 0.1;

/** The commonest paths that led to function `key` ("<module>/<function>") in the samples. */
export function sampledPaths(st: StackSamples, key: string): SampledPath[] {
  const by = st.callers.get(key);
  const on = st.hits.get(key) ?? 0;
  if (!by || !on) return [];
  // (a function called from Node's code only, a callback, has no program caller: no path; nor the paths past those kept)
  const top = [...by].filter(([callers]) => callers !== '' && callers !== OTHER_PATHS).sort((a, b) => b[1] - a[1]).slice(0, PATHS).filter(([, n], i) => i === 0 || n / on >= PATH_SHARE);
  // paths not kept together outweigh the commonest kept one: which is commonest is not known
  if (top.length && top[0][1] < (by.get(OTHER_PATHS) ?? 0)) return [];
  return top.map(([callers, n]) => ({ functions: [...callers.split('\n'), key], share: n / on }));
}

/** A word as a POSIX shell reads it back. */
export function shellWord(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

/** How the diagnosed program was reached: its pid (attached), or the command that launched it (and where, if not here). */
export type Reached = { pid: number } | { command: string[]; cwd?: string };

/**
 * The metric requests that measure a bottleneck exactly: its hypothesis's metric at
 * its focus, and how often its code runs (a function's calls, a loop's trips, a
 * module's calls per function). A thread or process named in it holds only for the
 * same process: kept on attach, left out of a launch.
 */
export function measuring(b: Bottleneck, level: ReturnType<typeof codeLevel>, attached: boolean): string[] {
  const h = hypothesis(b.hypothesis);
  const parts = splitFocus(b.focus);
  const code = parts.find((p) => p.startsWith('/Code/'));
  const thread = attached ? parts.find((p) => p.startsWith('/Thread/')) : undefined;
  const at = (metric: string, focus: string | undefined) => `${metric}${focus || thread ? '@' : ''}${[focus, thread].filter(Boolean).join(',')}`;
  if (!code) return [at(h.metric, undefined)];
  const out = [at(h.codeMetric ?? h.metric, code)];
  if (level === 'function') out.push(at('procedure_calls', code));
  else if (level === 'loop') out.push(at('loop_trips', code));
  else if (level === 'module') out.push(at('procedure_calls', `${code}/*`));
  return out;
}

/** The paranode command that measures a bottleneck exactly. */
export function nextCommand(requests: string[], reached: Reached): string {
  const e = requests.flatMap((r) => ['-e', shellWord(r)]).join(' ');
  if ('pid' in reached) return `paranode attach ${reached.pid} ${e} --duration 30`;
  // modules are named relative to the program's directory: the command runs there
  const cd = reached.cwd && path.resolve(reached.cwd) !== process.cwd() ? `cd ${shellWord(path.resolve(reached.cwd))} && ` : '';
  return `${cd}paranode run ${e} -- ${reached.command.map(shellWord).join(' ')}`;
}

/**
 * Each bottleneck with the paths that lead to its function (hypotheses whose code is
 * on the stack: a waiting function is not) and the command to measure it next (none
 * where `reached` is null: an attached process that has ended, whose pid may be another's).
 */
export function addNextSteps(bottlenecks: Bottleneck[], nodes: readonly SearchNode[], samples: (thread: string) => StackSamples, reached: Reached | null): void {
  for (const b of bottlenecks) {
    const n = nodes.find((k) => k.focus === b.focus && k.hypothesis === b.hypothesis);
    const level = n ? codeLevel(n.focus, n.parent === null ? undefined : nodes[n.parent - 1].focus) : undefined;
    if (reached) b.next = nextCommand(measuring(b, level, 'pid' in reached), reached);
    const code = splitFocus(b.focus).find((p) => p.startsWith('/Code/'));
    if (!code || !hypothesis(b.hypothesis).onStack || level === 'module' || level === undefined) continue;
    // a loop or a call site is in its function: the paths to that, and then it
    const inside = parseLoop(code) ?? parseCallSite(code);
    const fn = inside?.fn ?? code;
    const paths = sampledPaths(samples(threadLabel(b.focus)), sampleKey(fn.slice('/Code/'.length)));
    if (inside) for (const p of paths) p.functions.push(code.slice(fn.length + 1));
    if (paths.length) b.paths = paths;
  }
}
