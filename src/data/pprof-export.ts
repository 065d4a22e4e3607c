// A call-path profile as pprof's profile.proto (gzipped), which `go tool pprof`,
// Pyroscope and Grafana open. Each whole path is one sample whose stack is the
// path (leaf first, as pprof wants it) and whose values are the path's own
// statistics: calls of its last function, and its exclusive wall and CPU time.
// pprof then sums them per function (flat) and per stack prefix (cum), so the
// cumulative times equal the paths' inclusive times and flat calls are the
// function's calls. The encoding is pprof-format's (Datadog's pprof writer).
import * as zlib from 'zlib';
import { Profile, StringTable, type FunctionInput, type LocationInput, type SampleInput } from 'pprof-format';
import type { CallPath } from './call-path-profile';
import type { FunctionPlace } from './profile-export';

const ns = (s: number) => Math.max(0, Math.round(s * 1e9));

/** The sample types, in the order of every sample's values. */
export const PPROF_SAMPLE_TYPES = [['calls', 'count'], ['wall', 'nanoseconds'], ['cpu', 'nanoseconds']] as const;

export interface PprofOptions {
  /** when the profile began (ms since the epoch) */
  startMs?: number;
  /** how long it covers (s) */
  durationSeconds?: number;
}

/** Whole paths as a gzipped pprof profile; `stack` gives a path's frames outermost first (a worker's under its thread's frame). */
export function toPprof(paths: CallPath[], stack: (p: CallPath) => string[], place: (fn: string) => FunctionPlace | undefined, opts: PprofOptions = {}): Buffer {
  const strings = new StringTable();
  const str = (s: string) => strings.dedup(s);
  const functions: FunctionInput[] = [];
  const locations: LocationInput[] = [];
  /** frame name -> its location id (one location, one function per frame: the profile knows functions, not call lines) */
  const locationOf = new Map<string, number>();
  const location = (frame: string): number => {
    let id = locationOf.get(frame);
    if (id !== undefined) return id;
    id = locations.length + 1;
    const at = place(frame);
    functions.push({ id, name: str(frame), systemName: str(frame), filename: str(at?.file ?? frame.slice(0, Math.max(0, frame.lastIndexOf('/')))), startLine: at?.line ?? 0 });
    locations.push({ id, line: [{ functionId: id, line: at?.line ?? 0 }] });
    locationOf.set(frame, id);
    return id;
  };
  const thread = str('thread');
  const samples: SampleInput[] = paths.map((p) => ({
    locationId: stack(p).map(location).reverse(),
    value: [p.calls, ns(p.wall.exclusive), ns(p.cpu.exclusive)],
    label: [{ key: thread, str: str(p.thread) }],
  }));
  const sampleType = PPROF_SAMPLE_TYPES.map(([type, unit]) => ({ type: str(type), unit: str(unit) }));
  const profile = new Profile({
    sampleType, sample: samples, location: locations, function: functions, stringTable: strings,
    timeNanos: BigInt(Math.round(opts.startMs ?? Date.now())) * 1_000_000n,
    durationNanos: opts.durationSeconds !== undefined ? ns(opts.durationSeconds) : 0,
    defaultSampleType: str('wall'),
    comment: [str('paranode call-path profile: one sample per whole call path, its exclusive times as values')],
  });
  return zlib.gzipSync(profile.encode());
}
