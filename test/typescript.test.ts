// TypeScript through source maps: resources are named by the original .ts file and line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import ts from 'typescript';
import { Session } from '../src/api';
import { diagnose } from '../src/consultant/diagnose';
import { analyzeScript, lineIndex } from '../src/analysis/functions';
import { sampleKey } from '../src/analysis/describe';
import { FrameNames } from '../src/session/frame-names';
import type { StackRecord } from '../src/agent/cpu-sampler';
import { CLI, FIXTURES, Target, programOutput } from './support/helpers';

const dir = path.join(FIXTURES, 'ts');
const js = path.join(dir, 'greet.js');

before(() => {
  const src = fs.readFileSync(path.join(dir, 'greet.ts'), 'utf8');
  const out = ts.transpileModule(src, {
    fileName: 'greet.ts',
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2019, inlineSourceMap: true, sourceRoot: dir },
  });
  fs.writeFileSync(js, out.outputText);
});

test('launched: a probe on the .ts function counts exactly; the resource has the .ts line', async () => {
  const s = await Session.launch([process.execPath, js], ['/Code/ts/greet.ts/greet.entry: n++'], { stdio: 'pipe', cwd: FIXTURES });
  after(() => s.child!.kill());
  const { until } = programOutput(s.child!);
  await until(/ready/);
  s.child!.stdin!.write('321\n');
  await until(/greeted 321/);
  await s.sample();
  assert.equal(s.value('n'), 321);
  const [greet] = await s.resources('/Code/ts/greet.ts/greet');
  assert.equal(greet.path, '/Code/ts/greet.ts/greet');
  assert.equal(greet.line, 9, 'line of greet in greet.ts, not in the generated greet.js');
  await s.detach();
});

test('attached (LiveEdit): the same names and exact counts', async () => {
  const t = new Target(js);
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await Session.attach(t.pid);
  await s.probe('/Code/ts/greet.ts/greet.entry: n++');
  await t.request('123', /greeted 123/);
  await s.sample();
  assert.equal(s.value('n'), 123);
  const names = (await s.resources('/Code/ts/greet.ts/*')).map((r) => `${r.function}:${r.line}`);
  assert.ok(names.includes('greet:9'), names.join(' '));
  await s.detach();
});

test('attached: the modules are listed by name as resources names them, a source map in a file beside the script read without the script', async () => {
  const file = path.join(dir, 'greet-file.js');
  const out = ts.transpileModule(fs.readFileSync(path.join(dir, 'greet.ts'), 'utf8'), {
    fileName: 'greet-file.ts',
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2019, sourceMap: true, sourceRoot: dir },
  });
  fs.writeFileSync(file, out.outputText);
  fs.writeFileSync(`${file}.map`, out.sourceMapText!);
  // the program loads both: greet-file.js (its map in a file) and greet.js (its map inline)
  const main = path.join(dir, 'greet-both.js');
  fs.writeFileSync(main, `require('./greet-file.js'); require('./greet.js');\n`);
  const t = new Target(main);
  after(() => t.kill());
  await t.waitFor(/ready/);
  const s = await Session.attach(t.pid);
  try {
    const listed = await s.modules();
    const byName = new Set(listed.filter((m) => m.thread === 'main').map((m) => m.module));
    // the map's source names the module (greet-file.ts is the source's name in it: sourceRoot/greet-file.ts)
    assert.ok(byName.has('ts/greet-file.ts'), [...byName].join(' '));
    assert.ok(byName.has('ts/greet.ts'), [...byName].join(' '));
    assert.ok(byName.has('ts/greet-both.js'), [...byName].join(' '));
    assert.ok(![...byName].some((m) => m.startsWith('node:') || m.endsWith('greet-file.js') || m.endsWith('/greet.js')), [...byName].join(' '));
    // every module with a function is listed, as resources names it
    for (const r of await s.resources('/Code/**')) assert.ok(byName.has(r.module), `${r.module} not in ${[...byName].join(' ')}`);
    // and one module's functions are found by its name
    assert.ok((await s.resources('/Code/ts/greet-file.ts/*')).some((r) => r.function === 'greet' && r.line === 9));
  } finally {
    await s.detach();
  }
});

