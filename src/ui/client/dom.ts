// Small DOM helpers: the page has no framework, so elements are built here.

type Attrs = Record<string, string | number | boolean | undefined | null>;
type Child = Node | string | null | undefined | false;

/** An element with attributes (class, data-*, ...; false/null/undefined leave one out) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element (they need their namespace, which createElement does not give). */
export function s<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c);
  }
}

/** The element with this id (the page's skeleton is in index.html: a missing one is a bug). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`paranode ui: no #${id} in the page`);
  return el as T;
}

/** A share of a thread (s/s) as a percentage. */
export function pct(x: number | undefined | null, digits = 2): string {
  if (x === undefined || x === null || !Number.isFinite(x)) return '–';
  // a small cost is still said: 0.0004%, not 0.00%
  const v = x * 100;
  return v !== 0 && Math.abs(v) < 10 ** -digits ? `${v.toPrecision(1)}%` : `${v.toFixed(digits)}%`;
}

/** A number compact enough for a row: 3 significant digits, no exponent for everyday sizes. */
export function num(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  if (a === 0) return '0';
  if (a >= 1e6 || a < 1e-3) return x.toExponential(2);
  if (Number.isInteger(x)) return String(x);
  return String(+x.toPrecision(3));
}

/** A focus as people read it: '' is the whole program. */
export function focusText(focus: string): string {
  return focus === '' ? 'whole program' : focus;
}

/** The last '/'-part of each part of a focus (short enough for a graph node). */
export function shortFocus(focus: string): string {
  if (!focus) return 'whole program';
  return focus.split(',').map((p) => {
    const parts = p.trim().split('/').filter(Boolean);
    return parts[parts.length - 1] ?? p;
  }).join(', ');
}

/** Cut text to n characters with an ellipsis. */
export function cut(text: string, n: number): string {
  return text.length <= n ? text : `${text.slice(0, n - 1)}…`;
}

/** The width a chart gets: its container's, or a fixed one while the container is hidden (uPlot needs a width). */
export function chartWidth(container: HTMLElement, fallback = 560): number {
  const w = container.clientWidth;
  return w > 50 ? w : fallback;
}

/**
 * Run `fn` once in the next frame however often this is called. A timer backs
 * up the frame: a page in a background tab gets no frames but must keep up.
 */
export function coalesce(fn: () => void, fallbackMs = 250): () => void {
  let pending = false;
  const run = () => {
    if (!pending) return;
    pending = false;
    fn();
  };
  return () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(run);
    setTimeout(run, fallbackMs);
  };
}
