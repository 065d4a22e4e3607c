// The Search view: the Performance Consultant's search history graph (laid
// out by dagre, drawn as SVG), its cost meter, and the report at the end.
import dagre from '@dagrejs/dagre';
import uPlot from 'uplot';
import type { BottleneckData, ConsultantMsg, CostPoint, ReportMsg, SearchNodeData } from '../protocol';
import { byId, chartWidth, cut, focusText, h, num, pct, s, shortFocus } from './dom';

const W = 196;
const H = 52;
const STATES: [SearchNodeData['state'], string][] = [
  ['testing', 'being tested'], ['true', 'true (a bottleneck)'], ['false', 'false'],
  ['too costly', 'too costly to test'], ['waiting', 'waiting'], ['unknown', 'not yet tested'], ['not testable', 'not testable'],
];

/** a link to the source page at "<module>:<line>" (the line is after the last ':') */
export function sourceLink(token: string, source: string): HTMLAnchorElement {
  const line = source.slice(source.lastIndexOf(':') + 1);
  const href = `/source?token=${encodeURIComponent(token)}&at=${encodeURIComponent(source)}${/^\d+$/.test(line) ? `#L${line}` : ''}`;
  return h('a', { class: 'source', href, target: '_blank', rel: 'noopener' }, source);
}

const valueText = (n: { value?: number; threshold: number }): string => `${n.value === undefined ? '–' : pct(n.value, 1)} vs ${pct(n.threshold, 0)}`;

function details(n: SearchNodeData): string[] {
  const lines = [
    `${n.hypothesis} at ${focusText(n.focus)}`,
    `state: ${n.state}`,
    `value ${n.value === undefined ? '–' : pct(n.value)} vs threshold ${pct(n.threshold)}`,
  ];
  if (n.thread) lines.push(`thread: ${n.thread}`);
  if (n.predictedCost !== undefined) lines.push(`predicted cost: ${pct(n.predictedCost)} of a thread`);
  if (n.source) lines.push(`source: ${n.source}`);
  if (n.note) lines.push(`note: ${n.note}`);
  for (const t of n.tests) lines.push(`test ${num(t.from)}–${num(t.to)} s: ${pct(t.value)} → ${t.verdict ? 'true' : 'false'}`);
  return lines;
}

export class SearchView {
  private readonly nodes = new Map<number, SearchNodeData>();
  private readonly drawn = new Map<number, SVGGElement>();
  private readonly cost: CostPoint[] = [];
  private limit: number | null = null;
  private costPlot: uPlot | null = null;
  private selectedId: number | null = null;
  private layoutTimer = 0;
  private lastLayout = -Infinity;
  private layoutMs = 0;

  private readonly graphEl = byId('search-graph');
  private readonly detailEl = byId('node-detail');
  private readonly statusEl = byId('search-status');
  private readonly costEl = byId('cost-chart');
  private readonly costNowEl = byId('cost-now');
  private readonly reportEl = byId('report');

  constructor(private readonly token: string) {
    byId('search-legend').replaceChildren(...STATES.map(([state, text]) =>
      h('span', { class: 'legend-item' }, h('span', { class: 'swatch', 'data-state': state }), text)));
    this.graphEl.addEventListener('click', (e) => {
      const g = (e.target as Element).closest<SVGGElement>('g.node');
      this.selectedId = g ? Number(g.dataset.id) : null;
      for (const [id, el] of this.drawn) el.classList.toggle('selected', id === this.selectedId);
      this.showDetail();
    });
  }

  /** with no search in the session the view says how to get one */
  setConsultant(on: boolean): void {
    byId('search-note').hidden = on;
    byId('search-body').hidden = !on;
  }

  onConsultant(m: ConsultantMsg): void {
    let added = false;
    for (const n of m.nodes) {
      if (!this.nodes.has(n.id)) added = true;
      this.nodes.set(n.id, n);
      const g = this.drawn.get(n.id);
      // a change of state alone is a recolouring: no new layout
      if (g) this.paint(g, n);
    }
    if (added) this.scheduleLayout();
    if (m.nodes.some((n) => n.id === this.selectedId)) this.showDetail();
    this.statusEl.textContent = m.complete ? 'complete' : 'searching…';
    this.statusEl.dataset.complete = String(m.complete);
    this.cost.push(...m.cost);
    this.limit = m.limit;
    this.drawCost();
  }