/** anonymous-hot.ts compiled to `<name>.js`, its source map inline or in a file beside it; the hot callback's line in the script. */
function compileHot(name: string, inline: boolean): { js: string; hotLine: number } {
  const out = ts.transpileModule(fs.readFileSync(path.join(dir, 'anonymous-hot.ts'), 'utf8'), {
    fileName: 'anonymous-hot.ts',
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2019, sourceRoot: dir, ...(inline ? { inlineSourceMap: true } : { sourceMap: true }) },
  });
  const js = path.join(dir, `${name}.js`);
  const text = inline ? out.outputText : out.outputText.replace(/sourceMappingURL=\S+/, `sourceMappingURL=${name}.js.map`);
  fs.writeFileSync(js, text);
  if (!inline) fs.writeFileSync(`${js}.map`, out.sourceMapText!);
  return { js, hotLine: text.split('\n').findIndex((l) => l.includes('setInterval(() => {')) + 1 };
}

test('a frame of a source-mapped script, tagged with its position, is named as the analysis names its function; an untagged one as it is', () => {
  const { js } = compileHot('hot-names', false);
  const text = fs.readFileSync(js, 'utf8');
  const { analysis } = analyzeScript(text, undefined, { filename: js, cwd: FIXTURES });
  const frames = new FrameNames(FIXTURES);
  // only a file with a map is tagged (greet-both.js has none), each told once
  assert.deepEqual(frames.newlyMapped([{ file: js }, { file: path.join(dir, 'greet-both.js') }]), [js]);
  assert.deepEqual(frames.newlyMapped([{ file: js }]), []);
  const at = lineIndex(text);
  assert.ok(analysis.functions.length >= 4, JSON.stringify(analysis.functions.map((f) => f.name)));
  for (const f of analysis.functions) {
    const { line, column } = at(f.start);
    // V8 names these arrows by nothing, so the runtime by their line in the script
    assert.match(f.name, /^<anonymous>@/);
    const tagged = `ts/hot-names.js/<anonymous>@${line}\u0001${js}\u0001${line}:${column}`;
    assert.equal(frames.name(tagged), sampleKey(`${f.module}/${f.name}`));
    // its start line with it: the original's, as the analysis gives it (StackSamples.byLine)
    const one: StackRecord[] = [[[tagged], 1, true, [], '', [line]]];
    frames.nameStacks(one);
    assert.deepEqual(one[0][5], [f.line]);
  }
  assert.equal(frames.name('ts/hot-names.js/<anonymous>@3'), 'ts/hot-names.js/<anonymous>@3');
  // a stack's frames once each after naming, its calls out named too
  const stacks: StackRecord[] = [[[`a.js/f\u0001${js}\u00019:0`, 'a.js/g'], 3, true, [`a.js/f\u0001${js}\u00019:0\0sort`]]];
  frames.nameStacks(stacks);
  assert.ok(!stacks[0][0][0].includes('\u0001') && !stacks[0][3]![0].includes('\u0001'), JSON.stringify(stacks));
  assert.equal(stacks[0][3]![0], `${stacks[0][0][0]}\0sort`);
});

for (const how of ['launched, its map in a file', 'attached, its map inline'] as const) {
  test(`${how}: V8's stack samples of source-mapped code are named by the map, so the search refines it to the .ts function`, async () => {
    const launched = how.startsWith('launched');
    const { js, hotLine } = compileHot(launched ? 'hot-file' : 'hot-inline', !launched);
    // the compiled script has the hot callback on another line than the .ts (its types are gone)
    assert.ok(hotLine > 0 && hotLine !== 10, `line ${hotLine}`);
    const target = launched ? null : new Target(js, ['60']);
    after(() => target?.kill());
    if (target) await target.waitFor(/ready/);
    const { diagnosis: d, session } = await diagnose(target ? { pid: target.pid } : { command: [process.execPath, js, '60'] },
      { cwd: FIXTURES, hypotheses: ['cpu_bound'] });
    session.child?.kill();
    const hot = '/Code/ts/anonymous-hot.ts/<anonymous>@10';
    assert.ok(d.bottlenecks.some((b) => b.focus === hot && b.source === 'ts/anonymous-hot.ts:10'), JSON.stringify(d.bottlenecks));
    assert.match(d.searchHistory.find((n) => n.focus === hot)?.note ?? '', /^decided from \d+ stack samples/);
    // nothing is named by the compiled script: not the module, not the hottest functions
    assert.ok(!d.searchHistory.some((n) => n.focus.includes(path.basename(js))), JSON.stringify(d.searchHistory.map((n) => n.focus)));
    const hottest = (d.hottest ?? []).filter((h) => h.thread === 'main' && !h.node);
    assert.equal(hottest[0]?.function, 'ts/anonymous-hot.ts/<anonymous>@10', JSON.stringify(hottest));
    assert.ok(!hottest.some((h) => h.function.includes(path.basename(js))), JSON.stringify(hottest));
  });
}

