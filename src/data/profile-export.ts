// A call-path profile (whole paths) in the formats Node developers open:
// Chrome DevTools' and VS Code's .cpuprofile, speedscope's JSON, folded
// stacks for flame graphs, and pprof (pprof-export.ts). Each is built from the profile's statistics, not
// from samples: a path's exclusive wall time becomes its self time (one
// synthetic sample per path in .cpuprofile and speedscope, weighted by it).
import * as path from 'path';
import { pathToFileURL } from 'url';
import type { Protocol } from 'devtools-protocol';
import type { CallPath } from './call-path-profile';
import { toPprof, type PprofOptions } from './pprof-export';

export type ExportFormat = 'cpuprofile' | 'speedscope' | 'folded' | 'pprof';

/** Where a function of the profile is: its file, line (1-based) and column (0-based). */
export interface FunctionPlace { file: string; line: number; column: number }

/** The format a file name asks for: .cpuprofile, .speedscope.json, .folded (or .txt), .pb.gz (or .pprof). */
export function formatOf(file: string): ExportFormat {
  const f = file.toLowerCase();
  if (f.endsWith('.cpuprofile')) return 'cpuprofile';
  if (f.endsWith('.speedscope.json') || f.endsWith('.speedscope')) return 'speedscope';
  if (f.endsWith('.folded') || f.endsWith('.txt')) return 'folded';
  if (f.endsWith('.pb.gz') || f.endsWith('.pprof')) return 'pprof';
  throw new Error(`${path.basename(file)}: the format is named by the file's extension: .cpuprofile (Chrome DevTools, VS Code), .speedscope.json (speedscope), .folded (flame graphs) or .pb.gz (pprof: go tool pprof, Pyroscope, Grafana)`);
}

const us = (s: number) => Math.max(0, Math.round(s * 1e6));
/** a worker's paths hang under a frame that names its thread */
const threadFrame = (thread: string) => `(thread ${thread})`;
const stackOf = (p: CallPath) => (p.thread === 'main' ? p.functions : [threadFrame(p.thread), ...p.functions]);

/** Whole paths (k = inf) in the chosen format; `place` locates a function by its name. pprof is binary (gzipped protobuf), the others text. */
export function exportProfile(paths: CallPath[], format: 'pprof', place: (fn: string) => FunctionPlace | undefined, name?: string, pprof?: PprofOptions): Buffer;
export function exportProfile(paths: CallPath[], format: Exclude<ExportFormat, 'pprof'>, place: (fn: string) => FunctionPlace | undefined, name?: string): string;
export function exportProfile(paths: CallPath[], format: ExportFormat, place: (fn: string) => FunctionPlace | undefined, name?: string, pprof?: PprofOptions): string | Buffer;
export function exportProfile(paths: CallPath[], format: ExportFormat, place: (fn: string) => FunctionPlace | undefined, name = 'paranode call paths', pprof?: PprofOptions): string | Buffer {
  if (paths.some((p) => !p.path.startsWith('/CallPath/inf/'))) throw new Error('an export is made of whole paths (k = inf)');
  if (format === 'pprof') return toPprof(paths, stackOf, place, pprof);
  if (format === 'folded') return toFolded(paths);
  if (format === 'speedscope') return JSON.stringify(toSpeedscope(paths, place, name));
  return JSON.stringify(toCpuProfile(paths, place));
}

/** `f1;f2;f3 <exclusive wall µs>` per path, as flamegraph.pl and speedscope read it. */
function toFolded(paths: CallPath[]): string {
  return paths.filter((p) => us(p.wall.exclusive) > 0).map((p) => `${stackOf(p).map((f) => f.replace(/[;\n]/g, '_')).join(';')} ${us(p.wall.exclusive)}\n`).join('');
}

