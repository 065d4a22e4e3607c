// A session's call-path profile and stack samples as flame graphs: one tree
// per thread, a path's functions nested outermost first.
import type { CallPath } from '../data/call-path-profile';
import type { StackSamples } from '../session/series';
import type { FlameGraph, FlameNode } from './protocol';

/** Whole call paths (k = inf) of one thread as a tree of inclusive and exclusive wall time. */
export function callPathFlame(paths: CallPath[], label: string): FlameGraph {
  const root: FlameNode = { name: label, value: 0, self: 0, children: [] };
  // a path's record holds its own times; its prefixes are paths of their own (or only callers)
  for (const p of [...paths].sort((a, b) => a.functions.length - b.functions.length)) {
    let node = root;
    for (const f of p.functions) {
      let child = node.children.find((c) => c.name === f);
      if (!child) node.children.push((child = { name: f, value: 0, self: 0, calls: 0, children: [] }));
      node = child;
    }
    node.value = p.wall.inclusive;
    node.self = p.wall.exclusive;
    node.calls = p.calls;
  }
  // a caller with no record of its own (outside the profiled functions) spans its callees
  const span = (n: FlameNode): number => {
    const inner = n.children.reduce((a, c) => a + span(c), 0);
    if (n.value < inner) n.value = inner;
    return n.value;
  };
  root.value = root.children.reduce((a, c) => a + span(c), 0);
  return { label, units: 'seconds', root };
}

/**
 * Stack samples hold per-function counts, not whole stacks: one level under
 * the thread, each function's samples on the stack (its own code's as self).
 */
export function sampleFlame(st: StackSamples, label: string): FlameGraph {
  const children: FlameNode[] = [...st.hits].sort((a, b) => b[1] - a[1]).map(([name, n]) => ({ name, value: n, self: st.leaves.get(name) ?? 0, children: [] }));
  const busy = st.samples - st.idle;
  return { label, units: 'samples', root: { name: label, value: Math.max(busy, ...children.map((c) => c.value)), self: 0, children } };
}
