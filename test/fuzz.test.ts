// Fuzzing the MDL, snippet and probe parsers: generated inputs (mutations of
// the standard library and of valid snippets and probes, random bytes, deep
// nesting, huge numbers, odd Unicode) each end in a valid load or in an error
// that has a location and a message; never another exception, never a hang.
// Deterministic: PARANODE_FUZZ_SEED picks another seed (the default is fixed),
// and a failure names the seed and the input (inputs are the same on every Node
// version; a few outcomes differ between them, as their Unicode tables do). Snippets that compile are also
// built into handlers, as the runtime builds them, and run on arguments that
// count every getter, Proxy trap and coercion: none may happen.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { buildHandler, resolveNames } from '../src/agent/runtime';
import { FocusError, planRequest } from '../src/mdl/evaluate';
import { MdlLibrary, STANDARD_MDL } from '../src/mdl/library';
import { MAX_MDL_NESTING, MdlError } from '../src/mdl/parser';
import { parseProbe, ProbeSyntaxError, type ProbeRequest } from '../src/instrument/probe';
import { compileSnippet, MAX_SNIPPET_NESTING, SnippetError, type PointClass } from '../src/instrument/snippet';

const SEED = Number(process.env.PARANODE_FUZZ_SEED ?? 0x16f022);
/** generous: a parse takes well under a millisecond to a few; a hang takes forever */
const PER_INPUT_MS = 3000;

/** mulberry32: small, fast, and the same sequence on every Node version */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Gen {
  readonly r: () => number;
  constructor(seed: number) { this.r = prng(seed); }
  int(n: number): number { return Math.floor(this.r() * n); }
  pick<T>(xs: readonly T[]): T { return xs[this.int(xs.length)]; }
}

const ODD = ['zähler', '計数', '𝒳', 'a\u0301', '\u200d', '\ufeff', '\u2028', '\u2029', '\u202e', '\ud800', '\udc00', '\u0000', '\u00a0', '\u3000', '\\u0061',
  '\r', '\t', '"', '(*', '*)', '/*', '*/', '//', '$', '$arg', '$constraint[', '99999999999999999999999999999', '1e400', '0x', '`', '${', '\\'];
const SNIPPETS = [
  'c++', 'c--', 'c += 2', 'c -= $arg[0]', 'last = $arg[0]', 'if ($arg[0] > 10) big++', 'if ($return == 200) two00++',
  'n += $arg[0].body.length', 'if ($arg[0].name[1] === "b") bs++', 'startWallTimer(t)', 'stopTimer(t)', 'startProcessTimer(p)',
  'bytes[$file($arg[0])] += $arg[1].length', 'startWallTimer(io[$file($arg[0])])', 'stopTimer(io[$last])', 'calls[$channel($this)]++',
  'if (n > 700 && !($this.x === undefined)) late++', 'if (procedure > 0) procedure--;', '{ a++; b -= 2; }', 'if (a) b++; else c++',
  'startWallTimer(x__c_y); a__t_b++', 'x = -$arg[0].v * 2 + ($arg[1] != null) - +$arg[2]', 'if ($arg[0][$arg[1]] || $arg[0]["k"]) k++', 'zähler++', 'v$fn++', 'm$mod += 1',
];
const POINTS: PointClass[] = ['entry', 'exit', 'call', 'await', 'resume'];
const PROBE_HEADS = ['/Code/app.js/f.entry', '/Code/lib/*.js/*.calls postInsn append', '/Code/app.js/main.call(parse)', '/Code/node:fs/readFileSync.entry',
  '/Code/**/g.exit prepend', '/Code/a.js/h.await', '/Code/a.js/h.resume', '/Code/a.js/h.throw preInsn', '/Code/a b.js/f?.entry'];

/** JavaScript-ish and MDL-ish tokens, whitespace and comments kept: joined, they give the text back */
const TOKEN = /\(\*[\s\S]*?\*\)|"[^"\n]*"|\/\/[^\n]*|\s+|\$?[A-Za-z_][\w$]*|\/[^\s{};,()"]+|\d+|[^]/gu;
const tokens = (text: string) => text.match(TOKEN) ?? [];

function mutateTokens(g: Gen, text: string): string {
  const t = tokens(text);
  if (!t.length) return text;
  const times = 1 + g.int(3);
  for (let k = 0; k < times; k++) {
    const i = g.int(t.length);
    switch (g.int(5)) {
      case 0: t.splice(i, 1 + g.int(3)); break;
      case 1: t.splice(i, 0, t[i]); break;
      case 2: { const j = g.int(t.length); [t[i], t[j]] = [t[j], t[i]]; break; }
      case 3: t[i] = g.pick(ODD); break;
      default: t.splice(i, 0, g.pick(t)); break;
    }
  }
  return t.join('');
}

