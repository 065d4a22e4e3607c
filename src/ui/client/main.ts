// The page of `paranode ui`: one WebSocket to the server; each message goes to
// the view it updates. Everything received stays shown after the session ends.
import 'uplot/dist/uPlot.min.css';
import './style.css';
import type { InstancesMsg, ServerMsg } from '../protocol';
import { Conn } from './conn';
import { byId, coalesce } from './dom';
import { FlameView } from './flame';
import { HistogramsView } from './histograms';
import { renderProcesses } from './processes';
import { SearchView } from './search';
import { ResourcesView } from './tree';

const VIEWS = ['resources', 'histograms', 'search', 'flame'] as const;
type View = (typeof VIEWS)[number];

function tokenOf(): string {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="paranode-token"]')?.content ?? '';
  // the page opened as a file or unserved keeps the placeholder: the address has it then
  return meta && !meta.startsWith('__') ? meta : new URLSearchParams(location.search).get('token') ?? '';
}

function start(): void {
  const token = tokenOf();
  const statusEl = byId('status');
  const endedEl = byId('ended');
  let ended = false;
  let chosenTab = false;

  const histograms = new HistogramsView();
  const search = new SearchView(token);
  const flame = new FlameView();
  // requests go through the socket opened below
  const resources = new ResourcesView((r) => conn.request(r));

  const show = (v: View): void => {
    for (const x of VIEWS) {
      byId(`view-${x}`).hidden = x !== v;
      const tab = byId(`tab-${x}`);
      tab.classList.toggle('active', x === v);
      tab.setAttribute('aria-selected', String(x === v));
    }
    document.body.dataset.view = v;
    // a chart made while its tab was hidden got the fallback width
    histograms.resize();
    search.resize();
  };
  for (const v of VIEWS) byId(`tab-${v}`).addEventListener('click', () => { chosenTab = true; show(v); });
  show('histograms');
  window.addEventListener('resize', () => { histograms.resize(); search.resize(); });

  const end = (why: string): void => {
    if (ended) return;
    ended = true;
    endedEl.textContent = why;
    endedEl.hidden = false;
    document.body.classList.add('is-ended');
  };

  // only the latest values are drawn, once a frame
  let latest: InstancesMsg | null = null;
  const draw = coalesce(() => {
    const m = latest;
    latest = null;
    if (!m) return;
    histograms.render(m.instances);
    resources.setInstances(m.instances);
  });

  let searching = false;
  const onMsg = (m: ServerMsg): void => {
    switch (m.type) {
      case 'hello':
        document.title = `paranode: ${m.title}`;
        byId('title').textContent = m.title;
        resources.setMetrics(m.metrics);
        histograms.setMetrics(m.metrics);
        renderProcesses(m.processes);
        searching = m.consultant;
        search.setConsultant(m.consultant);
        if (!chosenTab) show(m.consultant ? 'search' : 'histograms');
        break;
      case 'processes':
        renderProcesses(m.processes);
        break;
      case 'resources':
        resources.setResources(m.nodes);
        break;
      case 'instances':
        window.__paranode.messages++;
        latest = m;
        draw();
        break;
      case 'consultant':
        // a search that started after the page connected (diagnose opens the page before it launches)
        if (!searching) {
          searching = true;
          search.setConsultant(true);
          if (!chosenTab) show('search');
        }
        search.onConsultant(m);
        break;
      case 'report':
        search.onReport(m);
        break;
      case 'flame':
        flame.render(m);
        break;
      case 'reply':
        break; // answered through Conn.request
      case 'ended':
        statusEl.textContent = 'ended';
        statusEl.dataset.state = 'ended';
        end(`session ended: ${m.why}`);
        break;
    }
  };

  const conn = new Conn(token, onMsg, (state) => {
    if (state === 'open') {
      statusEl.textContent = 'live';
      statusEl.dataset.state = 'live';
      return;
    }
    if (!ended) {
      statusEl.textContent = 'disconnected';
      statusEl.dataset.state = 'lost';
      end('connection lost: the page shows what it had received (paranode may have stopped)');
    }
  });
  statusEl.textContent = 'connecting…';
  statusEl.dataset.state = 'connecting';
  conn.open();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
