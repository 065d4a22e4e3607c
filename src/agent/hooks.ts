// Load-time preparation: every module loaded after this is installed gets
// slots at all its points before V8 ever sees it (no LiveEdit, no pause).
// Where Node has module.registerHooks (22.15+, 23.5+) one synchronous load hook
// in the thread itself serves require, import and require(esm): nothing is
// patched, no frame of ours is on the program's stack while a module loads, and
// no warning is printed (module.register is deprecated at run time in Node 26).
// Older Node: a patched Module.prototype._compile and a module.register hook.
import { fileURLToPath } from 'url';
import { isOwnCode, ownCodeDirs } from './own-code';
import type { Runtime } from './runtime';

const HOOKS = Symbol.for('paranode.loadHooks');

/** Prepare every module loaded from now on, until the runtime deactivates. */
export function installLoadHooks(rt: Runtime): void {
  const mod = require('module');
  if (typeof mod.registerHooks !== 'function') {
    installCjsHook(rt);
    installEsmHook(rt);
    return;
  }
  const g = globalThis as any;
  if (g[HOOKS]) return;
  // load the preparer before hooking, so that it is never prepared itself
  const { prepareForLoad, prepareModuleForLoad } = require('../instrument/transform') as typeof import('../instrument/transform');
  const own = ownCodeDirs();
  const handle = mod.registerHooks({
    load(url: string, context: unknown, nextLoad: (url: string, context: unknown) => { format?: string; source?: unknown }) {
      const r = nextLoad(url, context);
      // require() of a .js file whose package has no "type" answers format undefined: CommonJS
      if (!rt.active || r.source == null || (r.format !== 'commonjs' && r.format !== 'module' && r.format !== undefined) || !url.startsWith('file:')) return r;
      let filename: string;
      try { filename = fileURLToPath(url); } catch { return r; }
      if (isOwnCode(filename, own)) return r;
      try {
        const source = typeof r.source === 'string' ? r.source : Buffer.from(r.source as Uint8Array).toString('utf8');
        let code: string;
        if (r.format === 'module') {
          const no = rt.allocScript();
          const prepared = prepareModuleForLoad(source, no, url, { filename, cwd: rt.cwd });
          rt.disguise.add(no, url, prepared.layout);
          code = prepared.code;
        } else code = prepareModule(rt, prepareForLoad, source, filename);
        return { ...r, source: code };
      } catch (e) {
        rt.unprepared.push({ file: filename, reason: String((e as Error)?.message ?? e) });
        return r;
      }
    },
  });
  Object.defineProperty(g, HOOKS, { value: handle, configurable: true, enumerable: false });
  rt.onDeactivate.push(() => {
    try { handle?.deregister?.(); } catch { /* already gone */ }
    delete g[HOOKS];
  });
}

const MARK = Symbol.for('paranode.cjsHook');

/** ES modules on Node without registerHooks: a load hook in Node's loader thread, switched by a shared flag. */
function installEsmHook(rt: Runtime): void {
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

/** CommonJS on Node without registerHooks. */
function installCjsHook(rt: Runtime): void {
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
  rt.registerScript(no, rt.moduleName(filename), prepared.analysis, undefined, filename, 'load', prepared.unslotted.map((u) => [u.fn, u.point]), prepared.layout);
  return prepared.code;
}
