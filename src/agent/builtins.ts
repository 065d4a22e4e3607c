// The wrapping fallback, for Node.js's built-in modules (node:fs, node:http,
// ...): their code cannot be prepared, but their exports can be wrapped. Each
// exported function (and each method of an exported class's prototype, and of
// an exported plain object such as fs.promises) becomes a resource
// /Code/node:<module>/<name> with three points: entry, exit (return) and exit
// (throw). The wrapper is a Proxy, so `this`, `new`, `new.target`, properties,
// `name`, `length` and `instanceof` behave as before. It is installed only
// while something is switched on in the function, and the ES-module bindings
// of the built-ins are re-synchronised each time. Calls through references
// taken before the wrapper went in (const { readFileSync } = require('fs'))
// do not pass through it (that is reported). A module's calls to its own
// exports while it serves a call of the program are not counted again (nor,
// in a module that calls back into the program synchronously, such as an
// EventEmitter's emit, the program's own calls to that module from there).
import type { FunctionInfo, ScriptAnalysis } from '../analysis/functions';
import { inOwnWork } from './own-work';
import type { Runtime } from './runtime';

/** callsBack: the function calls the program (a message's dispatch to its listeners): the program's calls from there are its own */
interface Wrappable { holder: Record<string | symbol, unknown>; key: string | symbol; name: string; callsBack?: boolean }

/**
 * Register, as 'wrap' scripts, the loaded built-in modules whose node:<name>
 * matches. A module named without a wildcard (node:child_process) is loaded if
 * the program has not loaded it yet: a probe there must see its first use.
 */
/**
 * Whether a module pattern (codeGlobToRegex's output) names modules whole, with no
 * wildcard: codeGlobToRegex writes one as [^/]* (or [^/] for ?) or .*. Such a pattern
 * matches no module loaded later than its first registration. No regexp runs here.
 */
export function namesWholeModules(moduleMatch: string): boolean {
  return !moduleMatch.includes('[^/]') && !moduleMatch.includes('.*');
}

export function registerBuiltins(rt: Runtime, moduleMatch: string, registered: Set<string>): void {
  const re = new RegExp(moduleMatch);
  const named = namesWholeModules(moduleMatch);
  const mod = require('module') as typeof import('module') & { syncBuiltinESMExports(): void };
  const loaded = new Set(((process as any).moduleLoadList as string[] ?? [])
    .filter((s) => s.startsWith('NativeModule ')).map((s) => s.slice('NativeModule '.length)));
  for (const name of mod.builtinModules) {
    const id = `node:${name}`;
    if (name.startsWith('_') || registered.has(id) || !re.test(id) || !(loaded.has(name) || named)) continue;
    registered.add(id);
    let exports: unknown;
    try { exports = require(name); } catch { continue; }
    const targets = wrappables(exports);
    if (name === 'worker_threads') targets.push(...dispatchOfMessages());
    const functions: FunctionInfo[] = targets.map((t, index) => ({
      index, name: t.name, line: 0, column: 0, start: 0, end: 0, isAsync: false, isGenerator: false, isArrow: false, params: [],
      points: [
        { index: 0, kind: 'entry', line: 0, column: 0, pos: 0, end: 0 },
        { index: 1, kind: 'exit', exit: 'return', line: 0, column: 0, pos: 0, end: 0 },
        { index: 2, kind: 'exit', exit: 'throw', line: 0, column: 0, pos: 0, end: 0 },
      ],
    }));
    const analysis: ScriptAnalysis = { functions, sourceType: 'script' };
    const inside = { depth: 0 };
    const wrappers = targets.map((t) => wrapper(t, () => mod.syncBuiltinESMExports(), t.callsBack ? { depth: 0 } : inside));
    const no = rt.allocScript();
    rt.registerScript(no, id, analysis, (fn, v) => wrappers[fn](v), id, 'wrap');
  }
}