  onReport(m: ReportMsg): void {
    const rows = m.bottlenecks.map((b) => this.bottleneck(b));
    this.reportEl.replaceChildren(
      h('h2', {}, `Report: ${m.bottlenecks.length} bottleneck${m.bottlenecks.length === 1 ? '' : 's'}`),
      rows.length ? h('table', { class: 'bottlenecks' },
        h('thead', {}, h('tr', {}, h('th', {}, 'hypothesis'), h('th', {}, 'focus'), h('th', {}, 'value vs threshold'), h('th', {}, 'source'))),
        h('tbody', {}, ...rows)) : h('p', { class: 'dim' }, 'no bottleneck was found'),
      h('pre', { class: 'report-text' }, m.text));
    this.reportEl.hidden = false;
  }

  private bottleneck(b: BottleneckData): HTMLTableRowElement {
    const ex = b.excerpt;
    return h('tr', { class: 'bottleneck' },
      h('td', {}, b.hypothesis),
      h('td', { class: 'focus', title: b.focus }, focusText(b.focus), b.thread ? h('div', { class: 'dim' }, `thread ${b.thread}`) : null),
      h('td', {}, `${pct(b.value, 1)} vs ${pct(b.threshold, 0)}`),
      h('td', {}, b.source ? sourceLink(this.token, b.source) : h('span', { class: 'dim' }, '–'),
        ex ? h('details', {}, h('summary', {}, 'lines'), h('pre', { class: 'excerpt' },
          ...ex.lines.map((l, k) => h('span', { class: ex.first + k === ex.line ? 'hit' : '' }, `${String(ex.first + k).padStart(5)}  ${l}\n`)))) : null));
  }

  private scheduleLayout(): void {
    if (this.layoutTimer) return;
    // at most ~4 layouts a second, fewer when a layout itself is slow
    const gap = Math.max(250, 4 * this.layoutMs);
    const wait = Math.max(0, this.lastLayout + gap - performance.now());
    this.layoutTimer = window.setTimeout(() => {
      this.layoutTimer = 0;
      this.layout();
    }, wait);
  }

