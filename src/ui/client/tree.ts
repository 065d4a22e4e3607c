// The Resources view: the resource hierarchies as a tree to pick a focus from
// (one part per hierarchy), a metric to predict and enable at that focus, and
// the instances enabled so far.
import type { InstanceData, MetricInfo, ReplyMsg, ResourceNode } from '../protocol';
import type { Request } from './conn';
import { byId, focusText, h, num, pct } from './dom';

interface TNode {
  path: string;
  label: string;
  kind: string;
  source?: string;
  /** made here to hold others (a pid under /Thread, a hierarchy root): not in the server's list */
  synthetic: boolean;
  children: TNode[];
}

const ROOTS = ['/Code', '/Process', '/Thread', '/SyncObject'];
/** above this many nodes the tree starts collapsed below the roots (a big program's code would be a long page) */
const EXPAND_ALL_MAX = 600;

/** which focus part a path sets: a process and a thread are both the "where" of a focus */
function groupOf(path: string): string {
  const top = path.split('/')[1] ?? '';
  return top === 'Process' || top === 'Thread' ? 'Machine' : top;
}
const GROUP_ORDER = ['Code', 'Machine', 'SyncObject'];

const lastPart = (p: string): string => p.slice(p.lastIndexOf('/') + 1) || p;

/** Link the server's flat list into trees under the hierarchy roots. */
export function buildTree(list: ResourceNode[]): { roots: TNode[]; all: Map<string, TNode> } {
  const all = new Map<string, TNode>();
  const roots: TNode[] = [];
  for (const r of ROOTS) {
    const n: TNode = { path: r, label: r, kind: 'hierarchy', synthetic: true, children: [] };
    all.set(r, n);
    roots.push(n);
  }
  for (const r of list) {
    if (all.has(r.path)) continue;
    all.set(r.path, { path: r.path, label: r.label ?? lastPart(r.path), kind: r.kind, source: r.source, synthetic: false, children: [] });
  }
  // module names hold '/' (lib/parse.js): a function's module is the longest module path before it, not its last '/'
  const longestFirst = (kind: string) => list.filter((r) => r.kind === kind).map((r) => r.path).sort((a, b) => b.length - a.length);
  const modules = longestFirst('module');
  const functions = longestFirst('function');
  const under = (path: string, candidates: string[]) => candidates.find((c) => path.startsWith(c + '/'));
  const kindOf = new Map(list.map((r) => [r.path, r.kind]));

  const parentPath = (path: string): string | null => {
    const kind = kindOf.get(path);
    if (kind === 'module') return '/Code';
    if (kind === 'function') return under(path, modules) ?? generic(path);
    if (kind === 'callsite' || kind === 'loop') return under(path, functions) ?? under(path, modules) ?? generic(path);
    return generic(path);
  };
  const generic = (path: string): string | null => {
    const i = path.lastIndexOf('/');
    return i > 0 ? path.slice(0, i) : null;
  };
  const linked = new Set<string>(ROOTS);
  const link = (n: TNode): void => {
    if (linked.has(n.path)) return;
    linked.add(n.path);
    const pp = parentPath(n.path);
    if (pp === null) {
      roots.push(n);
      return;
    }
    let parent = all.get(pp);
    if (!parent) {
      const name = lastPart(pp);
      const label = pp.startsWith('/Thread/') && /^\d+$/.test(name) ? `process ${name}` : name;
      parent = { path: pp, label, kind: 'group', synthetic: true, children: [] };
      all.set(pp, parent);
    }
    link(parent);
    parent.children.push(n);
  };
  for (const n of [...all.values()]) link(n);
  const collator = new Intl.Collator(undefined, { numeric: true });
  for (const n of all.values()) n.children.sort((a, b) => collator.compare(a.label, b.label));
  return { roots, all };
}

export class ResourcesView {
  private roots: TNode[] = [];
  private all = new Map<string, TNode>();
  private readonly collapsed = new Set<string>();
  private seenBefore = false;
  /** hierarchy group -> the selected path */
  private readonly selected = new Map<string, string>();
  private query = '';
  private metrics: MetricInfo[] = [];
  /** "<metric>@<focus>" of the prediction shown */
  private predictedFor: string | null = null;
  private readonly rows = new Map<string, HTMLLIElement>();

  private readonly treeEl = byId('resource-tree');
  private readonly searchEl = byId<HTMLInputElement>('resource-search');
  private readonly focusEl = byId('focus');
  private readonly metricEl = byId<HTMLSelectElement>('metric');
  private readonly predictionEl = byId('prediction');
  private readonly errorEl = byId('ui-error');
  private readonly enabledEl = byId('enabled');
  private readonly observedEl = byId('observed-cost');

