// One run of one test: a fresh vm context (a realm with a test262 $262), the
// harness files, then the test as a script or as a module graph, in one
// variant (original text, or prepared by paranode). Decides pass or fail by
// the test's metadata: negative phase and type, async completion via $DONE.
import * as fs from 'fs';
import * as path from 'path';
import { pathToFileURL } from 'url';
import * as vm from 'vm';
import type { TestMeta } from './metadata';
import { VariantHost, type PreparedTemplate, type Variant } from './prepare';

export type Mode = 'sloppy' | 'strict' | 'module' | 'raw';
/** where a run failed: compiling, linking, running, waiting for $DONE, or nothing thrown where an error was expected */
export type Phase = 'parse' | 'resolution' | 'runtime' | 'async' | 'timeout' | 'no-error' | 'harness' | 'crash';

export interface RunOutcome {
  ok: boolean;
  phase?: Phase;
  error?: string;
  /** the code around the error (prepared text in a rewritten variant) */
  site?: string;
  /** slots-on: handler runs counted by the probes */
  counts?: Record<string, number>;
  /** scripts paranode's parser rejected though V8 compiles them */
  rejected?: { file: string; reason: string }[];
}

export interface RunInput {
  file: string;
  rel: string;
  source: string;
  meta: TestMeta;
  mode: Mode;
  variant: Variant;
  harnessDir: string;
  asyncTimeoutMs: number;
}

export function modesOf(meta: TestMeta): Mode[] {
  const f = new Set(meta.flags);
  if (f.has('module')) return ['module'];
  if (f.has('raw')) return ['raw'];
  if (f.has('onlyStrict')) return ['strict'];
  if (f.has('noStrict')) return ['sloppy'];
  return ['sloppy', 'strict'];
}

const harnessText = new Map<string, string>();
function harnessSource(dir: string, name: string): string {
  const key = path.join(dir, name);
  let s = harnessText.get(key);
  if (s === undefined) {
    if (!fs.existsSync(key)) throw new Error(`harness file ${name} not found in ${dir}`);
    harnessText.set(key, (s = fs.readFileSync(key, 'utf8')));
  }
  return s;
}
/** prepared harness files, per variant (same text each run, see PreparedTemplate) */
const harnessPrepared = new Map<string, PreparedTemplate>();

export function harnessFiles(meta: TestMeta): string[] {
  const f = new Set(meta.flags);
  if (f.has('raw')) return [];
  const files = ['assert.js', 'sta.js'];
  if (f.has('async')) files.push('doneprintHandle.js');
  for (const i of meta.includes) if (!files.includes(i)) files.push(i);
  return files;
}

/** "Name: message" of anything thrown, without running the program's code more than needed. */
export function describeThrown(e: unknown): { name: string; text: string } {
  try {
    if (e !== null && (typeof e === 'object' || typeof e === 'function')) {
      const ctor = (e as any).constructor;
      const name = typeof ctor?.name === 'string' && ctor.name ? ctor.name : String((e as any).name ?? 'Object');
      const msg = (e as any).message;
      return { name, text: `${name}: ${typeof msg === 'string' ? msg : String(msg)}` };
    }
    return { name: typeof e, text: `thrown ${typeof e}: ${String(e)}` };
  } catch {
    return { name: 'unknown', text: 'thrown value that cannot be described' };
  }
}

class Failure extends Error {
  constructor(readonly phase: Phase, readonly thrown: unknown) { super(String(phase)); }
}

export class TestRun {
  private readonly host: VariantHost | null;
  private readonly rejected: { file: string; reason: string }[] = [];
  private readonly prints: string[] = [];
  private asyncSettle: ((msg: string) => void) | null = null;
  /** compiled text by filename, to show the site of an error */
  private readonly codes = new Map<string, string>();
  private readonly modules = new Map<string, vm.Module>();
  /** the evaluation of each module this run started (the test's, and those import() reached first) */
  private readonly evaluations = new Map<vm.Module, Promise<unknown>>();
  private main: vm.Module | null = null;
  /** what import() of a module waits for */
  private readonly loading = new Map<vm.Module, Promise<void>>();
  private readonly testDir: string;

  constructor(private readonly inp: RunInput) {
    this.host = inp.variant === 'original' ? null : VariantHost.of(inp.variant);
    this.testDir = path.dirname(inp.file);
  }

  async run(): Promise<RunOutcome> {
    const before = this.inp.variant === 'slots-on' ? this.host!.counts() : null;
    const out = await this.execute();
    if (this.rejected.length) out.rejected = this.rejected;
    if (before) {
      const after = this.host!.counts();
      out.counts = {};
      for (const [k, v] of Object.entries(after)) out.counts[k] = v - (before[k] ?? 0);
    }
    return out;
  }

