// MDL parser: a tokenizer and a recursive-descent parser for the handful of
// MDL constructs. Every error names file, line and column. Snippets between
// (* and *) are kept as text; the core's snippet compiler checks them when a
// metric is enabled (and `checkMdl` checks them all up front).
import type { Aggregate, BaseType, ConstraintDecl, Decl, ListDecl, ListRef, MetricDecl, PointAttr, PointRef, Pos, ResourceRef, Stmt, Style } from './ast';
import { PATH_STATS } from './ast';

export class MdlError extends Error {
  constructor(message: string, readonly pos: Pos) {
    super(`${pos.file}:${pos.line}:${pos.column}: ${message}`);
  }
}

type TokKind = 'ident' | 'string' | 'number' | 'path' | 'snippet' | 'punct' | 'eof';
interface Tok { kind: TokKind; value: string; pos: Pos }

// sticky: matched where the tokenizer is, without copying the rest of the text (quadratic on long input)
const PATH = /\/[\p{L}*_][\p{L}\p{N}\p{M}_*/.:@-]*/uy;
/** names are JavaScript identifiers (a metric's name stands for its variable in snippets), non-ASCII included */
const IDENT = /\$?[\p{ID_Start}_][\p{ID_Continue}\u200C\u200D]*/uy;
const NUMBER = /\d+/y;

function at(re: RegExp, text: string, i: number): RegExpExecArray | null {
  re.lastIndex = i;
  return re.exec(text);
}

/** statements (foreach, blocks) nest at most this deep in MDL */
export const MAX_MDL_NESTING = 100;

function tokenize(text: string, file: string): Tok[] {
  const out: Tok[] = [];
  let i = 0, line = 1, col = 1;
  const pos = (): Pos => ({ file, line, column: col });
  const advance = (n: number) => {
    for (let k = 0; k < n; k++, i++) {
      if (text[i] === '\n') { line++; col = 1; } else col++;
    }
  };
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) { advance(1); continue; }
    if (text.startsWith('//', i)) { while (i < text.length && text[i] !== '\n') advance(1); continue; }
    if (text.startsWith('/*', i)) {
      const start = pos();
      const end = text.indexOf('*/', i + 2);
      if (end < 0) throw new MdlError('comment not closed (missing */)', start);
      advance(end + 2 - i);
      continue;
    }
    const p = pos();
    if (text.startsWith('(*', i)) {
      const end = text.indexOf('*)', i + 2);
      if (end < 0) throw new MdlError('snippet not closed (missing *))', p);
      advance(2);
      const sp = pos();
      out.push({ kind: 'snippet', value: text.slice(i, end), pos: sp });
      advance(end + 2 - i);
      continue;
    }
    if (c === '"') {
      let j = i + 1, s = '';
      while (j < text.length && text[j] !== '"') {
        if (text[j] === '\n') throw new MdlError('string not closed on its line', p);
        if (text[j] === '\\' && j + 1 < text.length) { s += text[j + 1]; j += 2; continue; }
        s += text[j++];
      }
      if (j >= text.length) throw new MdlError('string not closed', p);
      out.push({ kind: 'string', value: s, pos: p });
      advance(j + 1 - i);
      continue;
    }
    let m: RegExpExecArray | null;
    if (c === '/' && (m = at(PATH, text, i))) {
      out.push({ kind: 'path', value: m[0], pos: p });
      advance(m[0].length);
      continue;
    }
    if ((m = at(IDENT, text, i))) {
      out.push({ kind: 'ident', value: m[0], pos: p });
      advance(m[0].length);
      continue;
    }
    if ((m = at(NUMBER, text, i))) {
      out.push({ kind: 'number', value: m[0], pos: p });
      advance(m[0].length);
      continue;
    }
    if ('{}()[];,.'.includes(c)) {
      out.push({ kind: 'punct', value: c, pos: p });
      advance(1);
      continue;
    }
    throw new MdlError(`unexpected character '${c}'`, p);
  }
  out.push({ kind: 'eof', value: '', pos: { file, line, column: col } });
  return out;
}

const AGGREGATES = new Set(['sum', 'avg', 'min', 'max']);
const STYLES = new Set(['EventCounter', 'SampledFunction']);
const BASES = new Set(['counter', 'wallTimer', 'processTimer', 'thread', 'path']);
const POINTS: Record<string, PointAttr> = {
  entry: 'entry', exit: 'exit', return: 'exit', throw: 'throw', calls: 'calls', inner: 'inner', innerawait: 'innerawait', innerresume: 'innerresume',
  await: 'await', resume: 'resume', outercalls: 'outercalls', outerawait: 'outerawait', outerresume: 'outerresume', trips: 'trips', loops: 'loops',
};

class Parser {
  private k = 0;
  constructor(private readonly toks: Tok[]) {}