  constructor(private readonly request: (r: Request) => Promise<ReplyMsg>) {
    let timer = 0;
    this.searchEl.addEventListener('input', () => {
      clearTimeout(timer);
      timer = window.setTimeout(() => {
        this.query = this.searchEl.value.trim().toLowerCase();
        this.renderTree();
      }, 80);
    });
    this.treeEl.addEventListener('click', (e) => this.onTreeClick(e));
    this.metricEl.addEventListener('change', () => this.focusChanged());
    byId('predict').addEventListener('click', () => void this.predict());
    byId('enable').addEventListener('click', () => void this.enable());
    byId('refresh-resources').addEventListener('click', () => void this.refresh());
    this.enabledEl.addEventListener('click', (e) => {
      const b = (e.target as Element).closest('button.disable');
      const row = b?.closest<HTMLElement>('[data-key]');
      if (b instanceof HTMLButtonElement && row?.dataset.key) void this.disable(b, row.dataset.key);
    });
    this.renderFocus();
    this.renderTree();
  }

  setMetrics(metrics: MetricInfo[]): void {
    this.metrics = metrics;
    const keep = this.metricEl.value;
    this.metricEl.replaceChildren(...metrics.map((m) => h('option', { value: m.name, title: `${m.units}; foci: ${m.hierarchies.join(' ') || 'the whole program only'}` }, `${m.name} — ${m.title}`)));
    if (metrics.some((m) => m.name === keep)) this.metricEl.value = keep;
  }

  setResources(list: ResourceNode[]): void {
    const { roots, all } = buildTree(list);
    this.roots = roots;
    this.all = all;
    if (!this.seenBefore && list.length > EXPAND_ALL_MAX) {
      for (const n of all.values()) if (n.children.length && !ROOTS.includes(n.path)) this.collapsed.add(n.path);
    }
    if (list.length) this.seenBefore = true;
    this.renderTree();
  }

  /** the focus as the command line writes it: the selected parts joined by ',' ('' = whole program) */
  focus(): string {
    return GROUP_ORDER.concat([...this.selected.keys()].filter((g) => !GROUP_ORDER.includes(g)))
      .map((g) => this.selected.get(g)).filter((p): p is string => !!p).join(',');
  }

  private onTreeClick(e: MouseEvent): void {
    const target = e.target as Element;
    const row = target.closest<HTMLElement>('.res');
    const path = row?.dataset.path;
    if (!row || !path) return;
    const node = this.all.get(path);
    if (target.closest('.caret')) {
      if (node?.children.length) {
        if (this.collapsed.has(path)) this.collapsed.delete(path);
        else this.collapsed.add(path);
        this.renderTree();
      }
      return;
    }
    const g = groupOf(path);
    // a hierarchy's root is the whole of it: the same as no part
    if (ROOTS.includes(path) || this.selected.get(g) === path) this.selected.delete(g);
    else this.selected.set(g, path);
    this.focusChanged();
    this.renderTree();
  }

  private focusChanged(): void {
    this.renderFocus();
    const key = this.requestKey();
    if (this.predictedFor !== key) {
      this.predictedFor = null;
      this.predictionEl.textContent = '';
    }
  }

  private renderFocus(): void {
    const f = this.focus();
    this.focusEl.textContent = f;
    this.focusEl.title = f || 'whole program';
    this.focusEl.classList.toggle('empty', !f);
  }

  private requestKey(): string {
    return `${this.metricEl.value}@${this.focus()}`;
  }

  private renderTree(): void {
    const q = this.query;
    const shown = new Set<string>();
    // a node shows if it matches or holds one that does (its ancestors show with it)
    const mark = (n: TNode): boolean => {
      let any = !q || n.label.toLowerCase().includes(q) || n.path.toLowerCase().includes(q) || (n.source?.toLowerCase().includes(q) ?? false);
      for (const c of n.children) if (mark(c)) any = true;
      if (any) shown.add(n.path);
      return any;
    };
    for (const r of this.roots) mark(r);
    const selected = new Set(this.selected.values());
    const out: HTMLElement[] = [];
    const walk = (n: TNode, depth: number): void => {
      if (!shown.has(n.path) && !ROOTS.includes(n.path)) return;
      const open = !!q || !this.collapsed.has(n.path);
      const caret = n.children.length ? (open ? '▾' : '▸') : '';
      const cls = ['res', selected.has(n.path) ? 'selected' : '', n.synthetic ? 'synthetic' : '', depth === 0 ? 'root' : ''].filter(Boolean).join(' ');
      out.push(h('div', { class: cls, 'data-path': n.path, 'data-kind': n.kind, title: n.path, style: `padding-left:${4 + depth * 14}px` },
        h('span', { class: 'caret' }, caret),
        h('span', { class: 'label' }, n.label),
        depth > 0 && n.kind !== 'group' ? h('span', { class: 'kind' }, n.kind) : null,
        n.source ? h('span', { class: 'src' }, n.source) : null,
        depth === 0 && !n.children.length ? h('span', { class: 'kind' }, 'nothing listed yet') : null));
      if (open) for (const c of n.children) walk(c, depth + 1);
    };
    for (const r of this.roots) walk(r, 0);
    this.treeEl.replaceChildren(...out);
  }