  private layout(): void {
    const t0 = performance.now();
    const g = new dagre.graphlib.Graph();
    g.setGraph({ rankdir: 'TB', nodesep: 14, ranksep: 36, marginx: 8, marginy: 8 });
    g.setDefaultEdgeLabel(() => ({}));
    const ids = [...this.nodes.keys()].sort((a, b) => a - b);
    for (const id of ids) g.setNode(String(id), { width: W, height: H });
    for (const id of ids) {
      const p = this.nodes.get(id)!.parent;
      if (p !== null && this.nodes.has(p)) g.setEdge(String(p), String(id));
    }
    dagre.layout(g);
    const size = g.graph() as { width?: number; height?: number };
    const width = Math.ceil(size.width ?? W), height = Math.ceil(size.height ?? H);
    const svg = s('svg', { width, height, viewBox: `0 0 ${width} ${height}`, class: 'search-svg' });
    const edges = s('g', { class: 'edges' });
    for (const e of g.edges()) {
      const pts = (g.edge(e) as { points?: { x: number; y: number }[] }).points ?? [];
      if (pts.length) edges.append(s('path', { class: 'edge', d: pts.map((p, k) => `${k ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join('') }));
    }
    svg.append(edges);
    this.drawn.clear();
    for (const id of ids) {
      const n = this.nodes.get(id)!;
      const pos = g.node(String(id)) as { x: number; y: number };
      const el = s('g', { class: 'node', transform: `translate(${(pos.x - W / 2).toFixed(1)},${(pos.y - H / 2).toFixed(1)})` },
        s('title'),
        s('rect', { width: W, height: H, rx: 4 }),
        s('text', { x: 6, y: 15, class: 'hyp' }),
        s('text', { x: 6, y: 30, class: 'foc' }),
        s('text', { x: 6, y: 45, class: 'val' }));
      el.classList.toggle('selected', id === this.selectedId);
      this.paint(el, n);
      this.drawn.set(id, el);
      svg.append(el);
    }
    this.graphEl.replaceChildren(svg);
    this.lastLayout = performance.now();
    this.layoutMs = this.lastLayout - t0;
  }

  private paint(el: SVGGElement, n: SearchNodeData): void {
    el.dataset.id = String(n.id);
    el.dataset.state = n.state;
    el.dataset.hypothesis = n.hypothesis;
    el.dataset.focus = n.focus;
    const [title, , hyp, foc, val] = el.children;
    title.textContent = details(n).join('\n');
    hyp.textContent = cut(n.hypothesis, 30);
    foc.textContent = cut(shortFocus(n.focus), 32);
    val.textContent = `${valueText(n)}${n.state === 'testing' ? ' · testing' : ''}`;
  }

  private showDetail(): void {
    const n = this.selectedId === null ? undefined : this.nodes.get(this.selectedId);
    if (!n) {
      this.detailEl.replaceChildren(h('p', { class: 'dim' }, 'click a node for its details'));
      return;
    }
    this.detailEl.replaceChildren(
      h('h3', {}, n.hypothesis),
      h('dl', {},
        h('dt', {}, 'focus'), h('dd', { class: 'mono' }, focusText(n.focus)),
        h('dt', {}, 'state'), h('dd', {}, n.state),
        h('dt', {}, 'value'), h('dd', {}, `${n.value === undefined ? '–' : pct(n.value)} vs threshold ${pct(n.threshold)}`),
        n.thread ? h('dt', {}, 'thread') : null, n.thread ? h('dd', {}, n.thread) : null,
        n.predictedCost !== undefined ? h('dt', {}, 'predicted cost') : null, n.predictedCost !== undefined ? h('dd', {}, `${pct(n.predictedCost)} of a thread`) : null,
        n.source ? h('dt', {}, 'source') : null, n.source ? h('dd', {}, sourceLink(this.token, n.source)) : null,
        n.note ? h('dt', {}, 'note') : null, n.note ? h('dd', {}, n.note) : null),
      n.tests.length ? h('table', { class: 'tests' },
        h('thead', {}, h('tr', {}, h('th', {}, 'from–to s'), h('th', {}, 'value'), h('th', {}, 'verdict'))),
        h('tbody', {}, ...n.tests.map((t) => h('tr', {}, h('td', {}, `${num(t.from)}–${num(t.to)}`), h('td', {}, pct(t.value)), h('td', {}, t.verdict ? 'true' : 'false'))))) : h('p', { class: 'dim' }, 'no tests yet'));
  }

  private drawCost(): void {
    const last = this.cost[this.cost.length - 1];
    this.costNowEl.textContent = `observed ${last ? pct(last.observed) : '–'} · predicted ${last ? pct(last.predicted) : '–'} · limit ${this.limit === null ? 'none' : pct(this.limit)}`;
    if (!this.cost.length) return;
    const data: uPlot.AlignedData = [
      this.cost.map((p) => p.t),
      this.cost.map((p) => p.observed * 100),
      this.cost.map((p) => p.predicted * 100),
      this.cost.map(() => (this.limit === null ? null : this.limit * 100)),
    ];
    if (this.costPlot) {
      this.costPlot.setData(data);
      return;
    }
    const v = (_u: uPlot, x: number | null) => (x === null || x === undefined ? '–' : `${x.toFixed(2)}%`);
    this.costPlot = new uPlot({
      width: chartWidth(this.costEl, 420),
      height: 150,
      scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, Math.max(max, (this.limit ?? 0) * 100 * 1.2, 1)] } },
      series: [
        { label: 's', value: (_u, x) => (x === null || x === undefined ? '–' : `${num(x)} s`) },
        { label: 'observed', stroke: '#d62728', width: 1.5, value: v, points: { show: false } },
        { label: 'predicted', stroke: '#1f77b4', width: 1.5, value: v, points: { show: false } },
        { label: 'limit', stroke: '#888', dash: [4, 4], width: 1, value: v, points: { show: false } },
      ],
      axes: [{}, { values: (_u, ticks) => ticks.map((t) => `${t}%`), size: 48 }],
    }, data, this.costEl);
  }

  resize(): void {
    if (!this.costPlot) return;
    const width = chartWidth(this.costEl, 420);
    if (Math.abs(width - this.costPlot.width) > 2) this.costPlot.setSize({ width, height: 150 });
  }
}