  private get t(): Tok { return this.toks[this.k]; }
  private next(): Tok { return this.toks[this.k++]; }
  private describe(t: Tok): string { return t.kind === 'eof' ? 'the end of the file' : t.kind === 'snippet' ? 'a snippet' : `'${t.value}'`; }
  private fail(what: string, t = this.t): never { throw new MdlError(`expected ${what}, found ${this.describe(t)}`, t.pos); }
  private is(v: string): boolean { return (this.t.kind === 'punct' || this.t.kind === 'ident') && this.t.value === v; }
  private eat(v: string): Tok { if (!this.is(v)) this.fail(`'${v}'`); return this.next(); }
  private ident(what = 'a name'): Tok { if (this.t.kind !== 'ident' || this.t.value.startsWith('$')) this.fail(what); return this.next(); }
  private str(what = 'a string'): Tok { if (this.t.kind !== 'string') this.fail(what); return this.next(); }
  private optSemi(): void { if (this.is(';')) this.next(); }

  file(): Decl[] {
    const out: Decl[] = [];
    while (this.t.kind !== 'eof') {
      if (this.is('list')) out.push(this.list());
      else if (this.is('constraint')) out.push(this.constraint());
      else if (this.is('metric')) out.push(this.metric());
      else this.fail("'list', 'constraint' or 'metric'");
    }
    return out;
  }

  /** { a, b } or a single word */
  private words(): string[] {
    if (!this.is('{')) return [this.ident('a word').value];
    this.next();
    const out: string[] = [];
    while (!this.is('}')) {
      out.push(this.t.kind === 'string' ? this.next().value : this.ident('a word').value);
      if (!this.is('}')) this.eat(',');
    }
    this.next();
    return out;
  }

  private list(): ListDecl {
    const pos = this.eat('list').pos;
    const name = this.ident('the list name').value;
    this.eat('is');
    const type = this.ident("'procedure', 'module' or 'string'");
    if (!['procedure', 'module', 'string'].includes(type.value)) this.fail("'procedure', 'module' or 'string'", type);
    this.eat('{');
    const decl: ListDecl = { kind: 'list', name, type: type.value as ListDecl['type'], flavor: [], items: [], pos };
    while (!this.is('}')) {
      const field = this.ident("'flavor' or 'items'");
      if (field.value === 'flavor') decl.flavor = this.words();
      else if (field.value === 'items') {
        this.eat('{');
        while (!this.is('}')) {
          decl.items.push(this.str('a string item').value);
          if (!this.is('}')) this.eat(',');
        }
        this.next();
      } else this.fail("'flavor' or 'items'", field);
      this.optSemi();
    }
    this.next();
    this.optSemi();
    return decl;
  }

  private constraint(): ConstraintDecl {
    const pos = this.eat('constraint').pos;
    const name = this.ident('the constraint name').value;
    if (this.t.kind !== 'path') this.fail('a resource hierarchy such as /Code, /Code/* or /Thread');
    const hierarchy = this.next().value;
    this.eat('is');
    const type = this.ident("'counter', 'replace' or 'placement'");
    if (!['counter', 'replace', 'placement'].includes(type.value)) this.fail("'counter', 'replace' or 'placement'", type);
    let body: Stmt[] = [];
    if (type.value === 'placement') this.optSemi();
    else body = this.block();
    return { kind: 'constraint', name, hierarchy, type: type.value as ConstraintDecl['type'], body, pos };
  }

  private metric(): MetricDecl {
    const pos = this.eat('metric').pos;
    const name = this.ident('the metric name').value;
    this.eat('{');
    const m: Partial<MetricDecl> & { constraints: MetricDecl['constraints'] } = { kind: 'metric', name, constraints: [], flavor: [], pos };
    while (!this.is('}')) {
      const field = this.ident('a metric field (name, units, aggregateOperator, style, flavor, constraint, base)');
      switch (field.value) {
        case 'name': m.title = this.str('the metric title').value; break;
        case 'units': m.units = this.t.kind === 'string' ? this.next().value : this.ident('units').value; break;
        case 'aggregateOperator': {
          const a = this.ident('sum, avg, min or max');
          if (!AGGREGATES.has(a.value)) this.fail('sum, avg, min or max', a);
          m.aggregate = a.value as Aggregate;
          break;
        }
        case 'style': {
          const s = this.ident('EventCounter or SampledFunction');
          if (!STYLES.has(s.value)) this.fail('EventCounter or SampledFunction', s);
          m.style = s.value as Style;
          break;
        }
        case 'flavor': m.flavor = this.words(); break;
        case 'constraint': { const c = this.ident('a constraint name'); m.constraints.push({ name: c.value, pos: c.pos }); break; }
        case 'base': {
          const bpos = field.pos;
          this.eat('is');
          const b = this.ident('counter, wallTimer, processTimer, thread or path');
          if (!BASES.has(b.value)) this.fail('counter, wallTimer, processTimer, thread or path', b);
          if (b.value === 'thread') m.base = { type: 'thread', body: [], source: this.str('the name of a thread value').value, pos: bpos };
          else if (b.value === 'path') {
            const stat = this.str(`a call path's statistic (${PATH_STATS.join(', ')})`);
            if (!(PATH_STATS as readonly string[]).includes(stat.value)) this.fail(`a call path's statistic (${PATH_STATS.join(', ')})`, stat);
            m.base = { type: 'path', body: [], source: stat.value, pos: bpos };
          }
          else m.base = { type: b.value as BaseType, body: this.block(), pos: bpos };
          break;
        }
        default: this.fail('a metric field (name, units, aggregateOperator, style, flavor, constraint, base)', field);
      }
      this.optSemi();
    }
    this.next();
    this.optSemi();
    if (!m.base) throw new MdlError(`metric ${name} has no base clause`, pos);
    return {
      kind: 'metric', name, pos, title: m.title ?? name, units: m.units ?? 'units', aggregate: m.aggregate ?? 'sum',
      style: m.style ?? 'EventCounter', flavor: m.flavor ?? [], constraints: m.constraints, base: m.base,
    };
  }