  private showError(text: string): void {
    this.errorEl.textContent = text;
    this.errorEl.hidden = !text;
  }

  private showPrediction(key: string, p: { cost: number; points: number }): void {
    this.predictedFor = key;
    this.predictionEl.textContent = `predicted cost ${pct(p.cost)} of a thread, ${p.points} points`;
  }

  private async predict(): Promise<boolean> {
    const metric = this.metricEl.value;
    if (!metric) {
      this.showError('no metric to predict: the session has not said which metrics it has yet');
      return false;
    }
    const focus = this.focus();
    const key = `${metric}@${focus}`;
    this.showError('');
    this.predictionEl.textContent = 'predicting…';
    const r = await this.request({ type: 'predict', metric, focus });
    if (r.error) {
      this.predictionEl.textContent = '';
      this.showError(r.error);
      return false;
    }
    if (r.prediction) this.showPrediction(key, r.prediction);
    return true;
  }

  private async enable(): Promise<void> {
    const metric = this.metricEl.value;
    const focus = this.focus();
    const key = `${metric}@${focus}`;
    // what it will cost is said before it is paid (the server enables a glob it cannot predict anyway)
    if (this.predictedFor !== key) await this.predict();
    const r = await this.request({ type: 'enable', metric, focus });
    if (r.error) {
      this.showError(r.error);
      return;
    }
    this.showError('');
    if (r.prediction) this.showPrediction(key, r.prediction);
  }

  private async disable(b: HTMLButtonElement, key: string): Promise<void> {
    b.disabled = true;
    const r = await this.request({ type: 'disable', key });
    if (r.error) {
      b.disabled = false;
      this.showError(r.error);
    } else this.showError('');
  }

  private async refresh(): Promise<void> {
    const b = byId<HTMLButtonElement>('refresh-resources');
    b.disabled = true;
    const r = await this.request({ type: 'resources' });
    b.disabled = false;
    if (r.error) this.showError(r.error);
    else if (r.resources) this.setResources(r.resources);
  }

  /** The enabled instances, rows kept by key (a row being clicked is not replaced under the pointer). */
  setInstances(insts: InstanceData[]): void {
    const seen = new Set<string>();
    let observed: InstanceData | undefined;
    for (const i of insts) {
      if (i.metric === 'observed_cost' && i.internal) observed ??= i;
      seen.add(i.key);
      let row = this.rows.get(i.key);
      if (!row) {
        row = h('li', { class: i.internal ? 'inst internal' : 'inst', 'data-key': i.key },
          h('span', { class: 'what', title: i.key }, `${i.metric}@${focusText(i.focus)}`),
          h('span', { class: 'total' }),
          h('span', { class: 'pred' }),
          h('span', { class: 'warn' }),
          i.internal ? h('span', { class: 'tag', title: 'enabled by the session itself' }, 'internal') : h('button', { class: 'disable', type: 'button' }, 'Disable'));
        this.rows.set(i.key, row);
      }
      // exact, for whoever reads the page (tests, scripts)
      row.dataset.total = String(i.total);
      // a request taken out over the limit keeps what it measured, marked as no longer counting
      row.classList.toggle('stopped', !!i.stopped);
      const [, total, pred, warn] = row.children;
      // the total is the rate's integral: calls, not calls/s
      total.textContent = `total ${num(i.total)} ${i.units.replace(/\/s$/, '')}`;
      pred.textContent = i.predictedCost !== undefined ? `predicted ${pct(i.predictedCost)}` : '';
      warn.textContent = [i.stopped ? `taken out: ${i.stopped}` : '', i.implausible ? `⚠ ${i.implausible}` : ''].filter(Boolean).join(' · ');
    }
    for (const [k, row] of this.rows) if (!seen.has(k)) { row.remove(); this.rows.delete(k); }
    // the page's own first, in the order given
    const order = [...insts].sort((a, b) => Number(!!a.internal) - Number(!!b.internal)).map((i) => this.rows.get(i.key)!);
    const current = [...this.enabledEl.children];
    if (order.length !== current.length || order.some((r, k) => current[k] !== r)) this.enabledEl.replaceChildren(...order);
    this.enabledEl.classList.toggle('none', !insts.length);

    const last = observed?.buckets.length ? observed.buckets[observed.buckets.length - 1] : undefined;
    this.observedEl.textContent = `observed cost now ${last === undefined ? '–' : pct(last)}`;
    this.observedEl.title = observed ? 'the instrumentation\'s cost in the last bucket, as a share of one thread\'s time' : 'not measured in this session';
  }

  metricInfo(name: string): MetricInfo | undefined {
    return this.metrics.find((m) => m.name === name);
  }
}
