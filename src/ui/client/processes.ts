// The processes of the session (each with its threads), in the header.
import type { ProcessInfo } from '../protocol';
import { byId, h } from './dom';

export function renderProcesses(list: ProcessInfo[]): void {
  const el = byId('processes');
  if (!list.length) {
    el.replaceChildren(h('span', { class: 'dim' }, 'no process yet'));
    return;
  }
  el.replaceChildren(...list.map((p) => h('div', { class: p.ended === null ? 'proc' : 'proc ended', 'data-pid': p.pid, 'data-focus': p.focus, title: p.focus },
    h('span', { class: 'proc-label' }, p.label),
    // a label given by a library caller may not say which process it is
    p.label.includes(String(p.pid)) ? null : h('span', { class: 'dim' }, `pid ${p.pid}`),
    h('span', { class: 'threads' }, ...p.threads.map((t) => h('span', { class: 'thread', 'data-focus': t.focus, title: t.focus }, t.id === 'main' ? 'main' : `worker ${t.id}`))),
    p.ended !== null ? h('span', { class: 'proc-ended' }, `ended: ${p.ended}`) : null)));
}