test('names are clean paths: a package outside the working directory from node_modules/ on, a source map\'s URL source by its host and path', async () => {
  // greet.ts mapped to a URL (as bundles ship them: https://..., webpack://...), the script in a directory of its own
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-names-'));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const out = ts.transpileModule(fs.readFileSync(path.join(dir, 'greet.ts'), 'utf8'), {
    fileName: 'greet.ts',
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2019, inlineSourceMap: true, sourceRoot: 'https://example.com/app/./src/' },
  });
  const url = path.join(tmp, 'greet-url.js');
  fs.writeFileSync(url, out.outputText);
  // the program's working directory is test/fixtures: esprima is in the project's node_modules, two levels up
  const s = await Session.launch([process.execPath, '-e', `require(${JSON.stringify(url)}); require('esprima');`], ['/Code/example.com/app/src/greet.ts/greet.entry: n++'], { stdio: 'pipe', cwd: FIXTURES });
  after(() => s.child!.kill());
  const { until } = programOutput(s.child!);
  await until(/ready/);
  s.child!.stdin!.write('7\n');
  await until(/greeted 7/);
  await s.sample();
  assert.equal(s.value('n'), 7);
  const modules = new Set((await s.resources('/Code/**')).map((r) => r.module));
  assert.ok(modules.has('example.com/app/src/greet.ts'), [...modules].join(' '));
  assert.ok(modules.has('node_modules/esprima/dist/esprima.js'), [...modules].join(' '));
  assert.ok(![...modules].some((m) => m.startsWith('..') || m.includes('https:')), [...modules].join(' '));
  await s.detach();
});

test('node app.ts (Node strips the types itself): prepared like JavaScript, counts exact, output and stack traces byte-identical, CommonJS and ES modules', async () => {
  const cwd = path.join(FIXTURES, 'ts-run');
  const json = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'paranode-ts-')), 'out.json');
  after(() => fs.rmSync(path.dirname(json), { recursive: true, force: true }));
  for (const [program, args, probe, every, calls] of [
    ['app.ts', ['7'], '/Code/app.ts/area.entry: n++', '/Code/app.ts/*.entry: e++', 7],
    ['esm.mts', [], '/Code/lib.mts/double.entry: n++', '/Code/*.mts/*.entry: e++', 4],
  ] as const) {
    const plain = spawnSync(process.execPath, [program, ...args], { cwd, encoding: 'utf8' });
    assert.equal(plain.status, 0, plain.stderr);
    // one probe, and a counter at every point of every function of the program
    const run = spawnSync(process.execPath, [CLI, 'run', '-q', '-p', probe, '-p', every, '--json', json, '--', process.execPath, program, ...args], { cwd, encoding: 'utf8' });
    assert.deepEqual([run.status, run.stdout, run.stderr], [plain.status, plain.stdout, plain.stderr], program);
    const out = JSON.parse(fs.readFileSync(json, 'utf8')) as { metrics: { name: string; total: number }[]; notes: string[] };
    assert.equal(out.metrics.find((m) => m.name === 'n')?.total, calls, JSON.stringify(out));
    assert.ok((out.metrics.find((m) => m.name === 'e')?.total ?? 0) >= calls, JSON.stringify(out));
    assert.deepEqual(out.notes, []);
  }
});
