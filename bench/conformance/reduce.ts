// Reduced examples, for failures where the rewritten text no longer compiles:
// the smallest function, class, statement or expression of the test that V8
// compiles as written but not once paranode has prepared it on its own.
import * as acorn from 'acorn';
import * as fs from 'fs';
import * as path from 'path';
import * as vm from 'vm';
import { prepareForLoad, prepareModuleForLoad } from '../../src/instrument/transform';
import type { Failing } from './classify';
import { describeThrown } from './execute';

type Node = acorn.Node & Record<string, any>;

const CANDIDATE = /Statement$|Declaration$|Expression$|^MethodDefinition$|^PropertyDefinition$|^Property$|^StaticBlock$/;

/** Does V8 compile this text (script or module goal)? The error text if not. */
function v8Error(text: string, isModule: boolean): string | null {
  try {
    if (isModule) {
      const STM = (vm as any).SourceTextModule;
      if (!STM) return null;
      new STM(text);
    } else new vm.Script(text);
    return null;
  } catch (e) {
    return describeThrown(e).text;
  }
}

function prepared(text: string, isModule: boolean): string | null {
  try {
    return isModule ? prepareModuleForLoad(text, 1, 'reduced.js').code : prepareForLoad(text, 1, 'script').code;
  } catch {
    return null;
  }
}

/** Texts a node can stand in on its own: itself, or wrapped where it needs a home. */
function standIns(n: Node, text: string): string[] {
  const out: string[] = [];
  const t = n.type;
  if (t === 'MethodDefinition' || t === 'PropertyDefinition' || t === 'StaticBlock') out.push(`class C { ${text} }`);
  else if (t === 'Property') out.push(`({ ${text} });`);
  else if (t.endsWith('Expression')) out.push(`(${text});`);
  else out.push(text);
  const base = out[0];
  if (/\byield\b/.test(text)) out.push(`function* g() { ${base} }`);
  if (/\bawait\b/.test(text)) out.push(`async function f() { ${base} }`);
  if (/\b(return|break|continue)\b/.test(text)) out.push(`function f() { ${base} }`, `function f() { l: for (;;) { ${base} } }`);
  if (/\bsuper\b/.test(text)) out.push(`class C extends Object { m() { ${base} } }`, `class C extends Object { constructor() { ${base} } }`);
  if (/\bnew\.target\b/.test(text)) out.push(`function f() { ${base} }`);
  return out;
}

/**
 * For a failing run whose prepared text does not compile: the smallest stand-in
 * that compiles unprepared but not prepared, as "<text>  ⇒  <V8 error>".
 */
export function reduceExample(root: string, f: Failing): string | undefined {
  if (f.outcome.phase !== 'parse') return undefined;
  const mode = f.run.split('/')[0];
  const isModule = mode === 'module';
  let source: string;
  try { source = fs.readFileSync(path.join(root, f.rel), 'utf8'); } catch { return undefined; }
  const strict = mode === 'strict' ? '"use strict";\n' : '';
  let ast: Node;
  try {
    ast = acorn.parse(strict + source, { ecmaVersion: 'latest', sourceType: isModule ? 'module' : 'script', allowHashBang: true }) as Node;
  } catch {
    return undefined;
  }
  const text = strict + source;
  const nodes: Node[] = [];
  const walk = (n: Node): void => {
    if (CANDIDATE.test(n.type) && n.end - n.start < 600) nodes.push(n);
    for (const k of Object.keys(n)) {
      const v = (n as any)[k];
      if (Array.isArray(v)) { for (const c of v) if (c && typeof c.type === 'string') walk(c); } else if (v && typeof v.type === 'string') walk(v);
    }
  };
  walk(ast);
  nodes.sort((a, b) => (a.end - a.start) - (b.end - b.start));
  let tries = 0;
  for (const n of nodes) {
    for (const body of standIns(n, text.slice(n.start, n.end).replace(/\s*\n\s*/g, ' '))) {
      if (++tries > 400) return undefined;
      const cand = strict.trim() && !isModule ? `"use strict"; ${body}` : body;
      if (v8Error(cand, isModule)) continue;
      const p = prepared(cand, isModule);
      if (p === null) continue;
      const e = v8Error(p, isModule);
      if (e) return `${cand}  ⇒  ${e}`;
    }
  }
  return undefined;
}
