// The conformance report: counts, failure classes with examples (and a
// reduced snippet where the reducer finds one), and the JSON of every failing run.
import * as fs from 'fs';
import { areas, classify, errorShape, examples, type Failing } from './classify';
import { reduceExample } from './reduce';
import type { Tally } from './tally';

export interface RunInfo { root: string; commit: string | null; node: string; v8: string; jobs: number; filter: string | null; limit: number | null; elapsedMs: number }

const pct = (a: number, b: number) => (b ? `${(100 * a / b).toFixed(2)}%` : '-');

export function printReport(t: Tally, info: RunInfo, k: number): void {
  const out: string[] = [];
  out.push(`\n# paranode test262 conformance (test/language)`);
  out.push(`test262: ${info.root}${info.commit ? ` @ ${info.commit}` : ''}`);
  out.push(`runtime: Node ${info.node} (V8 ${info.v8}), ${info.jobs} worker process(es), ${(info.elapsedMs / 1000).toFixed(1)} s${info.filter ? `, filter '${info.filter}'` : ''}${info.limit ? `, limit ${info.limit}` : ''}`);
  out.push('');
  const notRun = [t.metaErrors.length && `${t.metaErrors.length} with unreadable metadata`, t.skipped.length && `${t.skipped.length} not applicable (${[...new Set(t.skipped.map((s) => s.why))].join('; ')})`].filter(Boolean);
  out.push(`tests:                 ${t.tests}${notRun.length ? ` (not run: ${notRun.join(', ')})` : ''}`);
  out.push(`runs of the original:  ${t.originalRuns} (a test runs once per mode: sloppy and strict unless flagged, module, raw)`);
  out.push(`original passes:       ${t.originalPasses} (${pct(t.originalPasses, t.originalRuns)}); rewritten runs count only where the original passed`);
  for (const v of ['slots-off', 'slots-on'] as const) {
    out.push(`${v.padEnd(9)} passes:     ${t.passed[v]} of ${t.ran[v]} (${pct(t.passed[v], t.ran[v])}), ${t.variantFailures(v)} failing runs; tests all of whose runs pass: ${t.testsPassing[v]} of ${t.testsCounted}`);
  }
  out.push(`parser rejections:     ${t.rejected.size} scripts that V8 compiles were left unprepared by paranode's parser (met in ${t.rejectedRuns} rewritten runs)`);
  const hr = Object.entries(t.handlerRuns).sort();
  if (hr.length) out.push(`slots-on handler runs: ${hr.map(([n, v]) => `${n.slice(2)} ${v}`).join(', ')}`);
  if (t.originalFailures.length) {
    const byPhase = new Map<string, number>();
    for (const f of t.originalFailures) byPhase.set(f.phase ?? '?', (byPhase.get(f.phase ?? '?') ?? 0) + 1);
    const feats = [...t.byFeatureOriginalFail].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([f, n]) => `${f} ${n}`).join(', ');
    out.push(`original failures:     ${t.originalFailures.length} runs (${[...byPhase].map(([p, n]) => `${p} ${n}`).join(', ')})${feats ? `; most frequent features among them: ${feats}` : ''}`);
  }
  if (t.rejected.size) {
    const shapes = new Map<string, string[]>();
    for (const [f, r] of t.rejected) { const s = r.replace(/\(\d+:\d+\)/, '(l:c)'); shapes.set(s, [...(shapes.get(s) ?? []), f]); }
    out.push(`\n## parser rejections by message`);
    for (const [s, fs_] of [...shapes].sort((a, b) => b[1].length - a[1].length)) out.push(`  ${fs_.length.toString().padStart(5)}  ${s}   e.g. ${fs_.slice(0, 2).join(', ')}`);
  }
  const classes = classify(t.failing);
  if (classes.length) {
    out.push(`\n## failure classes (rewritten runs that fail where the original passes): ${classes.length}`);
    let i = 0;
    for (const c of classes) {
      i++;
      const off = c.items.filter((f) => f.run.endsWith('slots-off')).length;
      out.push(`\n${i}. ${c.name} — ${c.items.length} runs (slots-off ${off}, slots-on ${c.items.length - off}); areas: ${areas(c)}`);
      if (c.why) {
        out.push(`   ${c.why}`);
        const msgs = new Map<string, number>();
        for (const f of c.items) { const m = `${f.outcome.phase}: ${errorShape(f.outcome.error ?? '')}`; msgs.set(m, (msgs.get(m) ?? 0) + 1); }
        out.push(`   errors: ${[...msgs].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([m, n]) => `${m} (${n})`).join('; ')}`);
      }
      if (c.reduced) out.push(`   reduced: ${c.reduced}`);
      for (const e of examples(c, k)) {
        out.push(`   - ${e.rel} [${e.run}] ${e.outcome.phase}: ${(e.outcome.error ?? '').slice(0, 200)}`);
        if (e.outcome.site) out.push(`       at ${e.outcome.site.replace(/\s+/g, ' ')}`);
        const red = c.reduced ? undefined : reduceExample(info.root, e);
        if (red) out.push(`       reduced: ${red}`);
      }
    }
  }
  console.log(out.join('\n'));
}

export function writeJson(file: string, t: Tally, info: RunInfo): void {
  const rec = (f: Failing) => {
    const [mode, variant] = f.run.split('/');
    return { test: f.rel, mode, variant, phase: f.outcome.phase, error: f.outcome.error, site: f.outcome.site };
  };
  const classes = classify(t.failing).map((c) => ({ name: c.name, why: c.why, reduced: c.reduced, count: c.items.length, tests: [...new Set(c.items.map((f) => f.rel))] }));
  const data = {
    info,
    counts: {
      tests: t.tests, metadataErrors: t.metaErrors.length, skipped: t.skipped.length, originalRuns: t.originalRuns, originalPasses: t.originalPasses,
      slotsOff: { ran: t.ran['slots-off'], passed: t.passed['slots-off'] }, slotsOn: { ran: t.ran['slots-on'], passed: t.passed['slots-on'] },
      testsCounted: t.testsCounted, testsPassing: t.testsPassing, parserRejections: t.rejected.size, handlerRuns: t.handlerRuns,
    },
    failures: t.failing.map(rec),
    classes,
    parserRejections: [...t.rejected].map(([file, reason]) => ({ file, reason })),
    originalFailures: t.originalFailures,
    metadataErrors: t.metaErrors,
    skipped: t.skipped,
  };
  fs.writeFileSync(file, JSON.stringify(data, null, 1));
}
