// Counting results as tests finish: runs of the original, passes of each
// rewritten variant among the runs whose original passed, the scripts
// paranode's parser rejected, and the failing runs kept for classes and JSON.
import type { Mode } from './execute';
import type { Failing } from './classify';
import type { TestResult } from './pool';
import type { Variant } from './prepare';

export interface RunRecord { test: string; mode: Mode; variant: Variant; phase?: string; error?: string; site?: string }

export class Tally {
  tests = 0;
  metaErrors: { test: string; error: string }[] = [];
  skipped: { test: string; why: string }[] = [];
  originalRuns = 0;
  originalPasses = 0;
  /** tests whose every original run passed */
  testsCounted = 0;
  readonly testsPassing = { 'slots-off': 0, 'slots-on': 0 };
  readonly ran = { 'slots-off': 0, 'slots-on': 0 };
  readonly passed = { 'slots-off': 0, 'slots-on': 0 };
  /** failing rewritten runs whose original passed */
  readonly failing: Failing[] = [];
  readonly originalFailures: RunRecord[] = [];
  /** file -> reason, and how many runs met such a script */
  readonly rejected = new Map<string, string>();
  rejectedRuns = 0;
  readonly handlerRuns: Record<string, number> = {};
  readonly byFeatureOriginalFail = new Map<string, number>();

  variantFailures(v: 'slots-off' | 'slots-on'): number {
    return this.ran[v] - this.passed[v];
  }

  add(r: TestResult): void {
    this.tests++;
    if (r.metaError) { this.metaErrors.push({ test: r.rel, error: r.metaError }); return; }
    if (r.skipped) { this.skipped.push({ test: r.rel, why: r.skipped }); return; }
    const features = r.meta?.features ?? [];
    const modes = new Set<string>();
    for (const run of r.runs.keys()) modes.add(run.split('/')[0]);
    let allOriginal = modes.size > 0;
    const variantOk = { 'slots-off': true, 'slots-on': true };
    for (const mode of modes) {
      const orig = r.runs.get(`${mode}/original`);
      if (!orig) { allOriginal = false; continue; }
      this.originalRuns++;
      if (!orig.ok) {
        allOriginal = false;
        this.originalFailures.push({ test: r.rel, mode: mode as Mode, variant: 'original', phase: orig.phase, error: orig.error });
        for (const f of features) this.byFeatureOriginalFail.set(f, (this.byFeatureOriginalFail.get(f) ?? 0) + 1);
        continue;
      }
      this.originalPasses++;
      for (const v of ['slots-off', 'slots-on'] as const) {
        const o = r.runs.get(`${mode}/${v}`);
        if (!o) { variantOk[v] = false; continue; }
        this.ran[v]++;
        for (const rj of o.rejected ?? []) { this.rejected.set(rj.file, rj.reason); this.rejectedRuns++; }
        if (o.counts) for (const [k, n] of Object.entries(o.counts)) this.handlerRuns[k] = (this.handlerRuns[k] ?? 0) + n;
        if (o.ok) this.passed[v]++;
        else { variantOk[v] = false; this.failing.push({ rel: r.rel, run: `${mode}/${v}`, outcome: o, features }); }
      }
    }
    if (allOriginal) {
      this.testsCounted++;
      for (const v of ['slots-off', 'slots-on'] as const) if (variantOk[v]) this.testsPassing[v]++;
    }
  }
}
