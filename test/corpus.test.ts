// Semantic transparency on a corpus of real npm programs (test/corpus/*, see
// test/support/corpus.ts): each program is run (a) plain, (b) under
// `paranode run` with no probe (every script it loads is prepared: slots
// everywhere, all off), (c) under `paranode run` with every function
// instrumented at entry, exit and call sites (before and after). (b) and (c)
// must print byte for byte what (a) printed, on stdout and on stderr, and
// exit with the same code; in (c) the counters must show that the
// instrumentation ran, in the package's own code in node_modules too, and
// entries must balance exits where every call finishes.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { CORPUS, firstDifference, Run, runPlain, runUnder } from './support/corpus';

const EVERYTHING = ['/Code/**.entry: e++', '/Code/**.exit: x++', '/Code/**.calls: k++', '/Code/**.calls postInsn: r++'];
/** programs run at once (each test runs its three runs one after the other) */
const CONCURRENCY = Number(process.env.PARANODE_CORPUS_CONCURRENCY ?? 2);
const ONLY = process.env.PARANODE_CORPUS?.split(',');

/** Every way `got` differs from the plain run, one paragraph each ('' when identical). */
function differences(got: Run, plain: Run): string {
  const d: string[] = [];
  if (got.status !== plain.status || got.signal !== plain.signal) d.push(`exit: ${got.signal ?? got.status}, plain ${plain.signal ?? plain.status}`);
  if (got.stdout !== plain.stdout) d.push(`stdout differs: ${firstDifference(got.stdout, plain.stdout)}`);
  if (got.stderr !== plain.stderr) d.push(`stderr differs: ${firstDifference(got.stderr, plain.stderr)}`);
  // a run that ended otherwise says why at the end of its stderr
  if (d.length && got.status !== plain.status) d.push(`its stderr ends:\n${got.stderr.slice(-1500)}`);
  return d.join('\n');
}

function totals(json: string): Record<string, number> {
  const out = JSON.parse(fs.readFileSync(json, 'utf8'));
  const v: Record<string, number> = {};
  for (const m of out.metrics) if (m.focus.startsWith('/Process/')) v[m.name] = m.total;
  return v;
}

describe('corpus of npm programs: prepared and fully instrumented runs are transparent', { concurrency: CONCURRENCY }, () => {
  for (const p of CORPUS.filter((q) => !ONLY || ONLY.includes(q.driver))) {
    test(`${p.driver}: ${p.shape}`, async (t) => {
      const plain = await runPlain(p);
      assert.equal(plain.status, p.status, `plain run: exit ${plain.signal ?? plain.status}, expected ${p.status}\n${plain.stderr.slice(-2000)}`);
      assert.ok(plain.stdout.length > 2000, `plain run printed only ${plain.stdout.length} characters`);

      await t.test('(b) prepared, no probe: same stdout, stderr and exit code', async () => {
        const r = await runUnder(p);
        const d = differences(r, plain);
        assert.ok(!d, `${p.driver} under paranode run, no probe:\n${d}`);
      });

      await t.test('(c) every function instrumented: same output; entries balance exits; counters large, in node_modules too', async () => {
        const json = path.join(os.tmpdir(), `paranode-corpus-${process.pid}-${p.driver}.json`);
        const generators = p.unbalanced?.generators ?? [];
        const probes = [...EVERYTHING, `${p.lib}.entry: lib++`, ...generators.flatMap((g) => [`${g}.entry: ge++`, `${g}.exit: gx++`])];
        const r = await runUnder(p, ['--json', json, ...probes.flatMap((x) => ['-p', x])]);
        const d = differences(r, plain);
        let v: Record<string, number> = {};
        try { v = totals(json); } catch (e) { assert.fail(`${p.driver}: no metrics written (${(e as Error).message})\n${d}`); } finally { fs.rmSync(json, { force: true }); }
        const [e, x, k, rr, lib, ge, gx] = ['e', 'x', 'k', 'r', 'lib', 'ge', 'gx'].map((n) => v[n] ?? 0);
        const counts = `entries ${e}, exits ${x}, calls ${k}, returned ${rr}, entries in ${p.lib} ${lib}` +
          (p.unbalanced ? `, generator entries ${ge}, exits ${gx}` : '');
        assert.ok(!d, `${p.driver} with every function instrumented (${counts}):\n${d}`);
        // entries balance exits, but for generator activations left suspended
        if (p.unbalanced) assert.equal(e - x, ge - gx, `${counts}: entries minus exits must be the suspended generators (${p.unbalanced.why})`);
        else assert.equal(x, e, `${counts}: every call finishes, so exits must equal entries`);
        // a call site counts before the call; after it only when it returned (not thrown)
        assert.ok(k >= rr, counts);
        assert.ok(e > 1000 && rr > 1000, `${counts}: the instrumentation hardly ran`);
        assert.ok(lib > 100, `${counts}: the package's own code was not instrumented`);
      });
    });
  }
});

// the corpus lists exactly the drivers in test/corpus
test('every driver in test/corpus is in the corpus', () => {
  const dir = path.join(__dirname, '..', '..', 'test', 'corpus');
  const drivers = fs.readdirSync(dir).filter((f) => /\.(m?js|cjs)$/.test(f)).sort();
  assert.deepEqual(CORPUS.map((p) => p.driver).sort(), drivers);
});