function randomChars(g: Gen, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) {
    const k = g.int(4);
    s += k === 0 ? String.fromCharCode(g.int(0x10000)) : k === 1 ? String.fromCharCode(g.int(0x80)) : k === 2 ? g.pick(ODD) : g.pick('{}()[];,.*/$":+-=<>!&|?'.split(''));
  }
  return s;
}

function mutateChars(g: Gen, text: string): string {
  switch (g.int(4)) {
    case 0: return text.slice(0, g.int(text.length + 1));
    case 1: { const i = g.int(text.length + 1); return text.slice(0, i) + randomChars(g, 1 + g.int(8)) + text.slice(i); }
    case 2: { const i = g.int(text.length + 1); return text.slice(0, i) + text.slice(i + 1 + g.int(20)); }
    default: { const i = g.int(text.length + 1), j = g.int(text.length + 1); return text.slice(0, i) + text.slice(j, j + 1 + g.int(40)) + text.slice(i); }
  }
}

function deepSnippet(g: Gen, n: number): string {
  switch (g.int(7)) {
    case 0: return `c += ${'('.repeat(n)}1${')'.repeat(n)}`;
    case 1: return `if (${'!'.repeat(n)}$arg[0]) c++`;
    case 2: return `c += 1${' + 1'.repeat(n)}`;
    case 3: return `${'if (a) '.repeat(n)}c++`;
    case 4: return `${'{'.repeat(n)}c++${'}'.repeat(n)}`;
    case 5: return `c += $arg[0]${'.x'.repeat(n)}`;
    default: return `c = ${'a ? b : '.repeat(n)}1`;
  }
}

function snippetInput(g: Gen): string {
  const base = g.pick(SNIPPETS);
  switch (g.int(8)) {
    case 0: case 1: return mutateTokens(g, base);
    case 2: case 3: return mutateChars(g, base);
    case 4: return deepSnippet(g, g.pick([MAX_SNIPPET_NESTING - 5, MAX_SNIPPET_NESTING + 5, 1000, 20000]));
    case 5: return randomChars(g, 1 + g.int(40));
    case 6: return `${base.replace(/\d+/, () => g.pick(['99999999999999999999999999999', '1e400', '0.0000001e-400', '9'.repeat(400)]))}`;
    default: return `${g.pick(SNIPPETS)}; ${mutateTokens(g, g.pick(SNIPPETS))}`;
  }
}

const standard = fs.readFileSync(STANDARD_MDL, 'utf8');
/** the standard library's insert statements, to nest in foreach loops */
const INSERTS = standard.match(/(?:append|prepend) preInsn \$constraint\[0\]\.entry \(\*[^*]*\*\)/g) ?? [];

function mdlInput(g: Gen): string {
  switch (g.int(10)) {
    case 0: case 1: case 2: return mutateTokens(g, standard);
    case 3: case 4: return mutateChars(g, standard);
    case 5: {
      // a snippet of the library mutated as snippets are
      const snippets = [...standard.matchAll(/\(\*([\s\S]*?)\*\)/g)];
      const m = g.pick(snippets);
      return standard.slice(0, m.index! + 2) + ` ${mutateTokens(g, m[1])} ` + standard.slice(m.index! + m[0].length - 2);
    }
    case 6: {
      const n = g.pick([MAX_MDL_NESTING - 1, MAX_MDL_NESTING + 1, 5000, 100000]);
      const braces = g.int(2) === 0;
      const body = `${'foreach f in $procedures '.repeat(n).replace(/ $/, braces ? ' { ' : ' ')}append preInsn f.entry (* m++; *)`;
      return `metric m {\n  base is counter {\n    ${braces ? body.replace(/\$procedures /g, '$procedures { ') + ' }'.repeat(n) : body}\n  }\n}\n`;
    }
    case 7: return `constraint c /Code/* is counter { ${g.pick(INSERTS).replace('[0]', `[${g.pick(['99999999999999999999999999', '4294967296', '007'])}]`)} }\n` +
      `metric m { constraint c; base is counter { foreach f in $procedures append preInsn f.entry (* ${deepSnippet(g, g.pick([50, 150, 3000])).replace(/\bc\b/g, 'm')} *) } }`;
    case 8: return randomChars(g, 1 + g.int(200));
    default: return `metric ${g.pick(['größe', '計数', 'a\u0301b', '𝒳'])} { units x; base is counter { foreach f in $procedures append preInsn f.entry (* ${g.pick(['größe', '計数', 'a\u0301b', '𝒳'])}++ *) } }`;
  }
}

