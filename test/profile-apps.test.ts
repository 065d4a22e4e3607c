// The call-path exports opened in the app people open them in: speedscope
// (its released build, a devDependency, served on loopback to headless
// Chromium) loads paranode's speedscope file and its .cpuprofile (Chrome's
// format, which speedscope imports as DevTools does), without an error, and
// its sandwich view lists the profiled functions.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { requireTool } from './support/debian-tools';
import { CLI, FIXTURES, ROOT } from './support/helpers';

const SPEEDSCOPE = path.join(ROOT, 'node_modules', 'speedscope', 'dist', 'release');
const M = 'call-paths.js';
let browser: Browser;

before(async () => {
  browser = await chromium.launch({ executablePath: requireTool('chromium'), args: ['--no-sandbox', '--use-gl=angle', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'] });
});
after(async () => { await browser?.close(); });

/** speedscope's files and the profiles, on 127.0.0.1 */
async function serve(profiles: Record<string, string>): Promise<string> {
  const types: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.wasm': 'application/wasm' };
  const server = http.createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).slice(1);
    const file = profiles[name] ?? path.join(SPEEDSCOPE, path.basename(name));
    if (!fs.existsSync(file)) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] ?? 'application/octet-stream' }).end(fs.readFileSync(file));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  after(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('speedscope opens paranode\'s speedscope file and its .cpuprofile: no error, the sandwich view lists the profiled functions', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-apps-'));
  const [cpu, ss] = ['out.cpuprofile', 'out.speedscope.json'].map((f) => path.join(dir, f));
  const r = spawnSync(process.execPath, [CLI, 'run', '-q', '--call-paths', `/Code/${M}/*`, '-k', 'inf', '--call-paths-out', cpu, '--call-paths-out', ss,
    '--', process.execPath, M, 'sync'], { cwd: FIXTURES, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const base = await serve({ 'p/out.cpuprofile': cpu, 'p/out.speedscope.json': ss });

  for (const [file, names] of [['out.speedscope.json', [`${M}/leaf`, `${M}/sync`, `${M}/a`]], ['out.cpuprofile', ['leaf', 'sync']]] as const) {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${base}/index.html#profileURL=${encodeURIComponent(`${base}/p/${file}`)}&title=${file}`);
    // loaded: the toolbar offers its views and names the profile
    await page.getByText(/Sandwich$/).waitFor();
    await page.getByText(file).first().waitFor();
    assert.doesNotMatch(await page.innerText('body'), /Something went wrong/, file);
    await page.getByText(/Sandwich$/).click();
    for (const name of names) await page.getByText(name, { exact: true }).first().waitFor();
    assert.deepEqual(errors, [], `${file}: errors in the page`);
    await page.close();
  }
});
