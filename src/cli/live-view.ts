// The compact terminal table of metric values, largest first.
import type { MetricValue } from '../api/session';

export function renderTable(metrics: MetricValue[], elapsed: number): string {
  const rows = [...metrics].sort((a, b) => b.total - a.total);
  const fmt = (m: MetricValue) => (m.units === 'seconds' ? `${m.total.toFixed(4)} s` : String(m.total));
  const w = Math.max(6, ...rows.map((m) => m.name.length));
  let out = `${'metric'.padEnd(w)}  ${'total'.padStart(14)}  (${elapsed.toFixed(1)} s)\n`;
  for (const m of rows) out += `${m.name.padEnd(w)}  ${fmt(m).padStart(14)}\n`;
  return out;
}