function probeInput(g: Gen): string {
  const valid = `${g.pick(PROBE_HEADS)}: ${g.pick(SNIPPETS)}`;
  switch (g.int(6)) {
    case 0: case 1: return mutateTokens(g, valid);
    case 2: case 3: return mutateChars(g, valid);
    case 4: return `${g.pick(PROBE_HEADS)}: ${snippetInput(g)}`;
    default: return randomChars(g, 1 + g.int(60));
  }
}

/** A location must be inside the text (lines ended as JavaScript ends them: the MDL tokenizer counts only \n, so it counts fewer). */
function assertInside(text: string, line: number, column: number, what: string): void {
  const lines = text.split(/\r\n|\r|\n|\u2028|\u2029/);
  assert.ok(Number.isInteger(line) && line >= 1, `${what}: line ${line}`);
  assert.ok(Number.isInteger(column) && column >= 1, `${what}: column ${column}`);
  assert.ok(line <= lines.length + 1, `${what}: line ${line} past the end`);
}

const stats = { valid: 0, located: 0, slowestMs: 0 };

/** Run one input: a valid result, or an error with a location; anything else fails with the seed and the input. */
function check(kind: string, i: number, text: string, run: () => void, locate: (e: unknown) => boolean): void {
  const t0 = performance.now();
  try {
    run();
    stats.valid++;
  } catch (e) {
    let ok = false, why: unknown = e;
    try { ok = locate(e); } catch (bad) { why = bad; }
    if (!ok) assert.fail(`seed ${SEED}, ${kind} input #${i} ${JSON.stringify(text.length > 400 ? text.slice(0, 400) + '…' : text)}: ${(why as Error)?.stack ?? why}`);
    stats.located++;
  }
  const ms = performance.now() - t0;
  stats.slowestMs = Math.max(stats.slowestMs, ms);
  assert.ok(ms < PER_INPUT_MS, `seed ${SEED}, ${kind} input #${i} took ${ms.toFixed(0)} ms`);
}

const locatedSnippet = (text: string) => (e: unknown): boolean => {
  if (!(e instanceof SnippetError)) return false;
  assert.ok(e.message.length > 0);
  assertInside(text, e.line, e.column, 'snippet error');
  return true;
};

/** Arguments whose reading would run program code, each counting it. */
function hostileArgs(): { args: unknown[]; ran: () => number } {
  let ran = 0;
  const count = () => { ran++; };
  const handler: ProxyHandler<object> = {};
  for (const trap of ['get', 'has', 'getOwnPropertyDescriptor', 'getPrototypeOf', 'ownKeys', 'apply', 'construct', 'defineProperty', 'set', 'deleteProperty']) {
    (handler as any)[trap] = (...a: unknown[]) => { count(); return (Reflect as any)[trap](...a); };
  }
  const proxy = new Proxy({ x: 1 }, handler);
  const coerce = { valueOf() { count(); return 5; }, toString() { count(); return '5'; }, [Symbol.toPrimitive]() { count(); return 5; } };
  const getters = Object.defineProperties({}, Object.fromEntries(['body', 'length', 'name', 'x', 'v', 'k', '0', '1'].map((k) => [k, { get() { count(); return coerce; } }])));
  const args = [
    { body: getters, name: 'abc', length: proxy, x: coerce, v: Object.create(proxy), k: Object.create(getters) },
    proxy, coerce, getters, 'text', 42, null, Buffer.from('abc'),
  ];
  return { args, ran: () => ran };
}

