// Load-time preparation: every module loaded after this is installed gets
// slots at all its points before V8 ever sees it (no LiveEdit, no pause).
// Where Node has module.registerHooks (22.15+, 23.5+) one synchronous load hook
// in the thread itself serves require, import and require(esm): nothing is
// patched, no frame of ours is on the program's stack while a module loads, and
// no warning is printed (module.register is deprecated at run time in Node 26).
// Older Node: a patched Module.prototype._compile and a module.register hook.
import * as fs from 'fs';
import * as path from 'path';
import { fileURLToPath } from 'url';
import { asOwnWork } from './own-work';
import { isOwnCode, ownCodeDirs } from './own-code';
import { identityAtStart, preparingIdentity } from './preparing-code';
import type { PreparedScript } from '../instrument/transform';
import type { PreparedCache } from './prepared-cache';
import type { Runtime } from './runtime';
import { strippedFormat, stripTypes } from './typescript-strip';

const HOOKS = Symbol.for('paranode.loadHooks');

interface HookState { handle: { deregister?: () => void } | undefined; always: boolean }

/**
 * Prepare every module loaded from now on, until the runtime deactivates; with
 * `always` (the dormant agent) also while it is off, and for the thread's
 * whole life (slots off is the dormant state, and a later attach needs them).
 */
export function installLoadHooks(rt: Runtime, opts: { always?: boolean } = {}): void {
  const mod = require('module');
  const g = globalThis as any;
  if (typeof mod.registerHooks !== 'function') {
    if (opts.always) throw new Error(`this Node.js (${process.version}) has no module.registerHooks: the dormant agent needs 22.15 or later`);
    installCjsHook(rt);
    installEsmHook(rt);
    return;
  }
  const existing = g[HOOKS] as HookState | undefined;
  if (existing) {
    if (opts.always) existing.always = true;
    return;
  }
  // The preparer (a parser and the rewrite, ~15 ms to load) is loaded at the first script
  // that needs preparing: a warm start served from the cache loads it only if an entry has to
  // be made again. While it loads, the hook passes every module through (none of it is ever
  // prepared, however its directories are named); what its loading added to require.cache
  // leaves it, as the agent's other modules did at start (forgetOwnModules), and nothing the
  // program had loaded before. Its files must be those of this process's start (an install in
  // place since would pair a new preparer with this runtime): else nothing more is prepared.
  const own = ownCodeDirs();
  const identity = identityAtStart();
  let transform: typeof import('../instrument/transform') | undefined;
  let loadingPreparer = false;
  const preparer = () => {
    if (!transform) {
      if (preparingIdentity() !== identity) throw new Error('paranode\'s preparing code changed on disk since this process started');
      const before = new Set(Object.keys(require.cache));
      loadingPreparer = true;
      try {
        transform = require('../instrument/transform') as typeof import('../instrument/transform');
      } finally {
        loadingPreparer = false;
        for (const f of Object.keys(require.cache)) if (!before.has(f)) delete require.cache[f];
      }
    }
    return transform;
  };
  // the start-up cache (prepared-cache.ts) serves every thread that prepares at load: the
  // dormant agent's, a launched program's (`paranode run`), and what loads after an attach
  const cache = (require('./prepared-cache') as typeof import('./prepared-cache')).PreparedCache.open();
  const state: HookState = { handle: undefined, always: !!opts.always };
  state.handle = mod.registerHooks({
    load(url: string, context: unknown, nextLoad: (url: string, context: unknown) => { format?: string; source?: unknown }) {
      const r = nextLoad(url, context);
      if (loadingPreparer) return r;
      // what follows is paranode's: its file-system calls are not the program's
      return asOwnWork(() => prepareLoaded(url, r));
    },
  });
  /** The load hook's own part: the loaded module prepared (from the start-up cache where it can be). */
  function prepareLoaded(url: string, r: { format?: string; source?: unknown }): { format?: string; source?: unknown } {
    // TypeScript that Node would strip after the hooks: stripped here, then prepared as JavaScript
    const stripped = strippedFormat(r.format);
    // require() of a .js file whose package has no "type" answers format undefined: CommonJS
    if ((!rt.active && !state.always) || r.source == null || (r.format !== 'commonjs' && r.format !== 'module' && r.format !== undefined && !stripped) || !url.startsWith('file:')) return r;
    let filename: string;
    try { filename = fileURLToPath(url); } catch { return r; }
    if (isOwnCode(filename, own)) return r;
    // Node refuses to strip types under node_modules: its error, on its text
    if (stripped && filename.includes(`${path.sep}node_modules${path.sep}`)) return r;
    try {
      // (a view: a copy would take the program's Buffer pool, see unpooled.ts)
      const src = r.source as ArrayBufferView | ArrayBuffer;
      const text = typeof r.source === 'string' ? r.source
        : (ArrayBuffer.isView(src) ? Buffer.from(src.buffer, src.byteOffset, src.byteLength) : Buffer.from(src)).toString('utf8');
      const source = stripped ? stripTypes(text) : text;
      const format = stripped ?? r.format;
      let code: string;
      if (format === 'module') {
        const no = rt.allocScript();
        const naming = { filename, cwd: rt.cwd };
        // this hook runs in the module's thread: the runtime is handed its analysis, not the module's text
        const prep = (n: number, src: string) => preparer().prepareModuleForLoad(src, n, url, naming, false);
        const prepared = cache ? cache.prepared({ kind: 'module', source, no, filename, cwd: rt.cwd, url, reread: rereader(filename, !!stripped) }, prep) : prep(no, source);
        rt.disguise.add(no, url, prepared.layout);
        if (functionCountOf(prepared) > 0) rt.expectModule(no, prepared.analysis, prepared.unslotted.map((u) => [u.fn, u.point]));
        code = prepared.code;
      } else code = prepareModule(rt, (...a) => preparer().prepareForLoad(...a), source, filename, cache, rereader(filename, !!stripped));
      // still TypeScript to Node: it strips it (nothing left to strip) and names it as it names TypeScript
      return { ...r, source: code };
    } catch (e) {
      rt.leftUnprepared(filename, e);
      return r;
    }
  }
  Object.defineProperty(g, HOOKS, { value: state, configurable: true, enumerable: false });
  rt.onDeactivate.push(() => {
    if (state.always) return;
    try { state.handle?.deregister?.(); } catch { /* already gone */ }
    delete g[HOOKS];
  });
}