  private async execute(): Promise<RunOutcome> {
    const { meta, mode } = this.inp;
    const neg = meta.negative;
    const isAsync = meta.flags.includes('async');
    let donePromise: Promise<string> | null = null;
    if (isAsync) donePromise = new Promise<string>((resolve) => { this.asyncSettle = resolve; });
    const g = this.newRealm();
    try {
      for (const h of harnessFiles(meta)) {
        try {
          this.runScript(g, harnessSource(this.inp.harnessDir, h), path.join(this.inp.harnessDir, h), `harness/${h}`, true);
        } catch (e) {
          throw new Failure('harness', e);
        }
      }
      if (mode === 'module') await this.runModuleTest(g);
      else {
        const src = mode === 'strict' ? `"use strict";\n${this.inp.source}` : this.inp.source;
        this.runScript(g, src, this.inp.file, this.inp.rel, false);
      }
    } catch (e) {
      const f = e instanceof Failure ? e : new Failure('runtime', e);
      const d = describeThrown(f.thrown);
      if (neg && f.phase === neg.phase && d.name === neg.type) return { ok: true };
      return { ok: false, phase: f.phase, error: d.text, site: this.siteOf(f.thrown) };
    }
    if (neg) return { ok: false, phase: 'no-error', error: `expected ${neg.type} at ${neg.phase} phase, nothing thrown` };
    if (donePromise) {
      let timer: NodeJS.Timeout | undefined;
      const msg = await Promise.race([donePromise, new Promise<string>((r) => { timer = setTimeout(() => r('timeout'), this.inp.asyncTimeoutMs); })]);
      clearTimeout(timer);
      if (msg === 'timeout') return { ok: false, phase: 'timeout', error: `$DONE not called within ${this.inp.asyncTimeoutMs} ms` };
      if (msg !== 'Test262:AsyncTestComplete') return { ok: false, phase: 'async', error: msg.replace(/^Test262:AsyncTestFailure:/, '') };
    }
    return { ok: true };
  }

  /** A new realm: the test's, or one made by $262.createRealm(). */
  private newRealm(): any {
    const g: any = vm.createContext(vm.constants.DONT_CONTEXTIFY, {
      importModuleDynamically: ((spec: string, ref: unknown, attrs: Record<string, string>) => this.dynamicImport(g, spec, ref, attrs)) as any,
    });
    this.host?.equip(g);
    const print = (...args: unknown[]): void => {
      const msg = args.map(String).join(' ');
      this.prints.push(msg);
      if (this.asyncSettle && msg.startsWith('Test262:Async')) { const s = this.asyncSettle; this.asyncSettle = null; s(msg); }
    };
    const $262: any = vm.runInContext('({})', g);
    Object.assign($262, {
      global: g,
      createRealm: () => this.newRealm().$262,
      evalScript: (src: string) => {
        let script: vm.Script;
        try {
          script = new vm.Script(src, { filename: 'evalScript', importModuleDynamically: this.importer(g, src) });
        } catch (e) {
          throw new g.SyntaxError(describeThrown(e).text.replace(/^SyntaxError: /, ''));
        }
        return script.runInContext(g);
      },
      detachArrayBuffer: (buf: ArrayBuffer) => { structuredClone(buf, { transfer: [buf] }); return null; },
      gc: () => (globalThis as any).gc?.(),
      agent: {},
    });
    g.print = print;
    g.$262 = $262;
    return g;
  }

  /**
   * The import() callback of a script or module, only for text that has
   * `import` in it: a vm.Script compiled with one keeps its realm alive for the
   * rest of the process (measured: 166 KB per script on Node 24).
   */
  private importer(g: any, text: string): any {
    if (!text.includes('import')) return undefined;
    return (spec: string, ref: unknown, attrs: Record<string, string>) => this.dynamicImport(g, spec, ref, attrs);
  }

  /** Compile and run a classic script (prepared first in a rewritten variant); compile errors are 'parse' failures. */
  private runScript(g: any, source: string, filename: string, name: string, harness: boolean): unknown {
    let code = source;
    if (this.host) {
      try {
        code = this.host.prepareScript(source, name, g, harness ? harnessPrepared : undefined);
      } catch (e) {
        if (compilesAsScript(source)) this.rejected.push({ file: name, reason: describeThrown(e).text });
      }
    }
    this.codes.set(filename, code);
    let script: vm.Script;
    try {
      script = new vm.Script(code, { filename, importModuleDynamically: this.importer(g, code) });
    } catch (e) {
      throw new Failure('parse', e);
    }
    return script.runInContext(g);
  }

