// The compact terminal table of metric values, largest first.
import type { MetricValue } from '../session/series';
import type { MetricInstanceValue } from '../metrics/manager';
import type { CallPath } from '../data/call-path-profile';

export function renderTable(metrics: MetricValue[], elapsed: number): string {
  const rows = [...metrics].sort((a, b) => b.total - a.total);
  const fmt = (m: MetricValue) => (m.units === 'seconds' ? `${m.total.toFixed(4)} s` : String(m.total));
  const w = Math.max(6, ...rows.map((m) => m.name.length));
  let out = `${'metric'.padEnd(w)}  ${'total'.padStart(14)}  (${elapsed.toFixed(1)} s)\n`;
  for (const m of rows) out += `${m.name.padEnd(w)}  ${fmt(m).padStart(14)}\n`;
  return out;
}

/** Metric instances, largest value first: total since enabled and the rate in the last full bucket. */
export function renderInstances(values: MetricInstanceValue[], elapsed: number, max = 25): string {
  const rows = values.slice(0, max).map((v) => {
    const b = v.histogram.buckets;
    const recent = b.length > 1 ? b[b.length - 2] : b[0] ?? 0;
    const total = v.range ? `${fmtNum(v.range[0])}..${fmtNum(v.range[1])}` : fmtNum(v.total);
    return [v.name, v.focus || '/', total, v.stopped ? 'taken out' : `${fmtNum(recent)} ${v.units}`];
  });
  const head = ['metric', 'focus', 'total', 'now'];
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => (i >= 2 ? c.padStart(w[i]) : c.padEnd(w[i]))).join('  ') + '\n';
  let out = `${line(head)}`;
  for (const r of rows) out += line(r);
  if (values.length > max) out += `... ${values.length - max} more (all in --json)\n`;
  for (const v of values.filter((x) => x.implausible)) out += `warning: ${v.name}${v.focus ? ` @ ${v.focus}` : ''}: ${v.implausible}\n`;
  return out + `(${elapsed.toFixed(1)} s)\n`;
}

function fmtNum(x: number): string {
  if (Number.isInteger(x)) return String(x);
  const a = Math.abs(x);
  return a >= 100 ? x.toFixed(1) : a >= 1 ? x.toFixed(3) : x.toPrecision(3);
}

/** A call-path profile, longest inclusive wall time first: seconds, a worker's paths marked with its thread. */
export function renderCallPaths(paths: CallPath[], max = 20): string {
  const s = (x: number) => x.toFixed(4);
  const rows = paths.slice(0, max).map((p) => [String(p.calls), s(p.wall.inclusive), s(p.wall.exclusive), s(p.cpu.inclusive), s(p.cpu.exclusive), s(p.wait),
    `${p.thread === 'main' ? '' : `[thread ${p.thread}] `}${p.functions.join(' > ')}`]);
  const head = ['calls', 'wall incl', 'wall excl', 'cpu incl', 'cpu excl', 'waiting', `call path (${paths[0]?.path.split('/')[2] ?? 'k'} deep)`];
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => (i < 6 ? c.padStart(w[i]) : c)).join('  ') + '\n';
  let out = line(head);
  for (const r of rows) out += line(r);
  if (paths.length > max) out += `... ${paths.length - max} more paths (all in --json)\n`;
  return out;
}
