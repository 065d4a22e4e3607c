// MDL: the standard library loads, malformed definitions fail with file:line:column,
// and the command line enables metrics end to end.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { MdlLibrary } from '../src/mdl/library';
import { CLI, FIXTURES } from './support/helpers';

const bad = (text: string) => () => new MdlLibrary().load(text, 'my.mdl');

test('the standard library loads and has the metrics the tool promises', () => {
  const lib = MdlLibrary.standard();
  for (const m of ['procedure_calls', 'cpu', 'cpu_inclusive', 'wall', 'await_wait', 'exceptions', 'msgs', 'msg_bytes', 'sync_io', 'event_loop_utilization', 'gc_time']) {
    assert.ok(lib.metrics.has(m), m);
  }
});

test('malformed MDL: each error names file, line and column', () => {
  assert.throws(bad('metric m {\n  units x;\n  base is counter {\n    foreach f in $procedures append preInsn f.entry (* m+++; *)\n  }\n}'), /^Error: my\.mdl:4:\d+: metric m: syntax error/);
  assert.throws(bad('metric m {\n  bogus 1;\n}'), /my\.mdl:2:3: expected a metric field .*found 'bogus'/);
  assert.throws(bad('list l is procedure {\n  items { "/Code/a.js/f" "/Code/b.js/g" }\n}'), /my\.mdl:2:26: expected ',', found '\/Code\/b\.js\/g'/);
  assert.throws(bad('list l is procedure {\n  items { "/Code/a.js/f" }\n'), /my\.mdl:3:1: expected 'flavor' or 'items', found the end of the file/);
  assert.throws(bad('metric m {\n  constraint nope;\n  base is counter { }\n}'), /my\.mdl:2:14: metric m: unknown constraint nope/);
  assert.throws(bad('metric m { base is counter { foreach f in nolist append preInsn f.entry (* m++; *) } }'), /my\.mdl:1:43: metric m: unknown list nolist/);
  assert.throws(bad('metric m { base is counter { append preInsn x.entry (* m++; *) } }'), /my\.mdl:1:\d+: metric m: unknown variable x/);
  assert.throws(bad('metric m { base is counter { foreach f in $procedures append preInsn f.entry (* other++; *) } }'), /the snippet names "other"/);
  assert.throws(bad('metric m { base is counter { foreach f in $procedures append preInsn f.entry (* startWallTimer(m); *) } }'), /m is a counter here, not a timer/);
  assert.throws(bad('metric m { base is counter { foreach f in $procedures append preInsn f.exit (* if ($arg[0]) m++; *) } }'), /\$arg\[i\] is only available at entry and call points/);
  assert.throws(bad('constraint c /Nowhere is counter { }'), /unknown hierarchy \/Nowhere/);
  assert.throws(bad('metric m { base is counter { } }\nmetric m { base is counter { } }'), /my\.mdl:2:1: metric m is defined twice \(first at line 1\)/);
  assert.throws(bad('metric m { units x; } '), /my\.mdl:1:1: metric m has no base clause/);
  assert.throws(bad('(* never closed'), /my\.mdl:1:1: snippet not closed/);
  assert.throws(() => new MdlLibrary().loadFile('/no/such.mdl'), /\/no\/such\.mdl:0:0: cannot read MDL file: ENOENT/);
});

test('a failed load leaves the library as it was', () => {
  const lib = MdlLibrary.standard();
  const before = lib.metrics.get('cpu');
  assert.throws(() => lib.load('metric cpu { base is thread "cpu"; }\nmetric x { bogus; }', 'mine.mdl'));
  assert.equal(lib.metrics.get('cpu'), before);
});

test('CLI: `paranode metrics` lists definitions; run --enable gives per-function values in --json; bad MDL and focus are one-line errors', () => {
  const list = spawnSync(process.execPath, [CLI, 'metrics'], { encoding: 'utf8' });
  assert.equal(list.status, 0, list.stderr);
  assert.match(list.stdout, /^cpu\s+CPU time \(exclusive of callees\)\n\s+units CPU s\/s, sum, EventCounter; focus on: \/Code\/\* \(procedure_cpu\), \/Code \(module_cpu\), \/Thread \(thread\), \/Process \(process\)$/m);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-mdl-'));
  const json = path.join(dir, 'out.json');
  const run = spawnSync(process.execPath, [CLI, 'run', '-q', '--json', json, '--enable', 'procedure_calls@/Code/counted.js/*', '--enable', 'cpu',
    '--', process.execPath, path.join(FIXTURES, 'counted.js')], { input: '777\nexit\n', encoding: 'utf8', cwd: FIXTURES });
  assert.equal(run.status, 3, run.stderr); // counted.js exits with 3 on "exit"
  const out = JSON.parse(fs.readFileSync(json, 'utf8'));
  const f = out.metrics.find((m: any) => m.name === 'procedure_calls' && m.focus === '/Code/counted.js/f');
  assert.equal(f.total, 777);
  assert.equal(f.units, 'calls/s');
  assert.ok(Array.isArray(f.histogram.buckets) && f.histogram.bucketSeconds > 0);
  assert.ok(out.metrics.some((m: any) => m.name === 'cpu' && m.focus === '' && m.total > 0));

  const mdl = path.join(dir, 'broken.mdl');
  fs.writeFileSync(mdl, 'metric m {\n  units x;\n  base is counter { foreach f in $procedures append preInsn f.entry (* m += ; *) }\n}\n');
  const broken = spawnSync(process.execPath, [CLI, 'run', '--mdl', mdl, '--enable', 'm', '--', process.execPath, '-e', '0'], { encoding: 'utf8' });
  assert.equal(broken.status, 2);
  assert.match(broken.stderr, new RegExp(`^paranode: ${mdl.replace(/[.]/g, '\\.')}:3:\\d+: metric m: syntax error`));
  assert.equal(broken.stderr.trim().split('\n').length, 1);

  const focus = spawnSync(process.execPath, [CLI, 'run', '--enable', 'cpu@/Code/a.js/f,/Code/b.js/g', '--', process.execPath, '-e', '0'], { encoding: 'utf8' });
  assert.equal(focus.status, 2);
  assert.match(focus.stderr, /^paranode: focus "\/Code\/a\.js\/f,\/Code\/b\.js\/g" names two resources of \/Code/);
});
