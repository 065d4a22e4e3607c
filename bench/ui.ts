// 22. The live web page (issue #14): its first paint, and how it keeps up with
// 50 histograms live, in headless Chromium (Debian's, through playwright-core)
// against a real target (esprima parsing in a loop). The baseline is the same
// page in the same run with one histogram.
import * as fs from 'fs';
import * as path from 'path';
import * as zlib from 'zlib';
import { chromium } from 'playwright-core';
import { Session } from '../src/api';
import { MetricManager } from '../src/metrics/manager';
import { UiServer } from '../src/ui/server';
import { requireTool } from '../test/support/debian-tools';
import { BenchOptions, fmt, median, Proc, progress, ROOT, Section, sleep, table, TARGETS } from './lib';

/** the page's, in functions that run in the browser */
declare const document: any;
declare const window: any;

interface PageStats { messages: number; renders: number; renderMs: number }

async function measure(histograms: number, seconds: number, runs: number): Promise<{ fcp: number[]; firstChart: number[]; rate: number[]; msPerRender: number[]; msgRate: number[]; busy: number[] }> {
  const s = await Session.launch([process.execPath, 'parse-loop.js'], [], { stdio: 'pipe', cwd: TARGETS });
  const p = new Proc(s.child!, 'parse-loop.js');
  await p.waitFor(/ready/, 0);
  const ui = await UiServer.open({ title: `bench: ${histograms} histograms` });
  ui.addSession(s, 'parse-loop.js');
  const mm = new MetricManager([s]);
  await ui.useManager(mm);
  s.startSampling(200);
  // the parser's functions with the most points: each one instance, one series
  const fns = (await s.resources('/Code/**/esprima/dist/esprima.js/*')).sort((a, b) => b.points.length - a.points.length || a.path.localeCompare(b.path));
  // observed_cost is the page's own: one histogram already
  for (const r of fns.slice(0, histograms - 1)) await mm.enable('procedure_calls', r.path);
  const browser = await chromium.launch({ executablePath: requireTool('chromium'), args: ['--no-sandbox'] });
  const out = { fcp: [] as number[], firstChart: [] as number[], rate: [] as number[], msPerRender: [] as number[], msgRate: [] as number[], busy: [] as number[] };
  try {
    for (let run = 0; run < runs; run++) {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(ui.url);
      await page.click('#tab-histograms');
      // every series drawn: the first render with all the instances
      await page.waitForFunction((n) => [...document.querySelectorAll('.chart')].reduce((a, c) => a + Number(c.getAttribute('data-series') ?? 0), 0) >= n, histograms);
      const firstChart = await page.evaluate(() => performance.now());
      const fcp = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN);
      const a = await page.evaluate(() => ({ ...window.__paranode as PageStats }));
      const t0 = Date.now();
      await sleep(seconds * 1000);
      const b = await page.evaluate(() => ({ ...window.__paranode as PageStats }));
      const dt = (Date.now() - t0) / 1000;
      const renders = b.renders - a.renders;
      out.fcp.push(fcp);
      out.firstChart.push(firstChart);
      out.rate.push(renders / dt);
      out.msgRate.push((b.messages - a.messages) / dt);
      out.msPerRender.push(renders ? (b.renderMs - a.renderMs) / renders : NaN);
      out.busy.push((b.renderMs - a.renderMs) / (dt * 1000));
      await page.close();
    }
  } finally {
    await browser.close();
    await ui.close('bench over');
    p.send('exit');
    await s.detach().catch(() => undefined);
    await s.waitForExit().catch(() => undefined);
  }
  return out;
}

export async function benchUi(o: BenchOptions): Promise<Section> {
  requireTool('chromium');
  const seconds = o.quick ? 5 : 15, runs = o.quick ? 2 : 5;
  const rows: string[][] = [];
  const results: Record<number, Awaited<ReturnType<typeof measure>>> = {};
  for (const n of [1, 50]) {
    progress(`ui: ${n} histogram(s) live, ${runs} page loads, ${seconds} s each`);
    results[n] = await measure(n, seconds, runs);
  }
  for (const n of [1, 50]) {
    const r = results[n];
    const base = results[1];
    rows.push([String(n), fmt(median(r.fcp), 0), fmt(median(r.firstChart), 0), `${fmt(median(r.firstChart) / median(base.firstChart))}×`,
      fmt(median(r.msgRate), 2), fmt(median(r.rate), 2), fmt(median(r.msPerRender), 2), `${fmt(100 * median(r.busy), 2)}%`]);
  }
  const file = (f: string) => fs.readFileSync(path.join(ROOT, 'dist', 'src', 'ui', 'static', f));
  const size = (f: string) => `${(file(f).length / 1024).toFixed(1)} KiB (${(zlib.gzipSync(file(f)).length / 1024).toFixed(1)} KiB gzip)`;
  return {
    title: '22. The live web page: first paint and updates with 50 histograms live (issue #14)',
    body: [
      `Headless Chromium (Debian's, through playwright-core) loads \`paranode ui\`'s page for a target that parses with esprima in a loop; \`procedure_calls\` is enabled for the parser's functions with the most points, one histogram each, beside the page's own \`observed_cost\`; the server sends every instance every 500 ms. Median of ${runs} page loads; each watched for ${seconds} s. First paint: Chromium's first-contentful-paint; every series drawn: the time from navigation until the charts hold every instance; renders: chart passes the page made (it draws at most once per animation frame, the latest values); busy: the share of the page's main thread its chart passes took.`,
      '',
      table(['histograms', 'first paint, ms', 'every series drawn, ms', 'vs 1', 'updates received /s', 'renders /s', 'ms per render', 'busy'], rows),
      '',
      `Served bundle: app.js ${size('app.js')}, app.css ${size('app.css')}.`,
    ],
  };
}
