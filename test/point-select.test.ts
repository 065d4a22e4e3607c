// Which calls are inner to a call site (point-select's isInnerCall): the one-sweep
// index against the definition (a call evaluated while another evaluates its
// receiver or arguments, with no call between them), on known code and on every
// function of a real parser; and which calls and suspensions are a function's
// outer ones (those its exclusive timers stop and start around).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { test } from 'node:test';
import { analyzeScript, publicInfo, type PointInfo } from '../src/analysis/functions';
import { calleeMatches, calleeName, innermostCalls, isInnerCall, pointMatches } from '../src/analysis/point-select';
import { callSitesOf } from '../src/consultant/search';

const within = (a: PointInfo, b: PointInfo) => a !== b && b.pos <= a.pos && a.end <= b.end;
/** The definition, searched (quadratic in the function's calls for each of them). */
function byDefinition(want: string, p: PointInfo, points: readonly PointInfo[]): boolean {
  if (p.kind !== 'call') return false;
  const calls = points.filter((q) => q.kind === 'call');
  return calls.some((q) => q.callee !== undefined && calleeMatches(want, q.callee) && within(p, q) && !calls.some((r) => within(p, r) && within(r, q)));
}

const pointsOf = (source: string) => analyzeScript(source).fns.map((f) => publicInfo(f).points);

test('inner calls: of `a().b(c(d()), e)` a() and c() are inner to b, d() to c; nothing to a, d or e', () => {
  const [points] = pointsOf('function f() { a().b(c(d()), e(1)); }');
  const calls = points.filter((p) => p.kind === 'call');
  const inner = (want: string) => calls.filter((p) => isInnerCall(want, p, points)).map((p) => p.callee).sort();
  assert.deepEqual(inner('b'), ['a', 'c', 'e']);
  assert.deepEqual(inner('c'), ['d']);
  for (const none of ['a', 'd', 'e']) assert.deepEqual(inner(none), []);
  assert.equal(innermostCalls(points)?.get(calls.find((p) => p.callee === 'd')!)?.callee, 'c');
});

test('inner calls: the index agrees with the definition at every call site of every function of esprima (and the index is made once per function)', () => {
  const source = fs.readFileSync(require.resolve('esprima'), 'utf8');
  let checked = 0;
  for (const points of pointsOf(source)) {
    const index = innermostCalls(points);
    assert.ok(index !== null, 'no two calls over one range');
    assert.equal(innermostCalls(points), index);
    const names = new Set(points.map((p) => (p.kind === 'call' && p.callee !== undefined ? calleeName(p.callee) : null)).filter((n): n is string => n !== null));
    for (const want of names) {
      for (const p of points) {
        assert.equal(isInnerCall(want, p, points), byDefinition(want, p, points));
        checked++;
      }
    }
  }
  assert.ok(checked > 20000, `${checked} checks`);
});

test('outer calls and suspensions: none made while a call evaluates its receiver and arguments, by a parameter\'s default or in a class field', async () => {
  const source = 'async function f(a = d()) { await g(h(await i)); j(); class K { x = k(); } await l; return m(await n); }';
  const [points] = pointsOf(source);
  const text = (p: PointInfo) => p.kind === 'call' ? p.callee! : `${p.kind}@${source.slice(p.pos).split(/[;)]/)[0]}`;
  const sel = (s: string) => points.filter((p) => pointMatches(s, p, points)).map(text);
  assert.deepEqual(sel('calls'), ['d', 'g', 'h', 'j', 'k', 'm']);
  assert.deepEqual(sel('outercalls'), ['g', 'j', 'm']);
  // `await g(...)` resumes after g returned: outside it; `await i` and `await n` are in h's and m's arguments
  assert.deepEqual(sel('outerawait'), ['await@await g(h(await i', 'await@await l']);
  assert.deepEqual(sel('outerresume').length, 2);
  assert.deepEqual(sel('innerawait:h'), ['await@await i']);
  assert.deepEqual(sel('innerresume:m').length, 1);
  assert.deepEqual(sel('innerawait:g'), []);
});

test('the consultant\'s call sites count inner calls only, not the suspensions the index also holds', () => {
  const [points] = pointsOf('async function f() { await g(h(await x), k()); h(1); }');
  const sites = callSitesOf(points);
  assert.deepEqual([...sites].map(([n, g]) => [n, g.calls, g.inner]).sort(), [['g', 1, 2], ['h', 2, 0], ['k', 1, 0]]);
});
