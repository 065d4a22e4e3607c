// Intrusion compensation of timers (issue #13): a timer's virtual time is its
// real time less the handler runs inside its intervals, each priced by the
// calibration of its cost class, [low, high]. Checked exactly against the
// calibration's own prices: the runs inside are known (a counter per call of
// a function called n times inside the timed one), the runs outside are not
// subtracted.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { calibration, classCost } from '../src/cost/calibration';
import { MetricManager } from '../src/metrics/manager';
import { CLI, FIXTURES, launchedFixture } from './support/helpers';

const target = path.join(FIXTURES, 'compensated.js');
const fn = (name: string) => `/Code/compensated.js/${name}`;

test('virtual time of wall and cpu_inclusive: real time less the runs inside, priced by the calibration, exactly; runs outside are not subtracted', async () => {
  const cal = await calibration();
  const { s, request } = await launchedFixture(target);
  const mm = new MetricManager([s]);
  const wall = await mm.enable('wall', fn('outer'));
  const cpu = await mm.enable('cpu_inclusive', fn('outer'));
  const calls = await mm.enable('procedure_calls', fn('inner'));
  await request('outer 20000', /done/);
  await request('inner 50000', /done/);
  await s.sample();
  assert.equal(calls.value().total, 70000);
  // inside outer's one interval: inner's counter 20,000 times (slot:n1) and outer's exit
  // handler, which stops both timers (slot:p2); its entry handler ran before the starts
  const inside = (side: 0 | 1) => (20000 * classCost(cal, 'slot:n1')[side] + classCost(cal, 'slot:p2')[side]) / 1e9;
  for (const [what, inst] of [['wall', wall], ['cpu_inclusive', cpu]] as const) {
    const v = inst.value();
    assert.ok(v.virtual, `${what}: a virtual value (${JSON.stringify(v)}; notes: ${s.notes.join(' | ')})`);
    const [lo, hi] = v.virtual;
    assert.ok(Math.abs(lo - Math.max(0, v.total - inside(1))) < 1e-9, `${what}: low ${lo} s against ${v.total} - ${inside(1)}`);
    assert.ok(Math.abs(hi - Math.max(0, v.total - inside(0))) < 1e-9, `${what}: high ${hi} s against ${v.total} - ${inside(0)}`);
    assert.ok(hi < v.total, `${what}: something was subtracted`);
  }
  // a timer with no handler inside but its own stop: only that is subtracted
  const spin = await mm.enable('wall', fn('spin'));
  await request('spin 1000', /done/);
  await s.sample();
  const v = spin.value();
  const [lo, hi] = v.virtual!;
  assert.ok(Math.abs(v.total - hi - classCost(cal, 'slot:p1')[0] / 1e9) < 1e-9, `spin: ${v.total} - ${hi}`);
  assert.ok(Math.abs(v.total - lo - classCost(cal, 'slot:p1')[1] / 1e9) < 1e-9, `spin: ${v.total} - ${lo}`);
});

test('CLI: --json gives a timer\'s virtual time beside its real time', async () => {
  await calibration();
  const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-comp-')), 'out.json');
  const prog = "function inner(x){ return x + 1; } function outer(){ let s = 0; for (let i = 0; i < 100000; i++) s += inner(i); return s; } console.log('sum', outer());";
  const file = path.join(path.dirname(json), 'prog.js');
  fs.writeFileSync(file, prog);
  const r = spawnSync(process.execPath, [CLI, 'run', '-e', 'wall@/Code/prog.js/outer', '-e', 'procedure_calls@/Code/prog.js/inner', '--json', json, '--', process.execPath, 'prog.js'], { cwd: path.dirname(file), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const metrics = (JSON.parse(fs.readFileSync(json, 'utf8')) as { metrics: { name: string; total: number; virtual?: [number, number] }[] }).metrics;
  const w = metrics.find((m) => m.name === 'wall')!;
  assert.ok(w.virtual, JSON.stringify(w));
  assert.ok(w.virtual[0] <= w.virtual[1] && w.virtual[1] < w.total, JSON.stringify(w));
  assert.equal(metrics.find((m) => m.name === 'procedure_calls')!.total, 100000);
  assert.equal(metrics.find((m) => m.name === 'procedure_calls')!.virtual, undefined, 'a counter has no virtual time');
});
