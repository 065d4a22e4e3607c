// The Histograms view: one uPlot chart per metric, a series per focus. Values
// arrive whole in each InstancesMsg; only the latest one is drawn per frame,
// and a chart whose series stay the same is updated in place.
import uPlot from 'uplot';
import type { InstanceData, MetricInfo } from '../protocol';
import { byId, chartWidth, focusText, h, num } from './dom';

declare global {
  interface Window {
    /** for the benchmark: how much the page receives and how long drawing it takes */
    __paranode: { messages: number; renders: number; renderMs: number };
  }
}

export const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
const HEIGHT = 190;
/** f2 before f10 */
const byName = new Intl.Collator(undefined, { numeric: true });

interface Chart {
  el: HTMLElement;
  title: HTMLElement;
  plotEl: HTMLElement;
  plot: uPlot;
  /** the series' keys: a change re-creates the chart */
  sig: string;
}

/** bucket seconds as people read them (0.2, 0.4, 12.8), without float dust */
const secs = (x: number): string => String(+x.toPrecision(6));

/** Aligned x and y arrays for uPlot: bucket k at k × bucketSeconds (histograms folded to different widths share the x axis). */
function align(insts: InstanceData[]): uPlot.AlignedData {
  const widths = new Set(insts.map((i) => i.bucketSeconds));
  if (widths.size === 1) {
    const bs = insts[0].bucketSeconds;
    const n = Math.max(0, ...insts.map((i) => i.buckets.length));
    const x = Array.from({ length: n }, (_, k) => k * bs);
    return [x, ...insts.map((i) => Array.from({ length: n }, (_, k) => (k < i.buckets.length ? i.buckets[k] : null)))];
  }
  const at = new Map<number, number>();
  for (const i of insts) for (let k = 0; k < i.buckets.length; k++) at.set(+(k * i.bucketSeconds).toFixed(9), 0);
  const x = [...at.keys()].sort((a, b) => a - b);
  x.forEach((t, k) => at.set(t, k));
  return [x, ...insts.map((i) => {
    const y: (number | null)[] = new Array(x.length).fill(null);
    for (let k = 0; k < i.buckets.length; k++) y[at.get(+(k * i.bucketSeconds).toFixed(9))!] = i.buckets[k];
    return y;
  })];
}

export class HistogramsView {
  private readonly charts = new Map<string, Chart>();
  private readonly container = byId('charts');
  private readonly empty = byId('charts-empty');
  private metrics = new Map<string, MetricInfo>();

  constructor() {
    window.__paranode = { messages: 0, renders: 0, renderMs: 0 };
  }

  setMetrics(metrics: MetricInfo[]): void {
    this.metrics = new Map(metrics.map((m) => [m.name, m]));
  }

  render(insts: InstanceData[]): void {
    const t0 = performance.now();
    const byMetric = new Map<string, InstanceData[]>();
    for (const i of [...insts].sort((a, b) => byName.compare(a.metric, b.metric) || byName.compare(a.focus, b.focus))) {
      let list = byMetric.get(i.metric);
      if (!list) byMetric.set(i.metric, (list = []));
      list.push(i);
    }
    for (const [name, c] of this.charts) {
      if (byMetric.has(name)) continue;
      c.plot.destroy();
      c.el.remove();
      this.charts.delete(name);
    }
    const order: HTMLElement[] = [];
    for (const [name, list] of byMetric) {
      // (a series taken out is labelled so: the chart is made again when one is)
      const sig = list.map((i) => `${i.key}${i.stopped ? '\t(out)' : ''}`).join('\n');
      const data = align(list);
      let c = this.charts.get(name);
      if (c && c.sig !== sig) {
        c.plot.destroy();
        c.plotEl.replaceChildren();
        c.plot = this.plot(c.plotEl, list, data);
        c.sig = sig;
      } else if (c) c.plot.setData(data);
      else {
        const title = h('div', { class: 'chart-title' });
        const plotEl = h('div', { class: 'plot' });
        const el = h('div', { class: 'chart', 'data-metric': name }, title, plotEl);
        // the chart is drawn into the page first: a width can be read where the tab shows
        this.container.append(el);
        c = { el, title, plotEl, plot: this.plot(plotEl, list, data), sig };
        this.charts.set(name, c);
      }
      c.el.dataset.series = String(list.length);
      c.el.dataset.points = String(Math.max(0, ...list.map((i) => i.buckets.length)));
      // the seconds the longest series covers: grows as the program runs, whether or not it folded
      c.el.dataset.seconds = String(Math.max(0, ...list.map((i) => i.buckets.length * i.bucketSeconds)));
      const info = this.metrics.get(name);
      const units = list[0].units || info?.units || '';
      const widths = [...new Set(list.map((i) => i.bucketSeconds))].sort((a, b) => a - b).map(secs).join(' / ');
      const odd = list.filter((i) => i.implausible).map((i) => `${focusText(i.focus)}: ${i.implausible}`);
      const out = list.filter((i) => i.stopped).map((i) => focusText(i.focus));
      const text = `${name}${info ? ` — ${info.title}` : ''} · ${units} · bucket ${widths} s${out.length ? ` · taken out over --max-overhead: ${out.join(', ')}` : ''}${odd.length ? ` · ⚠ ${odd.join('; ')}` : ''}`;
      if (c.title.textContent !== text) c.title.textContent = text;
      order.push(c.el);
    }
    const current = [...this.container.children];
    if (order.length !== current.length || order.some((e, k) => current[k] !== e)) this.container.replaceChildren(...order);
    this.empty.hidden = byMetric.size > 0;
    const stats = window.__paranode;
    stats.renders++;
    stats.renderMs += performance.now() - t0;
  }

  /** Fit the charts to their container (after the tab shows, or the window is resized). */
  resize(): void {
    for (const c of this.charts.values()) {
      const width = chartWidth(c.plotEl);
      if (Math.abs(width - c.plot.width) > 2) c.plot.setSize({ width, height: HEIGHT });
    }
  }

  private plot(el: HTMLElement, list: InstanceData[], data: uPlot.AlignedData): uPlot {
    const units = list[0].units;
    const opts: uPlot.Options = {
      width: chartWidth(el),
      height: HEIGHT,
      scales: { x: { time: false } },
      legend: { live: true },
      cursor: { drag: { x: true, y: false } },
      series: [
        { label: 's', value: (_u, v) => (v === null || v === undefined ? '–' : `${secs(v)} s`) },
        ...list.map((i, k): uPlot.Series => ({
          label: `${focusText(i.focus)}${i.stopped ? ' (taken out)' : ''}`,
          stroke: PALETTE[k % PALETTE.length],
          width: 1.5,
          spanGaps: true,
          value: (_u, v) => (v === null || v === undefined ? '–' : `${num(v)} ${units}`),
        })),
      ],
      axes: [
        { label: 'seconds since the session started', labelSize: 18, size: 36 },
        { label: units, labelSize: 18, size: 56, values: (_u, ticks) => ticks.map(num) },
      ],
    };
    return new uPlot(opts, data, el);
  }
}
