// ES module load hook (module.register). Runs in Node's loader thread: it only
// rewrites source text; the module registers itself with its thread's runtime
// from its preamble when it runs.
import { fileURLToPath } from 'url';

interface HookData { active: Int32Array; own: string[] }

let data: HookData | null = null;
// script numbers of ES modules: a range of their own, apart from the runtime's
let next = 1_000_000 + Math.floor(Math.random() * 1000) * 10_000;

export const MARK = `Symbol.for('paranode.runtime')]?.registerModule(`;

export function initialize(d: HookData): void {
  data = d;
  (globalThis as any)[Symbol.for('paranode.loaderThread')] = true;
}

export async function load(url: string, context: unknown, nextLoad: (url: string, context: unknown) => Promise<any>): Promise<any> {
  const r = await nextLoad(url, context);
  if (!data || Atomics.load(data.active, 0) !== 1 || r.format !== 'module' || !url.startsWith('file:') || r.source == null) return r;
  const filename = fileURLToPath(url);
  if (data.own.some((d) => filename.startsWith(d))) return r;
  try {
    const { prepareModuleForLoad } = require('../instrument/transform') as typeof import('../instrument/transform');
    const source = typeof r.source === 'string' ? r.source : Buffer.from(r.source).toString('utf8');
    if (source.includes(MARK)) return r; // prepared already (by another hook in the chain)
    return { ...r, source: prepareModuleForLoad(source, next++, url, { filename, cwd: process.cwd() }).code };
  } catch {
    return r; // left unprepared: its functions are reached by LiveEdit instead
  }
}
