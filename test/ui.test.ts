// The live web page (paranode ui, --ui) in a real headless Chromium: the
// token, a launched program's histograms, a metric enabled from the resource
// tree counting exactly, the Performance Consultant's search reaching the
// planted bottleneck, several processes at once, and nothing listening after.
// PARANODE_UI_SCREENSHOTS=<dir> keeps a screenshot of each view (docs/ui).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import * as os from 'node:os';
import { after, before, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import WebSocket from 'ws';
import { MetricManager, Session } from '../src/api';
import { UiServer } from '../src/ui/server';
import { requireTool } from './support/debian-tools';
import { CLI, FIXTURES, lineRequests, ROOT, Target } from './support/helpers';

/** the page's, in functions that run in the browser */
declare const document: any;
const DEMO = path.join(ROOT, 'demo');
const SHOTS = process.env.PARANODE_UI_SCREENSHOTS;
let browser: Browser;

before(async () => {
  browser = await chromium.launch({ executablePath: requireTool('chromium'), args: ['--no-sandbox'] });
});
after(() => browser?.close());

/** The CLI, its page's address read from what it prints; stdin and stdout reach the program it launches. */
function cli(args: string[], cwd: string): { child: ChildProcess; url: Promise<string>; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const url = new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      const m = /the live page is at (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]);
    });
    void exit.then((code) => reject(new Error(`paranode exited (${code}) before it printed the page's address:\n${err}`)));
  });
  // SIGTERM: paranode passes it to the program it launched and ends with it; the pipes then close
  url.catch(() => undefined); // awaited by the tests that need it
  after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    for (const s of [child.stdin, child.stdout, child.stderr]) s?.destroy();
  });
  return { child, url, stderr: () => err, exit };
}

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d) => { body += d; }).on('end', () => resolve({ status: res.statusCode!, body }));
    }).on('error', reject);
  });
}

/** the status a WebSocket upgrade to this address is answered with (101: opened) */
function upgrade(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => { ws.close(); resolve(101); });
    ws.once('unexpected-response', (_req, res) => { resolve(res.statusCode!); ws.terminate(); });
    ws.once('error', (e) => { if (!/Unexpected server response/.test(e.message)) reject(e); });
  });
}

/** whether anything accepts a connection on 127.0.0.1:port */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1');
    c.once('connect', () => { c.destroy(); resolve(true); });
    c.once('error', () => resolve(false));
  });
}

async function shot(page: Page, name: string): Promise<void> {
  if (!SHOTS) return;
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false });
}

/** A new page of the browser at the page's address. */
async function openPage(url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(url);
  return page;
}

/** Select one resource as the focus: a listing that arrives while clicking can move the rows, so the focus is checked. */
async function select(page: Page, resource: string): Promise<void> {
  for (let i = 0; i < 5; i++) {
    if (await page.textContent('#focus') === resource) return;
    await page.click(`.res[data-path="${resource}"]`);
  }
  assert.equal(await page.textContent('#focus'), resource);
}

/** a chart's number of buckets, and the seconds they cover, as the page shows them */
const points = (page: Page, metric: string) => page.$eval(`.chart[data-metric="${metric}"]`, (e) => Number(e.getAttribute('data-points')));
const covered = (page: Page, metric: string) => page.$eval(`.chart[data-metric="${metric}"]`, (e) => Number(e.getAttribute('data-seconds')));

