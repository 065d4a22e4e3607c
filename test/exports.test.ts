// Exports, each checked by its own consumer (issue #13 item 4): the pprof file
// by Go's pprof and by a pprof protobuf decoder, the /metrics endpoint by a real
// Prometheus server scraping it, OTLP by a receiver that decodes what the
// OpenTelemetry SDK pushed. Counts are exact.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, test } from 'node:test';
import * as zlib from 'node:zlib';
import { Profile } from 'pprof-format';
import { MetricManager, MetricsEndpoint, OtlpExporter, Session, sessionSource } from '../src/api';
import type { CallPath } from '../src/data/call-path-profile';
import { requireTool } from './support/debian-tools';
import { CLI, FIXTURES, lineRequests, ROOT } from './support/helpers';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-exports-'));

/** The CLI with its stderr watched: resolves the first match of a pattern. */
function cli(args: string[]): { child: ChildProcess; stderr: () => string; match: (re: RegExp) => Promise<RegExpMatchArray>; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: FIXTURES, stdio: ['pipe', 'pipe', 'pipe'] });
  after(() => child.kill('SIGKILL'));
  let err = '';
  const waiting: { re: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    for (const w of [...waiting]) {
      const m = w.re.exec(err);
      if (m) { waiting.splice(waiting.indexOf(w), 1); w.resolve(m); }
    }
  });
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    child, stderr: () => err, exit,
    match: (re) => new Promise((resolve, reject) => {
      const m = re.exec(err);
      if (m) { resolve(m); return; }
      waiting.push({ re, resolve });
      void exit.then((code) => reject(new Error(`paranode exited (${code}) before printing ${re}:\n${err}`)));
    }),
  };
}

interface Point { attributes: { key: string; value: { stringValue?: string } }[]; asDouble?: number; asInt?: string }
interface OtlpMetric { name: string; unit?: string; gauge?: { dataPoints: Point[] }; sum?: { dataPoints: Point[]; isMonotonic?: boolean } }