  private async runModuleTest(g: any): Promise<void> {
    let m: vm.Module;
    try {
      m = this.moduleFor(g, this.inp.file, undefined, this.inp.source);
    } catch (e) {
      throw new Failure('parse', e);
    }
    try {
      await m.link(this.linker(g));
    } catch (e) {
      throw new Failure('resolution', e);
    }
    this.main = m;
    try {
      await this.evaluate(m);
    } catch (e) {
      throw new Failure('runtime', e);
    }
  }

  /** Evaluate once; import() of a module already evaluating waits for that evaluation. */
  private evaluate(m: vm.Module): Promise<unknown> {
    let p = this.evaluations.get(m);
    if (!p) this.evaluations.set(m, (p = m.evaluate()));
    return p;
  }

  private linker(g: any): vm.ModuleLinker {
    return (specifier, referencing, extra) =>
      this.moduleFor(g, path.resolve(path.dirname(referencing.identifier), specifier), (extra?.attributes ?? extra?.assert) as Record<string, string> | undefined);
  }

  /** The module of a file in this run (one instance per file and type, so cycles close). */
  private moduleFor(g: any, file: string, attrs?: Record<string, string>, text?: string): vm.Module {
    const json = attrs?.type === 'json';
    const key = `${json ? 'json' : 'js'}:${file}`;
    const known = this.modules.get(key);
    if (known) return known;
    if (!fs.existsSync(file)) throw new g.Error(`Cannot find module '${file}'`);
    const source = text ?? fs.readFileSync(file, 'utf8');
    let m: vm.Module;
    if (json) {
      m = new vm.SyntheticModule(['default'], function (this: vm.SyntheticModule) { this.setExport('default', g.JSON.parse(source)); }, { context: g, identifier: file });
    } else {
      let code = source;
      const rel = path.relative(path.dirname(path.dirname(this.testDir)), file);
      if (this.host) {
        try {
          code = this.host.prepareModule(source, rel);
        } catch (e) {
          if (compilesAsModule(source)) this.rejected.push({ file: rel, reason: describeThrown(e).text });
        }
      }
      this.codes.set(file, code);
      m = new vm.SourceTextModule(code, {
        identifier: file,
        context: g,
        importModuleDynamically: this.importer(g, code),
        initializeImportMeta: (meta: any) => { meta.url = pathToFileURL(file).href; },
      });
    }
    this.modules.set(key, m);
    return m;
  }

  private async dynamicImport(g: any, specifier: string, ref: unknown, attrs: Record<string, string>): Promise<vm.Module> {
    const base = ref instanceof vm.Module && path.isAbsolute(ref.identifier) ? path.dirname(ref.identifier) : this.testDir;
    const m = this.moduleFor(g, path.resolve(base, String(specifier)), attrs);
    // called from inside an evaluate() that has not returned yet: let it return (and be recorded) first
    await null;
    let ready = this.loading.get(m);
    if (!ready) {
      // one link and evaluation per module, however many import() calls wait for it
      ready = (async () => {
        if (m.status === 'unlinked') await m.link(this.linker(g));
        if (this.evaluations.has(m) || m.status === 'linked') await this.evaluate(m);
        else if (m.status === 'errored') throw m.error;
        // evaluating as a dependency of the test's module: ready when that evaluation is
        else if (m.status === 'evaluating' && this.main) await this.evaluate(this.main);
      })();
      this.loading.set(m, ready);
    }
    await ready;
    return m;
  }

  /** The text around where an error was raised, from the V8 message (compile errors) or the top stack frame. */
  private siteOf(e: unknown): string | undefined {
    let stack: string;
    try { stack = String((e as any)?.stack ?? ''); } catch { return undefined; }
    let file: string | undefined;
    let line = 0;
    let col = -1;
    const arrow = /^(.+):(\d+)\n(.*)\n(\s*)\^/.exec(stack);
    if (arrow) { file = arrow[1]; line = Number(arrow[2]); col = arrow[4].length; }
    else {
      const fr = /\(?([^()\s]+):(\d+):(\d+)\)?/.exec(stack.split('\n').slice(1).join('\n'));
      if (fr) { file = fr[1]; line = Number(fr[2]); col = Number(fr[3]) - 1; }
    }
    if (!file) return undefined;
    const code = this.codes.get(file);
    if (code === undefined) return undefined;
    const l = code.split(/\r\n|[\n\r\u2028\u2029]/)[line - 1];
    if (l === undefined) return undefined;
    const at = Math.max(0, col);
    return `${path.basename(file)}:${line}: ${l.slice(Math.max(0, at - 70), at)}⟪HERE⟫${l.slice(at, at + 50)}`;
  }
}

function compilesAsScript(source: string): boolean {
  try { new vm.Script(source); return true; } catch { return false; }
}

function compilesAsModule(source: string): boolean {
  try { new vm.SourceTextModule(source); return true; } catch { return false; }
}