/** How many functions a prepared script has, without decoding a cache entry's analysis. */
const functionCountOf = (p: PreparedScript): number => p.functionCount ?? p.analysis.functions.length;

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
        code = asOwnWork(() => prepareModule(rt, prepareForLoad, content, filename));
      } catch (e) {
        rt.leftUnprepared(filename, e);
      }
    }
    return original.call(this, code, filename);
  };
  (patched as any)[MARK] = original;
  proto._compile = patched;
  rt.onDeactivate.push(() => { if (proto._compile === patched) proto._compile = original; });
}

/** The file's source read again as the hook had it (for the cache: see PrepareRequest's reread). */
const rereader = (filename: string, stripped: boolean) => (): string | null => {
  const text = fs.readFileSync(filename, 'utf8');
  return stripped ? stripTypes(text) : text;
};

function prepareModule(rt: Runtime, prepareForLoad: typeof import('../instrument/transform').prepareForLoad, content: string, filename: string,
  cache: PreparedCache | null = null, reread?: () => string | null): string {
  const no = rt.allocScript();
  const naming = { filename, cwd: rt.cwd };
  const prep = (n: number, src: string) => prepareForLoad(src, n, 'script', naming);
  const prepared = cache ? cache.prepared({ kind: 'script', source: content, no, filename, cwd: rt.cwd, reread }, prep) : prep(no, content);
  rt.defineGlobals(no, functionCountOf(prepared), true);
  rt.registerScript(no, rt.moduleName(filename), prepared.analysis, undefined, filename, 'load', prepared.unslotted.map((u) => [u.fn, u.point]), prepared.layout);
  return prepared.code;
}
