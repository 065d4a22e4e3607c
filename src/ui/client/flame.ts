// The Flame view: each call-path profile or set of stack samples as an icicle
// (root at top), a frame's width its inclusive value. Frames are positioned
// divs: hover and click come for free, and a frame too narrow to see is left out.
import type { FlameGraph, FlameMsg, FlameNode } from '../protocol';
import { byId, h, num } from './dom';

const ROW = 18;
/** frames narrower than this share of the width are not drawn (nor their callees) */
const MIN_SHARE = 0.002;

function colour(name: string): string {
  let x = 0;
  for (let i = 0; i < name.length; i++) x = (x * 31 + name.charCodeAt(i)) >>> 0;
  return `hsl(${10 + (x % 40)}, ${70 + (x >> 8) % 20}%, ${68 + (x >> 16) % 12}%)`;
}

const amount = (g: FlameGraph, v: number): string => (g.units === 'seconds' ? `${num(v)} s` : `${v} sample${v === 1 ? '' : 's'}`);

export class FlameView {
  private readonly container = byId('flame');
  private sent = '';
  /** label -> the names from the root's child down to the frame zoomed into */
  private readonly zoom = new Map<string, string[]>();
  private graphs: FlameGraph[] = [];

  constructor() {
    this.container.addEventListener('click', (e) => {
      const f = (e.target as Element).closest<HTMLElement>('.frame');
      const graph = f?.closest<HTMLElement>('.flame');
      if (!f || !graph) return;
      const label = graph.dataset.label ?? '';
      this.zoom.set(label, JSON.parse(f.dataset.at ?? '[]') as string[]);
      const g = this.graphs.find((x) => x.label === label);
      if (g) graph.replaceWith(this.graph(g));
    });
    this.render({ type: 'flame', graphs: [] });
  }

  render(m: FlameMsg): void {
    const text = JSON.stringify(m.graphs);
    if (text === this.sent && this.container.childElementCount) return;
    this.sent = text;
    this.graphs = m.graphs;
    if (!m.graphs.length) {
      this.container.replaceChildren(h('p', { class: 'note' }, 'no call-path profile or stack samples in this session (use --call-paths, or diagnose)'));
      return;
    }
    this.container.replaceChildren(...m.graphs.map((g) => this.graph(g)));
  }

  private graph(g: FlameGraph): HTMLElement {
    const info = h('div', { class: 'flame-info' }, 'hover a frame for its values; click one to zoom in, the top one to zoom out');
    const frames: HTMLElement[] = [];
    const total = g.root.value || 1;
    const frame = (n: FlameNode, at: string[], depth: number, x: number, w: number) => {
      const self = n.self;
      const tip = `${n.name}\n${amount(g, n.value)} (${((n.value / total) * 100).toFixed(1)}%)\nself ${amount(g, self)}${n.calls !== undefined ? `\ncalls ${n.calls}` : ''}`;
      const el = h('div', {
        class: depth === 0 ? 'frame root' : 'frame',
        'data-at': JSON.stringify(at),
        title: tip,
        style: `left:${(x * 100).toFixed(3)}%;width:${(w * 100).toFixed(3)}%;top:${depth * ROW}px;background:${depth === 0 ? '#ddd' : colour(n.name)}`,
      }, w > 0.02 ? n.name : '');
      el.addEventListener('mouseenter', () => { info.textContent = tip.replaceAll('\n', ' · '); });
      frames.push(el);
    };
    // the zoomed frame's ancestors span the width above it
    let node = g.root;
    const path: string[] = [];
    let depth = 0;
    frame(node, [], depth++, 0, 1);
    for (const name of this.zoom.get(g.label) ?? []) {
      const next = node.children.find((c) => c.name === name);
      if (!next) break;
      node = next;
      path.push(name);
      frame(node, [...path], depth++, 0, 1);
    }
    let maxDepth = depth;
    const scale = node.value || 1;
    const walk = (n: FlameNode, at: string[], d: number, x: number): void => {
      let cx = x;
      for (const c of [...n.children].sort((a, b) => a.name.localeCompare(b.name))) {
        const w = c.value / scale;
        if (w >= MIN_SHARE) {
          const cat = [...at, c.name];
          frame(c, cat, d, cx, w);
          maxDepth = Math.max(maxDepth, d + 1);
          walk(c, cat, d + 1, cx);
        }
        cx += w;
      }
    };
    walk(node, path, depth, 0);
    return h('div', { class: 'flame', 'data-label': g.label },
      h('div', { class: 'flame-title' }, `${g.label} · ${amount(g, g.root.value)}`),
      h('div', { class: 'flame-body', style: `height:${maxDepth * ROW}px` }, ...frames),
      info);
  }
}
