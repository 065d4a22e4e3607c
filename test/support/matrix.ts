// Runs the test suite once per supported Node version (22, 24, 26: the
// binaries pinned as devDependencies node22/node24/node26), so that the tool
// and every target it starts run on each. The machine's default node is not
// one of them. PARANODE_NODES=22,26 picks some; extra arguments go to
// `node --test` (e.g. a subset of test files).
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ensureTools } from './debian-tools';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const versions = (process.env.PARANODE_NODES ?? '22,24,26').split(',').map((v) => v.trim()).filter(Boolean);
const files = process.argv.slice(2).length
  ? process.argv.slice(2)
  : fs.readdirSync(path.join(ROOT, 'dist', 'test')).filter((f) => f.endsWith('.test.js')).sort().map((f) => path.join('dist', 'test', f));

// the start-up cache of every program the tests start (prepared code, V8's code): one directory
// for the whole run, shared by its versions (an entry's key holds the version), not the user's
const cacheDir = process.env.PARANODE_CACHE_DIR ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-test-cache-'));
if (cacheDir) process.env.PARANODE_CACHE_DIR = cacheDir;
process.on('exit', () => { if (cacheDir) fs.rmSync(cacheDir, { recursive: true, force: true }); });

let passed = 0;
let failed = 0;
// some tests drive real programs from Debian (a browser, go tool pprof, Prometheus): installed
// here once if they can be, else why not is said once
for (const m of ensureTools(files, console.log)) console.error(`paranode tests: ${m}`);
const summary: string[] = [];
const failures: string[] = [];
for (const v of versions) {
  const bin = path.join(ROOT, 'node_modules', `node${v}`, 'bin', 'node');
  if (!fs.existsSync(bin)) {
    console.error(`paranode tests: no Node ${v} binary at ${bin} (npm ci installs node${v})`);
    failed++;
    summary.push(`node ${v}: missing`);
    continue;
  }
  const version = spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.log(`\n# ===== tests on Node ${version} =====`);
  // the calibration of this version, measured now with nothing else running: measured inside
  // the first test that needs it, beside another test file, it reads the costs several times
  // too high, and every cost-limited search in the suite then pauses long after each test
  const cal = spawnSync(bin, [path.join(ROOT, 'dist', 'src', 'cli', 'main.js'), 'calibrate'], { cwd: ROOT, encoding: 'utf8' });
  console.log(`# calibration: ${cal.status === 0 ? 'measured' : `failed (${cal.stderr.trim().split('\n').pop()})`}`);
  const t0 = Date.now();
  const r = spawnSync(bin, ['--test', '--test-concurrency=2', '--test-timeout=240000', '--test-reporter=spec', ...files], {
    cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 28,
    // the tool and its targets both run on this version
    env: { ...process.env, PATH: `${path.dirname(bin)}${path.delimiter}${process.env.PATH}` },
  });
  process.stdout.write(r.stdout);
  const pass = Number(/^ℹ pass (\d+)/m.exec(r.stdout)?.[1] ?? 0);
  const fail = Number(/^ℹ fail (\d+)/m.exec(r.stdout)?.[1] ?? 0) + (r.status !== 0 && !/^ℹ fail [1-9]/m.test(r.stdout) ? 1 : 0);
  passed += pass;
  failed += fail;
  summary.push(`node ${version}: ${pass} passed, ${fail} failed (${Math.round((Date.now() - t0) / 1000)} s)`);
  // the reporter's list of failures, again at the end: a CI view that shows the log's tail shows why
  const at = r.stdout.indexOf('✖ failing tests:');
  if (at >= 0) failures.push(`## Node ${version}\n${r.stdout.slice(at, at + 6000).trim()}`);
}
if (failures.length) console.log(`\n# ===== failures =====\n${failures.join('\n\n')}`);
console.log(`\n# ===== summary =====\n${summary.join('\n')}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
