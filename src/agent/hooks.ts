// Load-time preparation: every CommonJS module compiled after this is installed
// gets slots at all its points before V8 ever sees it (no LiveEdit, no pause).
import { isOwnCode, ownCodeDirs } from './own-code';
import type { Runtime } from './runtime';

const MARK = Symbol.for('paranode.cjsHook');

/** ES modules: a load hook in Node's loader thread, switched by a shared flag. */
export function installEsmHook(rt: Runtime): void {
  const g = globalThis as any;
  const KEY = Symbol.for('paranode.esmHook');
  let active: Int32Array = g[KEY];
  if (!active) {
    const mod = require('module');
    if (typeof mod.register !== 'function') return;
    active = new Int32Array(new SharedArrayBuffer(4));
    mod.register(require('url').pathToFileURL(require('path').join(__dirname, 'esm-hooks.js')).href, { data: { active, own: ownCodeDirs() } });
    Object.defineProperty(g, KEY, { value: active, enumerable: false, configurable: true });
  }
  Atomics.store(active, 0, 1);
  rt.onDeactivate.push(() => Atomics.store(active, 0, 0));
}

export function installCjsHook(rt: Runtime): void {
  const Module = require('module');
  const proto = Module.prototype;
  if (proto._compile[MARK]) return;
  // load the preparer before hooking, so that it is never prepared itself
  const { prepareForLoad } = require('../instrument/transform') as typeof import('../instrument/transform');
  const own = ownCodeDirs();
  const original = proto._compile;
  const patched = function (this: unknown, content: string, filename: string) {
    let code = content;
    if (rt.active && !isOwnCode(filename, own)) {
      try {
        code = prepareModule(rt, prepareForLoad, content, filename);
      } catch (e) {
        rt.unprepared.push({ file: filename, reason: String((e as Error)?.message ?? e) });
      }
    }
    return original.call(this, code, filename);
  };
  (patched as any)[MARK] = original;
  proto._compile = patched;
  rt.onDeactivate.push(() => { if (proto._compile === patched) proto._compile = original; });
}

function prepareModule(rt: Runtime, prepareForLoad: typeof import('../instrument/transform').prepareForLoad, content: string, filename: string): string {
  const no = rt.allocScript();
  const prepared = prepareForLoad(content, no, 'script', { filename, cwd: rt.cwd });
  rt.defineGlobals(no, prepared.analysis.functions.length);
  rt.registerScript(no, rt.moduleName(filename), prepared.analysis, undefined, filename, 'load', prepared.unslotted.map((u) => [u.fn, u.point]));
  return prepared.code;
}