/** An OTLP/HTTP receiver: keeps every push (the exporter sends JSON), and wakes whoever waits for one. */
async function otlpReceiver(): Promise<{ url: string; pushes: OtlpMetric[][]; headers: http.IncomingHttpHeaders[]; next: () => Promise<void>; close: () => Promise<void> }> {
  const pushes: OtlpMetric[][] = [];
  const headers: http.IncomingHttpHeaders[] = [];
  let wake: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => { body += d; }).on('end', () => {
      assert.equal(req.url, '/v1/metrics');
      assert.match(String(req.headers['content-type']), /application\/json/);
      const doc = JSON.parse(body) as { resourceMetrics: { scopeMetrics: { metrics: OtlpMetric[] }[] }[] };
      pushes.push(doc.resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics)));
      headers.push(req.headers);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      const w = wake;
      wake = [];
      for (const f of w) f();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  after(() => server.close());
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/metrics`, pushes, headers,
    next: () => new Promise((r) => wake.push(r)),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** The value of a data point of `family` whose attributes include `labels`, in one push. */
function otlpValue(push: OtlpMetric[], family: string, labels: Record<string, string>): number | undefined {
  const m = push.find((x) => x.name === family);
  const points = m?.gauge?.dataPoints ?? m?.sum?.dataPoints ?? [];
  const p = points.find((pt) => Object.entries(labels).every(([k, v]) => pt.attributes.some((a) => a.key === k && a.value.stringValue === v)));
  return p === undefined ? undefined : (p.asDouble ?? Number(p.asInt));
}

const freePort = async (): Promise<number> => {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
};

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => { body += d; }).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

test('pprof export: go tool pprof reads it, and its calls and times are the profile\'s (every thread, labelled)', () => {
  const go = requireTool('go');
  const dir = tmp();
  const [json, pprof] = ['out.json', 'out.pb.gz'].map((f) => path.join(dir, f));
  const W = 'call-paths-worker.js';
  const r = spawnSync(process.execPath, [CLI, 'run', '-q', '--call-paths', `/Code/${W}/*`, '-k', 'inf', '--json', json, '--call-paths-out', pprof, '--', process.execPath, W], { cwd: FIXTURES, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const paths = (JSON.parse(fs.readFileSync(json, 'utf8')) as { callPaths: CallPath[] }).callPaths;

  // the consumer: Go's pprof, flat calls per function (a = 3 + 7 calls, b = 6 + 14)
  const top = spawnSync(go, ['tool', 'pprof', '-top', '-sample_index=calls', pprof], { encoding: 'utf8', env: { ...process.env, HOME: dir } });
  assert.equal(top.status, 0, top.stderr);
  const flat = Object.fromEntries([...top.stdout.matchAll(/^\s*(\d+)\s+\S+%\s+\S+%\s+\d+\s+\S+%\s+(\S+)$/gm)].map((m) => [m[2], Number(m[1])]));
  assert.equal(flat[`${W}/a`], 10, top.stdout);
  assert.equal(flat[`${W}/b`], 20, top.stdout);
  assert.match(top.stdout, /^Type: calls$/m);

  // the same file decoded as protobuf: a sample per path, its stack leaf first, exact values
  const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(pprof)));
  const s = (i: number | bigint) => p.stringTable.strings[Number(i)];
  assert.deepEqual(p.sampleType.map((t) => `${s(t.type)}/${s(t.unit)}`), ['calls/count', 'wall/nanoseconds', 'cpu/nanoseconds']);
  const fnOf = new Map(p.location.map((l) => [Number(l.id), s(p.function.find((f) => f.id === l.line[0].functionId)!.name)]));
  const samples = p.sample.map((x) => ({
    stack: x.locationId.map((id) => fnOf.get(Number(id))!).reverse().filter((f) => !f.startsWith('(thread ')).join('>'),
    thread: s(x.label.find((l) => s(l.key) === 'thread')!.str),
    values: x.value.map(Number),
  }));
  assert.equal(samples.length, paths.length);
  for (const cp of paths) {
    const got = samples.find((x) => x.thread === cp.thread && x.stack === cp.functions.join('>'));
    assert.ok(got, `${cp.thread} ${cp.path} in ${JSON.stringify(samples)}`);
    assert.deepEqual(got.values, [cp.calls, Math.round(cp.wall.exclusive * 1e9), Math.round(cp.cpu.exclusive * 1e9)], cp.path);
  }
  assert.equal(new Set(samples.map((x) => x.thread)).size, 2, 'the main thread and the worker');
});

test('Prometheus: a real Prometheus server scrapes paranode run --prometheus with the token and reads the exact count; no token, no metrics; OTLP beside it gets the last value at the end', async () => {
  const prometheus = requireTool('prometheus');
  const dir = tmp();
  const tokenFile = path.join(dir, 'token');
  const receiver = await otlpReceiver();
  const run = cli(['run', '-q', '-e', 'procedure_calls@/Code/ui-target.js/work', '--prometheus', '0', '--prometheus-token-file', tokenFile,
    '--otlp', receiver.url, '--otlp-interval', '0.5', '--otlp-header', 'x-api-key=k123', '--', process.execPath, 'ui-target.js']);
  const url = (await run.match(/Prometheus metrics at (http:\/\/127\.0\.0\.1:(\d+)\/metrics) \(bearer token in /))[1];
  assert.equal(fs.statSync(tokenFile).mode & 0o777, 0o600);
  const request = lineRequests(run.child);
  await request('', /ready/);
  await request('1234', /done 1234/);

  // refused without the token, or with a wrong one
  assert.equal((await get(url)).status, 401);
  assert.equal((await get(url, { Authorization: 'Bearer x'.padEnd(33, 'x') })).status, 401);

  // a real Prometheus, scraping every 0.5 s with the token from the file
  const web = await freePort();
  const config = path.join(dir, 'prometheus.yml');
  fs.writeFileSync(config, [
    'global: { scrape_interval: 500ms, scrape_timeout: 400ms }',
    'scrape_configs:',
    '  - job_name: paranode',
    `    authorization: { type: Bearer, credentials_file: ${tokenFile} }`,
    `    static_configs: [ { targets: ['${new URL(url).host}'] } ]`,
  ].join('\n') + '\n');
  const prom = spawn(prometheus, [`--config.file=${config}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${web}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  after(() => prom.kill('SIGKILL'));
  let promLog = '';
  prom.stderr!.setEncoding('utf8').on('data', (d: string) => { promLog += d; });
  const query = async (q: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> => {
    const res = await get(`http://127.0.0.1:${web}/api/v1/query?query=${encodeURIComponent(q)}`).catch(() => ({ status: 0, body: '' }));
    return res.status === 200 ? (JSON.parse(res.body) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } }).data.result : [];
  };
  // Prometheus scrapes on its own schedule (every 0.5 s): its query API is asked until a scrape holds the count
  let got: { metric: Record<string, string>; value: [number, string] }[] = [];
  for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
    got = await query('paranode_metric_value{metric="procedure_calls"}');
    if (got.length && got[0].value[1] === '1234') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.equal(got[0]?.value[1], '1234', `Prometheus read ${JSON.stringify(got)}; its log:\n${promLog.slice(-2000)}`);
  assert.deepEqual({ ...got[0].metric, pid: undefined }, { __name__: 'paranode_metric_value', metric: 'procedure_calls', focus: '/Code/ui-target.js/work', units: 'calls', job: 'paranode', instance: new URL(url).host, pid: undefined });
  const up = await query('up{job="paranode"}');
  assert.equal(up[0]?.value[1], '1', 'the scrape succeeded');

  // the program ends: the last value reaches the collector before paranode exits, and nothing listens after
  await request('766', /done 766/);
  run.child.stdin!.write('exit\n');
  assert.equal(await run.exit, 0, run.stderr());
  const last = receiver.pushes[receiver.pushes.length - 1];
  assert.equal(otlpValue(last, 'paranode_metric_value', { metric: 'procedure_calls', focus: '/Code/ui-target.js/work', units: 'calls' }), 2000, JSON.stringify(last));
  assert.ok(receiver.pushes.length >= 2, `pushed every 0.5 s and at the end: ${receiver.pushes.length}`);
  assert.ok(receiver.headers.every((h) => h['x-api-key'] === 'k123'), 'every push carries --otlp-header');
  await assert.rejects(get(url), /ECONNREFUSED/);
});

test('library API: MetricsEndpoint and OtlpExporter over an attached session; a port in use is refused clearly', async () => {
  const target = spawn(process.execPath, ['ui-target.js'], { cwd: FIXTURES, stdio: ['pipe', 'pipe', 'pipe'] });
  after(() => target.kill('SIGKILL'));
  const request = lineRequests(target);
  await request('', /ready/);
  const s = await Session.attach(target.pid!);
  const mm = new MetricManager([s]);
  await mm.enableAll('procedure_calls', '/Code/ui-target.js/work');
  const endpoint = await MetricsEndpoint.open();
  const receiver = await otlpReceiver();
  const otlp = await OtlpExporter.start({ url: receiver.url, intervalMs: 60_000 });
  endpoint.add(sessionSource(s, { manager: mm }));
  otlp.add(sessionSource(s, { manager: mm }));
  await request('321', /done 321/);
  await s.sample();
  const text = (await get(endpoint.url, { Authorization: `Bearer ${endpoint.token}` })).body;
  assert.match(text, new RegExp(`^paranode_metric_value\\{metric="procedure_calls",focus="/Code/ui-target.js/work",units="calls",pid="${target.pid}"\\} 321$`, 'm'));
  assert.match(text, /^# TYPE paranode_call_path_calls counter$/m);

  // the library's own port in use: one clear sentence
  await assert.rejects(MetricsEndpoint.open({ port: endpoint.port }), new RegExp(`the Prometheus port ${endpoint.port} on 127.0.0.1 is in use`));

  const pushed = receiver.next();
  await otlp.close();
  await pushed;
  assert.equal(otlpValue(receiver.pushes[0], 'paranode_metric_value', { metric: 'procedure_calls', pid: String(target.pid) }), 321);
  await endpoint.close();
  await s.detach();
  await request('5', /done 5/);
});

test('diagnose --otlp: the metric instances the search enables reach the collector (its whole-program test\'s among them)', async () => {
  const dir = tmp();
  const json = path.join(dir, 'd.json');
  const receiver = await otlpReceiver();
  const child = spawn(process.execPath, [CLI, 'diagnose', '-q', '--stop', '--hypotheses', 'cpu_bound', '--otlp', receiver.url, '--otlp-interval', '0.5', '--json', json,
    '--', process.execPath, 'cpu-bound.js', '60'], { cwd: path.join(ROOT, 'demo'), stdio: ['ignore', 'pipe', 'pipe'] });
  after(() => child.kill('SIGKILL'));
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { err += d; });
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  assert.equal(code, 0, err);
  const d = JSON.parse(fs.readFileSync(json, 'utf8')) as { bottlenecks: { focus: string; hypothesis: string }[] };
  assert.ok(d.bottlenecks.some((b) => b.hypothesis === 'cpu_bound' && /hashRecord/.test(b.focus)), JSON.stringify(d.bottlenecks));
  // the whole-program test's instance (functions may be decided from stack samples, with no instance)
  const points = receiver.pushes.flatMap((push) => push.find((m) => m.name === 'paranode_metric_value')?.gauge?.dataPoints ?? []);
  const attr = (p: Point, k: string) => p.attributes.find((a) => a.key === k)?.value.stringValue;
  const whole = points.filter((p) => attr(p, 'focus') === '/' && (p.asDouble ?? 0) > 0);
  assert.ok(whole.length > 0, `points pushed: ${JSON.stringify(points.map((p) => [attr(p, 'metric'), attr(p, 'focus'), p.asDouble]))}`);
  assert.ok(receiver.pushes.length >= 1);
});
