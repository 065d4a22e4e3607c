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
  /** a minimal program that shows it (checked by hand against prepareForLoad) */
  reduced?: string;
  items: Failing[];
}

interface Rule {
  name: string;
  why: string;
  reduced: string;
  test: (f: Failing) => boolean;
}

const err = (f: Failing) => f.outcome.error ?? '';
/** the site without the marker, so that patterns see the text as compiled */
const site = (f: Failing) => (f.outcome.site ?? '').replace('⟪HERE⟫', '');
const KEYWORD_GLUED = /\b(return|yield|await|typeof|void|delete|in|instanceof|of|new|case|do|else|throw)\$pn[PC]\b/;

/** Named classes, most specific first. Rules look at the error, the site and the path only. */
export const RULES: Rule[] = [
  {
    name: 'bare yield (no operand)',
    why: 'the suspend slot " $pnP(G,s)" goes after "yield", but the resume wrapper closes at the same position first: "$pnP(G,r,yield) $pnP(G,s)"',
    reduced: 'function* g(){ yield; }  ⇒  SyntaxError: Unexpected identifier \'$pnP\' (prepared: "$pnP(G,4,yield) $pnP(G,2);")',
    test: (f) => /yield\)+\s*\$pn[PC]\(\$pn\w+,\d+\)/.test(site(f)) || /yield\s+\$pnP\(\$pn\w+,\d+\)/.test(site(f)),
  },
  {
    name: 'operand right after its keyword (no space)',
    why: 'a slot opening "$pnP(" / "$pnC(" inserted where the operand starts joins the keyword before it into one identifier: "return[1]" -> "return$pnP(G,s,[1])", "yield/re/" -> "yield$pnP(...)"',
    reduced: 'function f(){ return"x" } f()  ⇒  ReferenceError: return$pnP is not defined (original: "x")',
    test: (f) => KEYWORD_GLUED.test(err(f)) || KEYWORD_GLUED.test(site(f)),
  },
  {
    name: 'directive without a semicolon',
    why: 'the entry slot goes right after the directive prologue; a directive ended by ASI ("x"} or "x"<newline>) gets "if(...)" glued to it',
    reduced: '(function(){ "a" })  ⇒  SyntaxError: Unexpected token \'if\'',
    test: (f) => /Unexpected token 'if'/.test(err(f)) && /["']\s*if\(\$pn/.test(site(f)),
  },
  {
    name: 'Function.prototype.toString shows the prepared text',
    why: 'the source text of a function is observable (toString, String(f), f + "", a function used as a computed key); the slots are part of it',
    reduced: '({ [function(){}]: 1 })["function(){}"]  ⇒  undefined (original: 1); (function(){return 1}) + ""  ⇒  "function(){if($pn1_0)$pn1_0[0]();try{return $pnP(...',
    test: (f) => (/\$pn\d+_\d+/.test(err(f)) && !KEYWORD_GLUED.test(err(f))) || /computed-property-name-from-/.test(f.rel),
  },
  {
    name: 'async generator: "return;" gets an operand and awaits it',
    why: '"return;" becomes "return $pnP(G,s)": in an async generator "return x" awaits x, one tick later than a bare "return;"',
    reduced: 'async function* g(){ return; } g().next().then(A); Promise.resolve().then(B)  ⇒  B runs before A (original: A before B)',
    test: (f) => /Ticks for implicit/.test(err(f)) || /return-undefined-implicit-and-explicit/.test(f.rel),
  },
  {
    name: 'expression-bodied arrow with no space after "=>" whose body is a call',
    why: 'the arrow wrapper opens at the end of "=>", which is where the call starts: both closing texts sort to the same key and the arrow\'s closes before the call\'s ")"',
    reduced: 'a=>g(a)  ⇒  SyntaxError: missing ) after argument list (a=> g(a) is fine)',
    test: (f) => /missing \) after argument list/.test(err(f)) && /[^)]\)\}catch\(\$pnE\)/.test(site(f)) && !/yield/.test(site(f)),
  },
];

/** Blank out the parts of an error message that vary between tests. */
export function errorShape(text: string): string {
  return text
    .replace(/\$pn\d+_\d+/g, '$pnS_F')
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
    if (!c) byName.set(name, (c = { name, why: rule?.why, reduced: rule?.reduced, items: [] }));
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