/**
 * The start of a message's dispatch on a MessagePort (a Worker's port, parentPort,
 * a MessageChannel's): Node calls the port's internal hybrid dispatch (found by
 * its symbol's name on EventTarget's prototype) with (data, type), type 'message'
 * for a message. Named MessagePort.[dispatch]; its entry is when the message's wait ends.
 */
function dispatchOfMessages(): Wrappable[] {
  const holder = EventTarget.prototype as unknown as Record<symbol, unknown>;
  const key = Object.getOwnPropertySymbols(holder).find((k) => k.description === 'nodejs.internal.kHybridDispatch');
  return key && typeof holder[key] === 'function' ? [{ holder, key, name: 'MessagePort.[dispatch]', callsBack: true }] : [];
}

function wrappables(exports: unknown): Wrappable[] {
  const out: Wrappable[] = [];
  if (!exports || (typeof exports !== 'object' && typeof exports !== 'function')) return out;
  const own = (o: object) => Object.getOwnPropertyNames(o).filter((k) => {
    const d = Object.getOwnPropertyDescriptor(o, k);
    return !!d && 'value' in d && typeof d.value === 'function' && (d.writable || d.configurable);
  });
  const seen = new Set<unknown>();
  const add = (holder: any, key: string, name: string) => {
    if (seen.has(holder[key])) return;
    seen.add(holder[key]);
    out.push({ holder, key, name });
  };
  if (typeof exports === 'function') add({ default: exports }, 'default', 'default');
  for (const k of own(exports as object)) {
    const f = (exports as any)[k];
    add(exports, k, k);
    // an exported class: its prototype's methods, as a stack trace names them
    const proto = f.prototype;
    if (proto && typeof proto === 'object' && /^[A-Z]/.test(k)) for (const m of own(proto)) if (m !== 'constructor') add(proto, m, `${k}.${m}`);
  }
  // plain objects of functions one level down (fs.promises)
  for (const k of Object.getOwnPropertyNames(exports)) {
    const d = Object.getOwnPropertyDescriptor(exports, k);
    const v = d && 'value' in d ? d.value : undefined;
    if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) for (const m of own(v)) add(v, m, `${k}.${m}`);
  }
  return out;
}

/** The guard setter of one wrappable: installs the Proxy while handlers are on, takes it out after. */
function wrapper(t: Wrappable, sync: () => void, inside: { depth: number }): (v: unknown) => void {
  const original = t.holder[t.key] as (...a: unknown[]) => unknown;
  let G: any = 0;
  // The handlers in force when the call began run around it: entry, then exit
  // by return or by throw (they see the receiver as $this; a constructor has
  // none yet). A call the module makes to itself while serving the program
  // (writeFileSync -> fs.openSync, Worker.postMessage -> MessagePort.postMessage)
  // is part of the program's call, not a call of its own: no handlers run; nor
  // while the agent does its own work (own-work.ts).
  const around = (self: unknown, args: unknown[], run: () => unknown): unknown => {
    const h = inside.depth === 0 && !inOwnWork() ? G : 0;
    if (h) h[0].apply(self, args);
    let r;
    inside.depth++;
    try {
      r = run();
    } catch (e) {
      inside.depth--;
      if (h) h[4].call(self);
      throw e;
    }
    inside.depth--;
    if (h) h[2].call(self, r);
    return r;
  };
  const proxy = new Proxy(original, {
    apply: (target, self, args) => around(self, args, () => Reflect.apply(target, self, args)),
    construct: (target, args, newTarget) => around(undefined, args, () => Reflect.construct(target, args, newTarget)) as object,
  });
  const put = (value: unknown) => {
    const d = Object.getOwnPropertyDescriptor(t.holder, t.key);
    if (!d) return;
    if (d.writable) t.holder[t.key] = value;
    else Object.defineProperty(t.holder, t.key, { ...d, value });
    sync();
  };
  return (v) => {
    G = v;
    const installed = t.holder[t.key] === proxy;
    if (v && !installed && t.holder[t.key] === original) put(proxy);
    else if (!v && installed) put(original);
  };
}