test('paranode ui: the token guards the page and its socket; a metric enabled from the tree counts exactly and its histogram grows; nothing listens after', async () => {
  const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-ui-')), 'end.json');
  const { child, url: urlP, exit, stderr } = cli(['ui', '--enable', 'cpu', '--call-paths', '/Code/ui-target.js/*', '--json', json, '--', process.execPath, 'ui-target.js'], FIXTURES);
  const url = await urlP;
  const request = lineRequests(child);
  await request('', /ready/);
  const u = new URL(url);
  const port = Number(u.port);
  const token = u.searchParams.get('token')!;

  // no token, a wrong one, another site's name for 127.0.0.1: refused, page and socket alike
  assert.equal((await get(`http://127.0.0.1:${port}/`)).status, 403);
  assert.equal((await get(`http://127.0.0.1:${port}/?token=${token.slice(1)}x`)).status, 403);
  assert.equal((await get(`http://127.0.0.1:${port}/app.js`)).status, 403);
  assert.equal((await get(url, { host: `evil.example:${port}` })).status, 403);
  assert.equal(await upgrade(`ws://127.0.0.1:${port}/ws`), 403);
  assert.equal(await upgrade(`ws://127.0.0.1:${port}/ws?token=wrong`), 403);
  const page200 = await get(url);
  assert.equal(page200.status, 200);
  assert.match(page200.body, /app\.js/);

  const page = await openPage(url);
  // the command line's metric: its histogram gains points as the program runs
  await page.click('#tab-histograms');
  await page.waitForSelector('.chart[data-metric="cpu"]');
  // the time it covers grows (its buckets fold to half as many, twice as wide, after 64)
  const first = await covered(page, 'cpu');
  await page.waitForFunction((n) => Number(document.querySelector('.chart[data-metric="cpu"]')?.getAttribute('data-seconds')) > n + 0.25, first);
  assert.ok(await points(page, 'cpu') > 0);

  // enable procedure_calls for work() from the resource tree
  await page.click('#tab-resources');
  const fn = '/Code/ui-target.js/work';
  // listed (Refresh lists the code loaded by now, whatever the last broadcast carried)
  await page.click('#refresh-resources');
  // (or the reason the listing lacks it, shown on the page)
  await page.waitForSelector(`.res[data-path="${fn}"], #ui-error:not([hidden])`);
  assert.equal(await page.textContent('#ui-error'), '', 'the page says no error');
  await page.fill('#resource-search', 'work');
  // the filter applied (the rows move): burn() does not match
  await page.waitForSelector('.res[data-path="/Code/ui-target.js/burn"]', { state: 'detached' });
  await select(page, fn);
  await page.selectOption('#metric', 'procedure_calls');
  await page.click('#predict');
  await page.waitForFunction(() => /predicted cost/.test(document.querySelector('#prediction')?.textContent ?? ''));
  await page.click('#enable');
  const row = `#enabled [data-key="procedure_calls@${fn}"]`;
  await page.waitForSelector(row);
  await shot(page, 'resources');
  // the target's counter: exactly the calls made
  await request('1234', /done 1234/);
  await page.waitForFunction((sel) => document.querySelector(sel)?.getAttribute('data-total') === '1234', row);
  await page.click('#tab-histograms');
  await page.waitForSelector('.chart[data-metric="procedure_calls"]');
  await shot(page, 'histograms');
  await request('766', /done 766/);
  await page.waitForFunction((sel) => document.querySelector(sel)?.getAttribute('data-total') === '2000', row);

  // the report's links: the program's own modules, the line marked; no other file
  const src = await get(`http://127.0.0.1:${port}/source?token=${token}&at=${encodeURIComponent('ui-target.js:5')}`);
  assert.equal(src.status, 200);
  assert.match(src.body, /<tr id="L5" class="at"><td>5<\/td><td>function work\(i\) \{/);
  assert.equal((await get(`http://127.0.0.1:${port}/source?token=${token}&at=${encodeURIComponent('../../../etc/passwd:1')}`)).status, 404);
  assert.equal((await get(`http://127.0.0.1:${port}/source?at=${encodeURIComponent('ui-target.js:5')}`)).status, 403);

  // the call-path profile's flame view
  await page.click('#tab-flame');
  await page.waitForSelector('#flame .flame');
  await shot(page, 'flame');

  // disabled from the page: the row and its chart go
  await page.click('#tab-resources');
  await page.click(`${row} .disable`);
  await page.waitForSelector(row, { state: 'detached' });
  // loops are in the tree: burn()'s loop counts its iterations, 200,000 a call
  await page.fill('#resource-search', 'loop');
  await page.waitForSelector(`.res[data-path="${fn}"]`, { state: 'detached' });
  const loop = '/Code/ui-target.js/burn/loop@10';
  await select(page, loop);
  await page.selectOption('#metric', 'loop_trips');
  await page.click('#predict');
  await page.waitForFunction(() => /predicted cost/.test(document.querySelector('#prediction')?.textContent ?? ''));
  await page.click('#enable');
  const loopRow = `#enabled [data-key="loop_trips@${loop}"]`;
  await page.waitForSelector(loopRow);
  // (a sample may land inside a call of burn: on a loaded machine nearly every one did, and no whole
  // number of calls showed for 30 s on CI's Node 22; the last values, sent at the end, are exact below)
  await page.waitForFunction((sel) => Number(document.querySelector(sel)?.getAttribute('data-total')) > 0, loopRow);

  // the program ends: the page says so, keeps what it showed, and nothing listens
  child.stdin!.write('exit\n');
  assert.equal(await exit, 0, stderr());
  await page.waitForSelector('#ended', { state: 'visible' });
  // the program's last values come before 'ended': the page's total is the one paranode wrote at the
  // end (not a whole number of burn()'s 200,000 trips: CI's Node 24 read 801,211, one call counted in
  // part, its loop's slots switched on, or the last read made, inside it)
  const trips = Number(await page.getAttribute(loopRow, 'data-total'));
  const end = (JSON.parse(fs.readFileSync(json, 'utf8')) as { metrics: { name: string; focus: string; total: number }[] }).metrics;
  assert.ok(trips > 0 && trips === end.find((m) => m.name === 'loop_trips' && m.focus === loop)?.total, `loop_trips ${trips} at the end, ${JSON.stringify(end)}`);
  assert.match(await page.textContent('#ended') ?? '', /exited with code 0/);
  assert.ok(await page.$('.chart[data-metric="cpu"]'), 'the charts stay');
  assert.equal(await listening(port), false, 'the UI port is closed after the session');
  await page.close();
});

test('paranode diagnose --ui: the search graph grows live and reaches the planted bottleneck, marked true; the report links its source line', async () => {
  const { url: urlP, exit, stderr } = cli(['diagnose', '--ui', '--stop', '--hypotheses', 'cpu_bound', '--', process.execPath, 'cpu-bound.js', '60'], DEMO);
  const url = await urlP;
  const port = Number(new URL(url).port);
  const page = await openPage(url);
  await page.click('#tab-search');
  const planted = 'g.node[data-state="true"][data-focus*="cpu-bound.js/hashRecord"]';
  // in the DOM (an SVG group may lie outside the scrolled graph's view)
  await page.waitForSelector(planted, { state: 'attached', timeout: 120000 });
  // for the screenshot only: the graph is laid out again as nodes come
  if (SHOTS) await page.locator(planted).first().scrollIntoViewIfNeeded().catch(() => undefined);
  await shot(page, 'search');
  await page.waitForSelector('#report a.source', { timeout: 120000 });
  const sources = await page.$$eval('#report a.source', (as) => as.map((a) => a.textContent));
  assert.ok(sources.some((s) => /^cpu-bound\.js:\d+$/.test(s ?? '')), `report sources: ${sources.join(', ')}`);
  await shot(page, 'report');
  assert.equal(await exit, 0, stderr());
  await page.waitForSelector('#ended', { state: 'visible' });
  assert.ok(await page.$(planted), 'the graph stays after the session');
  assert.equal(await listening(port), false, 'the UI port is closed after the session');
  await page.close();
});

test('ui --max-overhead: a request taken out over the limit stays on the page with what it measured, marked as taken out', async () => {
  // a limit under anything: the request is taken out once the program's code is loaded, after the 100 calls made as it loaded
  const { child, url: urlP, exit, stderr } = cli(['ui', '--max-overhead', '0.00001%', '-e', 'procedure_calls@/Code/launch-priced.js/inner', '--',
    process.execPath, 'launch-priced.js'], FIXTURES);
  const url = await urlP;
  const page = await openPage(url);
  await page.click('#tab-resources');
  const row = '#enabled [data-key="procedure_calls@/Code/launch-priced.js/inner"]';
  await page.waitForSelector(`${row}.stopped`).catch(async (e: Error) => {
    throw new Error(`${e.message}\nthe page's rows: ${await page.innerHTML('#enabled').catch(() => '?')}\nparanode's stderr:\n${stderr()}`);
  });
  assert.equal(await page.getAttribute(row, 'data-total'), '100');
  assert.match(await page.textContent(`${row} .warn`) ?? '', /^taken out: metric request procedure_calls@\/Code\/launch-priced\.js\/inner taken out after [\d.]+ s: its predicted cost/);
  await page.click('#tab-histograms');
  await page.waitForFunction(() => /taken out over --max-overhead: .*inner/.test(document.querySelector('.chart[data-metric="procedure_calls"] .chart-title')?.textContent ?? ''));
  // calls after it was taken out count nowhere
  child.stdin!.write('count 1000\n');
  child.stdin!.end();
  assert.equal(await exit, 0, stderr());
  await page.waitForSelector('#ended', { state: 'visible' });
  assert.equal(await page.getAttribute(row, 'data-total'), '100');
  assert.match(stderr(), /paranode: metric request procedure_calls@\/Code\/launch-priced\.js\/inner taken out after/);
  await page.close();
});

test('library API: several processes and their threads on one page, each labelled', async () => {
  const a = await Session.launch([process.execPath, 'ui-target.js'], [], { stdio: 'pipe', cwd: FIXTURES });
  const b = await Session.launch([process.execPath, 'workers.js'], [], { stdio: 'pipe', cwd: FIXTURES });
  after(() => { a.child?.kill(); b.child?.kill(); });
  const ui = await UiServer.open({ title: 'two programs' });
  after(() => ui.close('test over'));
  ui.addSession(a, 'ui-target.js');
  ui.addSession(b, 'workers.js');
  const mm = new MetricManager([a, b]);
  await ui.useManager(mm);
  await lineRequests(a.child!)('', /ready/);
  // the worker of workers.js: an event, bounded so that a failure says why
  const deadline = Date.now() + 30000;
  while (b.threadIds.length < 2) {
    if (Date.now() > deadline) throw new Error(`the worker never got its agent; notes: ${b.notes.join(' | ')}`);
    await new Promise((r) => { const timer = setTimeout(r, 1000); b.once('thread', () => { clearTimeout(timer); r(undefined); }); });
  }
  const worker = b.threadIds.find((t) => t !== 'main')!;
  const page = await openPage(ui.url);
  // each process by its label and pid, each thread by its focus
  for (const [s, label] of [[a, 'ui-target.js'], [b, 'workers.js']] as const) {
    await page.waitForSelector(`#processes .proc[data-pid="${s.pid}"]`);
    const text = await page.textContent(`#processes .proc[data-pid="${s.pid}"]`);
    assert.ok(text?.includes(label) && text.includes(String(s.pid)), `process ${s.pid}: ${text}`);
  }
  await page.waitForSelector(`#processes .thread[data-focus="/Thread/${b.pid}/${worker}"]`);
  assert.ok(await page.$(`#processes .thread[data-focus="/Thread/${b.pid}/main"]`));
  assert.ok(await page.$(`#processes .thread[data-focus="/Thread/${a.pid}/main"]`));
  await ui.close('test over');
  await page.waitForSelector('#ended', { state: 'visible' });
  assert.equal(await listening(ui.port), false);
  await a.detach();
  await b.detach();
  await page.close();
});

test('--ui-port in use: one clear line, before any program is started', async () => {
  const holder = net.createServer();
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
  after(() => holder.close());
  const port = (holder.address() as net.AddressInfo).port;
  const { child, exit, stderr } = cli(['ui', '--ui-port', String(port), '--', process.execPath, 'ui-target.js'], FIXTURES);
  assert.equal(await exit, 2);
  assert.match(stderr(), new RegExp(`^paranode: the UI's port ${port} on 127\\.0\\.0\\.1 is in use \\(choose another with --ui-port, or 0 for any free one\\)\n$`));
  assert.equal(child.stdout!.read(), null, 'the program never ran');
});

test('paranode ui attach <pid>: metrics enabled from the page in a running process count exactly; Ctrl-C detaches, the page ends, the program runs on', async () => {
  const t = new Target('ui-target.js');
  after(() => t.kill());
  await t.waitFor(/ready/);
  const { child, url: urlP, exit, stderr } = cli(['ui', '-q', 'attach', String(t.pid)], FIXTURES);
  const url = await urlP;
  const port = Number(new URL(url).port);
  const page = await openPage(url);
  await page.click('#tab-resources');
  const fn = '/Code/ui-target.js/work';
  await select(page, fn);
  await page.selectOption('#metric', 'procedure_calls');
  await page.click('#enable');
  const row = `#enabled [data-key="procedure_calls@${fn}"]`;
  await page.waitForSelector(row);
  await t.request('321', /done 321/);
  await page.waitForFunction((sel) => document.querySelector(sel)?.getAttribute('data-total') === '321', row);
  child.kill('SIGINT');
  assert.equal(await exit, 0, stderr());
  await page.waitForSelector('#ended', { state: 'visible' });
  assert.equal(await listening(port), false, 'the UI port is closed after the session');
  // left as it was: it still answers
  await t.request('5', /done 5/);
  await page.close();
});