/** speedscope's file format: one sampled profile per thread, a sample per path weighted by its exclusive wall time (µs). */
function toSpeedscope(paths: CallPath[], place: (fn: string) => FunctionPlace | undefined, name: string): object {
  const frames: { name: string; file?: string; line?: number; col?: number }[] = [];
  const index = new Map<string, number>();
  const frame = (fn: string) => {
    let i = index.get(fn);
    if (i === undefined) {
      const at = place(fn);
      index.set(fn, (i = frames.push(at ? { name: fn, file: at.file, line: at.line, col: at.column + 1 } : { name: fn }) - 1));
    }
    return i;
  };
  const threads = [...new Set(paths.map((p) => p.thread))];
  const profiles = threads.map((thread) => {
    const mine = paths.filter((p) => p.thread === thread && us(p.wall.exclusive) > 0);
    const weights = mine.map((p) => us(p.wall.exclusive));
    return {
      type: 'sampled', name: thread === 'main' ? name : `${name} ${threadFrame(thread)}`, unit: 'microseconds',
      startValue: 0, endValue: weights.reduce((a, w) => a + w, 0),
      samples: mine.map((p) => p.functions.map(frame)), weights,
    };
  });
  return { $schema: 'https://www.speedscope.app/file-format-schema.json', shared: { frames }, profiles, name, exporter: 'paranode' };
}

/**
 * Chrome DevTools' profile (Profiler.Profile of the DevTools protocol): a node
 * per path under a (root), and per path as many samples at a fixed interval
 * as its exclusive wall time holds (rounded), so that both of DevTools' views
 * agree: the flame chart's (a sample lasts until the next) and the call
 * tree's (hit counts times the mean interval).
 */
function toCpuProfile(paths: CallPath[], place: (fn: string) => FunctionPlace | undefined): Protocol.Profiler.Profile {
  const urlOf = (file: string) => (/^[a-z][a-z0-9+.-]*:/i.test(file) ? file : path.isAbsolute(file) ? pathToFileURL(file).href : file);
  const callFrame = (fn: string): Protocol.Runtime.CallFrame => {
    const at = place(fn);
    const short = fn.slice(fn.lastIndexOf('/') + 1);
    return { functionName: short, scriptId: '0', url: at ? urlOf(at.file) : fn.slice(0, fn.lastIndexOf('/')), lineNumber: at ? at.line - 1 : -1, columnNumber: at ? at.column : -1 };
  };
  const root: Protocol.Profiler.ProfileNode = { id: 1, callFrame: { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 }, hitCount: 0, children: [] };
  const nodes = [root];
  const byStack = new Map<string, Protocol.Profiler.ProfileNode>([['', root]]);
  const nodeOf = (stack: string[]): Protocol.Profiler.ProfileNode => {
    const key = stack.join('\0');
    let n = byStack.get(key);
    if (n) return n;
    const parent = nodeOf(stack.slice(0, -1));
    const fn = stack[stack.length - 1];
    n = { id: nodes.length + 1, callFrame: fn.startsWith('(thread ') ? { functionName: fn, scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 } : callFrame(fn), hitCount: 0, children: [] };
    nodes.push(n);
    parent.children!.push(n.id);
    byStack.set(key, n);
    return n;
  };
  const total = paths.reduce((t, p) => t + us(p.wall.exclusive), 0);
  const interval = sampleInterval(total);
  const samples: number[] = [];
  for (const p of paths) {
    const n = nodeOf(stackOf(p));
    const k = Math.round(us(p.wall.exclusive) / interval);
    n.hitCount! += k;
    for (let i = 0; i < k; i++) samples.push(n.id);
  }
  // every sample lasts one interval (DevTools: until the next; the last one until endTime)
  const timeDeltas = samples.map((_, i) => (i === 0 ? 0 : interval));
  return { nodes, startTime: 0, endTime: samples.length * interval, samples, timeDeltas };
}

/** µs between a .cpuprofile's samples: 1 µs, or coarser so that a long profile has at most MAX_SAMPLES */
export function sampleInterval(totalUs: number): number {
  return Math.max(1, Math.ceil(totalUs / MAX_SAMPLES));
}
const MAX_SAMPLES = 200_000;
