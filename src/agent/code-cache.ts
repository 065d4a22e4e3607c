// V8's code for what the dormant agent loads, kept on disk by Node's compile
// cache (module.enableCompileCache, Node 22.8+) in paranode's owner-only cache
// directory. The prepared text of a large program is about twice its original
// length, and compiling it was most of a warm start (section 29 of
// docs/BENCHMARKS.md: typescript.js 767 ms against 310 plain); with V8's code
// cached too a warm start skips that compile, as the prepared-code cache skips
// the rewrite. Loaded first by the agent's entry, so its own modules are cached.
//
// Left alone where the program or its environment decided: a compile cache on
// already (NODE_COMPILE_CACHE: theirs serves), NODE_DISABLE_COMPILE_CACHE (Node
// refuses), and NODE_V8_COVERAGE (V8's coverage is less precise over cached
// code, a caveat Node documents); PARANODE_CODE_CACHE=off (or PARANODE_CACHE=off)
// keeps it off. What the program can see, a trade made for start-up: module.getCompileCacheDir()
// names the directory, and its own later enableCompileCache() answers ALREADY_ENABLED.
import * as path from 'path';
import { isOff, openCacheDir } from './cache-dir';

export function enableCodeCache(env: NodeJS.ProcessEnv = process.env): string | null {
  const mod = require('module') as { enableCompileCache?: (dir: string) => { status: number; directory?: string }; getCompileCacheDir?: () => string | undefined; constants?: { compileCacheStatus?: { ENABLED: number } } };
  if (typeof mod.enableCompileCache !== 'function' || mod.getCompileCacheDir?.() !== undefined) return null;
  if (env.NODE_V8_COVERAGE || env.NODE_DISABLE_COMPILE_CACHE || isOff(env.PARANODE_CODE_CACHE)) return null;
  const dir = openCacheDir(env);
  if (!dir) return null;
  try {
    const r = mod.enableCompileCache(path.join(dir, 'v8'));
    return r.status === mod.constants?.compileCacheStatus?.ENABLED ? r.directory ?? null : null;
  } catch {
    return null; // a quiet optimization: never the program's problem
  }
}
