// The call-path profile as the tool keeps it: each thread's full (folded)
// paths with their totals, as its runtime last sent them (agent/call-paths),
// and the k-level profile cut from them on request. Data volume is one record
// per distinct path, whatever the run's length.
import type { PathFunction, PathRecord } from '../agent/call-paths';
import type { FunctionPlace } from './profile-export';

/** One call path of a k-level profile (times in seconds). */
export interface CallPath {
  /** /CallPath/<k>/<f1>><f2>>...: the last k functions of the path, outermost first */
  path: string;
  functions: string[];
  /** 'main' or a worker's id */
  thread: string;
  calls: number;
  wall: { inclusive: number; exclusive: number };
  cpu: { inclusive: number; exclusive: number };
  /** suspended at await, between the await and its resumption */
  wait: number;
  /** the wall and CPU times less the profile's own work (intrusion compensation) */
  virtual: { wall: { inclusive: number; exclusive: number }; cpu: { inclusive: number; exclusive: number } };
}

/** a path's length: a positive integer, or Infinity for whole paths */
export type PathLength = number;

/** Parse a k as a user gives it: 1, 2, ... or inf. */
export function parsePathLength(text: string): PathLength {
  if (/^(inf|infinity|full)$/i.test(text.trim())) return Infinity;
  const k = Number(text);
  if (!Number.isInteger(k) || k < 1) throw new Error(`a call path's length is a whole number from 1 up, or inf (got "${text}")`);
  return k;
}

export class CallPathProfile {
  /** thread label -> the path's number there -> [full path, [calls, ms: incl wall, excl wall, incl CPU, excl CPU, wait, and the virtual four]] */
  private readonly threads = new Map<string, Map<number, [string, number[]]>>();

  /** "<module>/<function>" -> where it is (the same in every thread) */
  private readonly places = new Map<string, FunctionPlace>();

  recordFunctions(fns: readonly PathFunction[]): void {
    for (const [name, file, line, column] of fns) this.places.set(name, { file, line, column });
  }

  place(name: string): FunctionPlace | undefined {
    return this.places.get(name);
  }

  record(thread: string, records: readonly PathRecord[]): void {
    let t = this.threads.get(thread);
    if (!t) this.threads.set(thread, (t = new Map()));
    // a path's name comes with its first record only
    for (const r of records) t.set(r[11], [r[0] || t.get(r[11])?.[0] || '?', r.slice(1, 11) as number[]]);
  }

  get empty(): boolean { return this.threads.size === 0; }

  /**
   * The k-level profile: paths that agree in their last k functions are one.
   * Inclusive times add up without counting time twice: a full path names a
   * function once (recursion folds), so two of its activations that share
   * their last k functions are never nested.
   */
  cut(k: PathLength, thread?: string): CallPath[] {
    const out = new Map<string, CallPath>();
    const kName = k === Infinity ? 'inf' : String(k);
    for (const [label, paths] of this.threads) {
      if (thread !== undefined && label !== thread) continue;
      for (const [full, v] of paths.values()) {
        const fns = full.split('\0');
        const functions = fns.slice(Math.max(0, fns.length - k));
        const key = `${label}\0${functions.join('\0')}`;
        let p = out.get(key);
        if (!p) {
          p = {
            path: `/CallPath/${kName}/${functions.join('>')}`, functions, thread: label, calls: 0, wall: { inclusive: 0, exclusive: 0 }, cpu: { inclusive: 0, exclusive: 0 }, wait: 0,
            virtual: { wall: { inclusive: 0, exclusive: 0 }, cpu: { inclusive: 0, exclusive: 0 } },
          };
          out.set(key, p);
        }
        p.calls += v[0];
        p.wall.inclusive += v[1] / 1000;
        p.wall.exclusive += v[2] / 1000;
        p.cpu.inclusive += v[3] / 1000;
        p.cpu.exclusive += v[4] / 1000;
        p.wait += v[5] / 1000;
        p.virtual.wall.inclusive += (v[6] ?? 0) / 1000;
        p.virtual.wall.exclusive += (v[7] ?? 0) / 1000;
        p.virtual.cpu.inclusive += (v[8] ?? 0) / 1000;
        p.virtual.cpu.exclusive += (v[9] ?? 0) / 1000;
      }
    }
    return [...out.values()].sort((a, b) => b.wall.inclusive - a.wall.inclusive || a.path.localeCompare(b.path));
  }
}