test('fuzz: MDL, snippet and probe parsers give a valid load or a located error, never a crash or hang', { timeout: 60_000 }, () => {
  const g = new Gen(SEED);
  const t0 = performance.now();
  const counts = { mdl: 0, snippet: 0, probe: 0, handlers: 0 };
  const env = {
    C: new Float64Array(64), U: new Uint32Array(64), F: new Float64Array(64), L: new Uint32Array(64), T: new Float64Array(256),
    now: () => 0, cpu: () => 0, cell: () => -1, start: () => undefined, stop: () => undefined, queue: () => undefined,
  };
  const hostile = hostileArgs();

  for (let i = 0; i < 250; i++) {
    const text = mdlInput(g);
    counts.mdl++;
    check('MDL', i, text, () => {
      const lib = new MdlLibrary();
      lib.load(text, 'fuzz.mdl');
      // what a loaded definition becomes when enabled for the whole program
      for (const m of lib.metrics.values()) {
        try { planRequest(lib, m, [], 'v', () => 'k'); } catch (e) { if (!(e instanceof FocusError)) throw e; }
      }
    }, (e) => {
      if (!(e instanceof MdlError)) return false;
      assert.equal(e.pos.file, 'fuzz.mdl');
      assert.match(e.message, /^fuzz\.mdl:\d+:\d+: \S/);
      assertInside(text, e.pos.line, e.pos.column, 'MDL error');
      return true;
    });
  }

  for (let i = 0; i < 400; i++) {
    const text = snippetInput(g);
    const point = g.pick(POINTS);
    counts.snippet++;
    check('snippet', i, text, () => {
      const c = compileSnippet(text, { point });
      // what the runtime installs must be valid JavaScript, and run no program code
      let cells = 0;
      const h = buildHandler(`try{${resolveNames(c.body, () => cells++ % 64, () => cells++ % 64)}}catch(e){}`, env);
      counts.handlers++;
      const { args } = hostile;
      for (let k = 0; k < 3; k++) h.apply(args[k], [args[k], args[(k + 1) % args.length], args[(k + 2) % args.length], args[3], args[4], args[5], args[6], args[7]]);
    }, locatedSnippet(text));
  }

  for (let i = 0; i < 300; i++) {
    const text = probeInput(g);
    counts.probe++;
    check('probe', i, text, () => {
      const r: ProbeRequest = parseProbe(text);
      assert.ok(text.includes(r.snippet));
    }, (e) => {
      if (e instanceof ProbeSyntaxError) {
        assert.match(e.message, /\S.* \(probe line \d+, column \d+\)$/);
        assertInside(text, e.line, e.column, 'probe error');
        return true;
      }
      // a snippet error is located in the snippet, a part of the probe's text
      return e instanceof SnippetError && locatedSnippet(text)(e);
    });
  }

  assert.equal(hostile.ran(), 0, 'a snippet ran program code (a getter, a Proxy trap or a coercion)');
  const ms = performance.now() - t0;
  // every kind of outcome occurs: the generator is not stuck on one
  assert.ok(stats.valid > 50 && stats.located > 300, JSON.stringify(stats));
  assert.ok(counts.handlers > 50, JSON.stringify(counts));
  process.stdout.write(`# fuzz seed ${SEED}: ${counts.mdl} MDL, ${counts.snippet} snippet, ${counts.probe} probe inputs; ` +
    `${stats.valid} valid, ${stats.located} located errors; ${counts.handlers} handlers run; slowest ${stats.slowestMs.toFixed(1)} ms, all ${ms.toFixed(0)} ms\n`);
});

test('deep nesting is a located error, not a stack overflow', () => {
  const deep = `metric m {\n  base is counter {\n    ${'foreach f in $procedures '.repeat(100000)}append preInsn f.entry (* m++; *)\n  }\n}\n`;
  assert.throws(() => new MdlLibrary().load(deep, 'deep.mdl'), new RegExp(`^Error: deep\\.mdl:3:${5 + MAX_MDL_NESTING * 'foreach f in $procedures '.length}: nesting deeper than ${MAX_MDL_NESTING}$`));
  const within = `metric m {\n  base is counter {\n    ${'foreach f in $procedures '.repeat(MAX_MDL_NESTING)}append preInsn f.entry (* m++; *)\n  }\n}\n`;
  new MdlLibrary().load(within, 'ok.mdl');
  // in a snippet: an expression too deep for the compiler, too deep for the parser, and in MDL (located in the file)
  assert.throws(() => compileSnippet(`c += 1${' + 1'.repeat(5000)}`, { point: 'entry' }), (e: unknown) => e instanceof SnippetError && /^nesting deeper than 100 \(snippet line 1, column \d+\)$/.test(e.message));
  assert.throws(() => compileSnippet(`c += ${'('.repeat(100000)}1${')'.repeat(100000)}`, { point: 'entry' }), (e: unknown) => e instanceof SnippetError && /^nesting deeper than 100 \(snippet line 1, column \d+\)$/.test(e.message));
  assert.throws(() => new MdlLibrary().load(`metric m { base is counter { foreach f in $procedures append preInsn f.entry (*\n  m += ${'- '.repeat(300)}1 *) } }`, 's.mdl'),
    /^Error: s\.mdl:2:\d+: metric m: nesting deeper than 100$/);
  compileSnippet(`c += ${'('.repeat(90)}1${')'.repeat(90)}`, { point: 'entry' });
});

test('non-ASCII names in MDL: a metric named größe loads and its snippet names it', () => {
  const lib = new MdlLibrary();
  lib.load('metric größe { units x; base is counter { foreach f in $procedures append preInsn f.entry (* größe++ *) } }', 'u.mdl');
  const plan = planRequest(lib, lib.metric('größe'), [], 'zählerVar', () => 'k');
  assert.deepEqual(plan.placements.map((p) => p.snippet), ['zählerVar++']);
});
