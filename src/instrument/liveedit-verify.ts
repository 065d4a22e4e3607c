// Verifying LiveEdits after they are applied. V8 can answer Ok and still leave
// a function on its old code: closures made before the edit keep running the
// old text, which V8 moves to a hidden copy of the script (a scriptId never
// announced by Debugger.scriptParsed, where no breakpoint can be set). Those
// closures are found on the heap: every function object whose text is an old
// function's text, without slots, whose location is in no announced script.
import type { FunctionInfo } from '../analysis/functions';
import type { Cdp } from '../inspector/cdp';

export interface AppliedEdit {
  scriptId: string;
  module: string;
  /** the script's text before the edit */
  original: string;
  /** the functions the edit changed (those given slots) */
  changed: FunctionInfo[];
}

export interface OldClosure { edit: AppliedEdit; fn: FunctionInfo }

const GROUP = 'paranode-verify';
/** closures whose location is looked up, at most (each is one CDP round trip) */
const MAX_CANDIDATES = 500;

/** The text V8's Function.prototype.toString ends with for a function, bounded in length. */
function tailText(source: string, fn: FunctionInfo): string {
  const t = source.slice(Math.max(fn.start, fn.end - 256), fn.end);
  // V8 leaves `static` out of a method's text
  return t.replace(/^static\s+/, '');
}

/**
 * Closures still running the old code of a function the edits changed. One
 * heap query for all edits (it costs a full garbage collection in the target).
 * `announced` holds every scriptId the thread has seen parsed.
 */
export async function findOldClosures(cdp: Cdp, edits: AppliedEdit[], announced: Set<string>): Promise<OldClosure[]> {
  const owners: OldClosure[] = [];
  const texts: string[] = [];
  for (const edit of edits) {
    for (const fn of edit.changed) { owners.push({ edit, fn }); texts.push(tailText(edit.original, fn)); }
  }
  if (!texts.length) return [];
  try {
    const proto = await cdp.send('Runtime.evaluate', { expression: 'Function.prototype', objectGroup: GROUP });
    // every object with Function.prototype on its prototype chain: all functions
    const all = await cdp.send('Runtime.queryObjects', { prototypeObjectId: proto.result.objectId!, objectGroup: GROUP });
    const matched = await cdp.send('Runtime.callFunctionOn', {
      objectId: all.objects.objectId!,
      functionDeclaration: MATCH_IN_TARGET,
      arguments: [{ value: texts }, { value: MAX_CANDIDATES }],
      returnByValue: true,
      silent: true,
    });
    const pairs: [number, number][] = matched.result?.value ?? [];
    if (!pairs.length) return [];
    const picked = await cdp.send('Runtime.callFunctionOn', {
      objectId: all.objects.objectId!,
      functionDeclaration: 'function (js) { return js.map((j) => this[j]); }',
      arguments: [{ value: pairs.map(([j]) => j) }],
      objectGroup: GROUP,
      silent: true,
    });
    const elems = await cdp.send('Runtime.getProperties', { objectId: picked.result.objectId!, ownProperties: true });
    const found = new Map<string, OldClosure>();
    for (const el of elems.result as { name: string; value?: { objectId?: string } }[]) {
      const k = Number(el.name);
      if (!Number.isInteger(k) || !el.value?.objectId) continue;
      const props = await cdp.send('Runtime.getProperties', { objectId: el.value.objectId, ownProperties: true });
      const loc = (props.internalProperties ?? []).find((p: { name: string }) => p.name === '[[FunctionLocation]]')?.value?.value;
      // a function of some other script with the same text, or one that did get its new code
      if (!loc || announced.has(loc.scriptId)) continue;
      const owner = owners[pairs[k][1]];
      found.set(`${owner.edit.scriptId}:${owner.fn.index}`, owner);
    }
    return [...found.values()];
  } finally {
    await cdp.send('Runtime.releaseObjectGroup', { objectGroup: GROUP }).catch(() => undefined);
  }
}

/** Runs in the target with `this` = all its functions: [function index, text index] of the slot-free ones ending in an old text. */
const MATCH_IN_TARGET = `function (texts, max) {
  const KEY = 32, byKey = new Map(), lens = new Set();
  texts.forEach((t, i) => {
    const k = t.slice(-KEY);
    lens.add(k.length);
    const l = byKey.get(k);
    if (l) l.push(i); else byKey.set(k, [i]);
  });
  const toString = Function.prototype.toString, out = [];
  for (let j = 0; j < this.length && out.length < max; j++) {
    let s;
    try { s = toString.call(this[j]); } catch { continue; }
    if (s.includes('$pn')) continue;
    for (const n of lens) {
      const hits = s.length >= n && byKey.get(s.slice(-n));
      if (hits) for (const i of hits) if (s.endsWith(texts[i])) out.push([j, i]);
    }
  }
  return out;
}`;
