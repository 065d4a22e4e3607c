// What a session measures now, as labelled values for the exporters
// (Prometheus, OpenTelemetry): the metric instances and the probes' totals,
// and the call-path profile's per-path totals. Read at each scrape or push,
// from the last sample; nothing here asks the target anything.
import type { CallPath } from '../data/call-path-profile';
import type { MetricInstanceValue } from '../metrics/instance';
import type { MetricValue } from '../session/series';

/** One value of one metric family: the family's label names are fixed (READINGS). */
export interface Reading { family: keyof typeof FAMILIES; labels: Record<string, string>; value: number }

/** The families every exporter offers; counters only ever grow while a session lasts. */
export const FAMILIES = {
  paranode_metric_value: { kind: 'gauge', help: 'A metric instance or probe: its total since enabled, in its units (a range\'s high bound)', labels: ['metric', 'focus', 'units', 'pid'] },
  paranode_call_path_calls: { kind: 'counter', help: 'Calls of a call path\'s last function on that path', labels: ['path', 'thread', 'pid'] },
  paranode_call_path_wall_seconds: { kind: 'counter', help: 'Wall time on a call path, inclusive or exclusive of the functions it calls', labels: ['path', 'thread', 'time', 'pid'] },
  paranode_call_path_cpu_seconds: { kind: 'counter', help: 'CPU time on a call path, inclusive or exclusive of the functions it calls', labels: ['path', 'thread', 'time', 'pid'] },
  paranode_call_path_wait_seconds: { kind: 'counter', help: 'Time a call path spent suspended at await', labels: ['path', 'thread', 'pid'] },
} as const;

/** Where the readings come from: a session (or the library's own object) gives these at each read. */
export interface ReadingSource {
  pid: number;
  metrics(): (MetricValue | MetricInstanceValue)[];
  /** the call-path profile cut at the length asked for; empty when none is kept */
  callPaths(): CallPath[];
}

export function readingsOf(src: ReadingSource): Reading[] {
  const pid = String(src.pid);
  const out: Reading[] = [];
  for (const m of src.metrics()) {
    // the total is a rate's integral: calls, not calls/s
    if (Number.isFinite(m.total)) out.push({ family: 'paranode_metric_value', labels: { metric: m.name, focus: m.focus || '/', units: m.units.replace(/\/s$/, ''), pid }, value: m.total });
  }
  for (const p of src.callPaths()) {
    const at = { path: p.path, thread: p.thread, pid };
    out.push({ family: 'paranode_call_path_calls', labels: at, value: p.calls });
    for (const time of ['inclusive', 'exclusive'] as const) {
      out.push({ family: 'paranode_call_path_wall_seconds', labels: { ...at, time }, value: p.wall[time] });
      out.push({ family: 'paranode_call_path_cpu_seconds', labels: { ...at, time }, value: p.cpu[time] });
    }
    out.push({ family: 'paranode_call_path_wait_seconds', labels: at, value: p.wait });
  }
  return out;
}

/** What a session measures, with its metric manager's instances if it has one, and its call paths cut at pathLength (whole paths by default). */
export function sessionSource(
  s: { pid: number; metrics(): MetricValue[]; callPaths(k?: number): CallPath[] },
  opts: { manager?: { values(): MetricInstanceValue[] }; pathLength?: number } = {},
): ReadingSource {
  return { pid: s.pid, metrics: () => [...(opts.manager?.values() ?? []), ...s.metrics()], callPaths: () => s.callPaths(opts.pathLength ?? Infinity) };
}
