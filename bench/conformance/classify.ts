// Failure classes: a failing rewritten run (its original passed) is put in the
// first named class whose rule matches; the rest are grouped by phase and
// error shape (messages with names, values and numbers blanked out). Each
// class also tells which syntactic areas (test/language/<a>/<b>) it hits.
import type { RunOutcome } from './execute';

export interface Failing {
  rel: string;
  run: string;
  outcome: RunOutcome;
  features: string[];
}

export interface FailureClass {
  name: string;
  /** what the rewrite does wrong, when a rule knows it */
  why?: string;
  items: Failing[];
}

interface Rule {
  name: string;
  why: string;
  test: (f: Failing) => boolean;
}

const err = (f: Failing) => f.outcome.error ?? '';
const site = (f: Failing) => f.outcome.site ?? '';

/** Named classes, most specific first. Rules look at the error, the site and the path only. */
export const RULES: Rule[] = [];

/** Blank out the parts of an error message that vary between tests. */
export function errorShape(text: string): string {
  return text
    .replace(/«[^»]*»/g, '«…»')
    .replace(/'[^']*'/g, "'…'")
    .replace(/"[^"]*"/g, '"…"')
    .replace(/`[^`]*`/g, '`…`')
    .replace(/\b\d+(\.\d+)?\b/g, 'N')
    .replace(/\s+/g, ' ')
    .slice(0, 160);
}

/** test/language/expressions/class/elements/x.js -> expressions/class */
export function area(rel: string): string {
  const parts = rel.split('/');
  return parts.slice(2, Math.min(4, parts.length - 1)).join('/') || parts[2];
}

export function classify(fails: Failing[]): FailureClass[] {
  const byName = new Map<string, FailureClass>();
  for (const f of fails) {
    const rule = RULES.find((r) => r.test(f));
    const name = rule ? rule.name : `${f.outcome.phase}: ${errorShape(err(f))}`;
    let c = byName.get(name);
    if (!c) byName.set(name, (c = { name, why: rule?.why, items: [] }));
    c.items.push(f);
  }
  return [...byName.values()].sort((a, b) => b.items.length - a.items.length || a.name.localeCompare(b.name));
}

/** Areas a class hits, most first: "expressions/class 12, statements/class 9". */
export function areas(c: FailureClass, max = 4): string {
  const n = new Map<string, number>();
  for (const f of c.items) n.set(area(f.rel), (n.get(area(f.rel)) ?? 0) + 1);
  const sorted = [...n].sort((a, b) => b[1] - a[1]);
  return sorted.slice(0, max).map(([a, k]) => `${a} ${k}`).join(', ') + (sorted.length > max ? `, … (${sorted.length} areas)` : '');
}

/** Examples from different areas where possible, never the same test twice, shortest test names first. */
export function examples(c: FailureClass, k = 3): Failing[] {
  const out: Failing[] = [];
  const areasSeen = new Set<string>();
  const tests = new Set<string>();
  const items = [...c.items].sort((a, b) => a.rel.length - b.rel.length || a.rel.localeCompare(b.rel));
  for (const f of items) if (out.length < k && !areasSeen.has(area(f.rel))) { areasSeen.add(area(f.rel)); tests.add(f.rel); out.push(f); }
  for (const f of items) if (out.length < k && !tests.has(f.rel)) { tests.add(f.rel); out.push(f); }
  return out;
}

void site;