  private block(): Stmt[] {
    this.eat('{');
    const out: Stmt[] = [];
    while (!this.is('}')) out.push(this.stmt());
    this.next();
    this.optSemi();
    return out;
  }

  private depth = 0;

  private stmt(): Stmt {
    const t = this.t;
    if (this.is('foreach')) {
      // the evaluator and the checks walk statements recursively too: a bound here keeps them all off the stack limit
      if (++this.depth > MAX_MDL_NESTING) throw new MdlError(`nesting deeper than ${MAX_MDL_NESTING}`, t.pos);
      this.next();
      const variable = this.ident('the loop variable').value;
      this.eat('in');
      const list = this.listRef();
      const body = this.is('{') ? this.block() : [this.stmt()];
      this.depth--;
      return { kind: 'foreach', variable, list, body, pos: t.pos };
    }
    if (this.is('append') || this.is('prepend')) {
      const order = this.next().value as 'append' | 'prepend';
      const w = this.ident("'preInsn' or 'postInsn'");
      if (w.value !== 'preInsn' && w.value !== 'postInsn') this.fail("'preInsn' or 'postInsn'", w);
      const point = this.pointRef();
      let constrained = false;
      if (this.is('constrained')) { this.next(); constrained = true; }
      if (this.t.kind !== 'snippet') this.fail('a snippet (* ... *)');
      const sn = this.next();
      this.optSemi();
      return { kind: 'insert', order, where: w.value as 'preInsn' | 'postInsn', point, constrained, snippet: sn.value, snippetPos: sn.pos, pos: t.pos };
    }
    return this.fail("'foreach', 'append' or 'prepend'");
  }

  private resourceRef(): ResourceRef {
    const t = this.t;
    if (t.kind === 'ident' && t.value === '$constraint') {
      this.next();
      this.eat('[');
      if (this.t.kind !== 'number') this.fail('a component index');
      const index = Number(this.next().value);
      this.eat(']');
      return { kind: 'constraint', index, pos: t.pos };
    }
    if (t.kind === 'ident' && !t.value.startsWith('$')) { this.next(); return { kind: 'var', name: t.value, pos: t.pos }; }
    return this.fail('$constraint[i] or a loop variable');
  }

  private listRef(): ListRef {
    const t = this.t;
    if (t.kind === 'ident' && t.value === '$procedures') { this.next(); return { kind: 'procedures', pos: t.pos }; }
    if (t.kind === 'ident' && t.value.startsWith('$') && t.value !== '$constraint') throw new MdlError(`unknown predefined list ${t.value} (known: $procedures, $constraint[i].funcs)`, t.pos);
    const of = this.resourceRef();
    if (!this.is('.')) {
      if (of.kind === 'var') return { kind: 'name', name: of.name, pos: of.pos };
      this.fail("'.funcs'");
    }
    this.next();
    const a = this.ident("'funcs'");
    if (a.value !== 'funcs') this.fail("'funcs'", a);
    return { kind: 'attr', of, attr: 'funcs', pos: t.pos };
  }

  private pointRef(): PointRef {
    const t = this.t;
    const of = this.resourceRef();
    this.eat('.');
    const a = this.ident('a point: entry, exit (or return), throw, calls, call("<callee>"), await, resume, loops, trips');
    if (a.value === 'call') {
      this.eat('(');
      const callee = this.str('the callee name in quotes').value;
      this.eat(')');
      return { of, attr: 'calls', callee, pos: t.pos };
    }
    const attr = POINTS[a.value];
    if (!attr) this.fail('a point: entry, exit (or return), throw, calls, call("<callee>"), await, resume, loops, trips', a);
    return { of, attr, pos: t.pos };
  }
}

/** Parse MDL text; `file` names it in errors. */
export function parseMdl(text: string, file = '<mdl>'): Decl[] {
  return new Parser(tokenize(text, file)).file();
}
