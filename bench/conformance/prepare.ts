// The two rewritten variants, through paranode's own code: scripts prepared by
// prepareForLoad (as the CommonJS load hook does), modules by
// prepareModuleForLoad (as the ESM load hook does), each registered with a
// real Runtime. Variant "slots-off" registers with no probe (every guard 0);
// variant "slots-on" first places standing probes on every point of every
// function (/Code/**), compiled by the real probe parser and snippet compiler,
// so that every slot's handler really runs and counts.
import { install, Runtime, RUNTIME_KEY, type ProbeSpec } from '../../src/agent/runtime';
import { codeGlobToRegex, parseProbe, pointClass } from '../../src/instrument/probe';
import { compileSnippet } from '../../src/instrument/snippet';
import { prepareForLoad, prepareModuleForLoad, type PreparedScript } from '../../src/instrument/transform';

export type Variant = 'original' | 'slots-off' | 'slots-on';
export const VARIANTS: Variant[] = ['original', 'slots-off', 'slots-on'];

/** a counter at every kind of point; two probes also read $arg and $return, as predicates do */
export const PROBES = [
  '/Code/**.entry: n_entry++',
  '/Code/**.entry: if ($arg[0] == 1) n_arg1++',
  '/Code/**.exit: n_exit++',
  '/Code/**.exit append: if ($return === 0) n_ret0++',
  '/Code/**.calls preInsn: n_call_pre++',
  '/Code/**.calls postInsn: n_call_post++',
  '/Code/**.await: n_await++',
  '/Code/**.resume: n_resume++',
  '/Code/**.loops: n_loop++',
  '/Code/**.loops postInsn: n_loop_exit++',
  '/Code/**.trips: n_trip++',
];

let specs: ProbeSpec[] | null = null;

/** The probe specs, built as the session's toSpec builds them (api/session.ts). */
export function probeSpecs(): ProbeSpec[] {
  if (specs) return specs;
  const kinds = new Map<string, 'wall' | 'cpu'>();
  specs = PROBES.map((text, i) => {
    const req = parseProbe(text);
    const spec: ProbeSpec = {
      id: i + 1, match: codeGlobToRegex(req.resource), point: req.point, where: req.where, order: req.order,
      snippet: compileSnippet(req.snippet, { point: pointClass(req.point), timerKinds: kinds }),
    };
    if (!/[*?]/.test(req.resource)) spec.exact = req.resource.slice('/Code/'.length);
    return spec;
  });
  return specs;
}

let helpers: { P: unknown; C: unknown } | null = null;

/** The slots' pass-through helpers, as install() defines them on a thread's global. */
function slotHelpers(): { P: unknown; C: unknown } {
  if (!helpers) {
    install();
    const g = globalThis as any;
    helpers = { P: g.$pnP, C: g.$pnC };
  }
  return helpers;
}

/**
 * What the runs of a variant share in a worker process: one Runtime, as a
 * thread has one, holding the scripts of the runs it served. A new Runtime
 * per run cost more than the run itself (its counter and timer arrays are
 * 5 MB); a fresh one every RUNS_PER_RUNTIME runs keeps what one Runtime holds
 * (every point of every script registered) from growing with the run.
 */
const RUNS_PER_RUNTIME = 250;

export class VariantHost {
  readonly rt: Runtime;
  private runs = 0;
  private static readonly hosts = new Map<Variant, VariantHost>();

  static of(variant: Exclude<Variant, 'original'>): VariantHost {
    let h = VariantHost.hosts.get(variant);
    if (!h || h.runs >= RUNS_PER_RUNTIME) VariantHost.hosts.set(variant, (h = new VariantHost(variant)));
    h.runs++;
    return h;
  }

  private constructor(readonly variant: Exclude<Variant, 'original'>) {
    this.rt = new Runtime();
    if (variant === 'slots-on') for (const s of probeSpecs()) this.rt.addProbe(s);
  }

  /** Give a realm's global what install() gives a thread's: $pnP, $pnC, the runtime. */
  equip(g: any): void {
    const { P, C } = slotHelpers();
    Object.defineProperty(g, '$pnP', { value: P, writable: false, configurable: false, enumerable: false });
    Object.defineProperty(g, '$pnC', { value: C, writable: false, configurable: false, enumerable: false });
    Object.defineProperty(g, RUNTIME_KEY, { value: this.rt, enumerable: false, configurable: true, writable: false });
    // as the runtime does for its own realm: functions print their original text
    this.rt.disguise.coverRealm(g);
  }

  /**
   * Prepare a classic script for realm global `g` as the CommonJS hook does:
   * allocate a number, prepare, define the guards (0), register with a
   * setGuard that switches the guards of that realm. Throws what the parser
   * throws (the caller runs the original then).
   */
  prepareScript(source: string, name: string, g: any, cache?: Map<string, PreparedTemplate>): string {
    const no = this.rt.allocScript();
    const p = cache ? fromTemplate(cache, source, name, no) : prepareForLoad(source, no, 'script');
    // (a template's layout is of the stand-in number's text: harness functions print prepared text)
    const layout = cache ? undefined : p.layout;
    for (let f = 0; f < p.analysis.functions.length; f++) {
      Object.defineProperty(g, `$pn${no}_${f}`, { value: 0, writable: true, configurable: true, enumerable: false });
    }
    // the runtime keeps the record: it must not keep the run's realm alive
    const realm = new WeakRef(g);
    this.rt.registerScript(no, name, p.analysis, (fn, v) => { const r = realm.deref(); if (r) setConstGlobal(r, `$pn${no}_${fn}`, v); }, name, 'load', p.unslotted.map((u) => [u.fn, u.point]), layout);
    return p.code;
  }

  /** Prepare an ES module as the ESM hook does; its preamble registers it with the realm's runtime when it runs. */
  prepareModule(source: string, url: string): string {
    const no = this.rt.allocScript();
    const p = prepareModuleForLoad(source, no, url);
    this.rt.disguise.add(no, url, p.layout);
    return p.code;
  }

  /** Counter totals of the probes so far (the runs' handler runs: a run's are the difference). */
  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, value] of this.rt.sample().counters) if (name.startsWith('n_')) out[name] = value;
    return out;
  }
}

/** the guard switch of runtime.ts (setConstGlobal), on a given realm's global */
function setConstGlobal(g: any, name: string, v: unknown): void {
  if (g[name] === v) return;
  delete g[name];
  Object.defineProperty(g, name, { value: v, writable: true, configurable: true, enumerable: false });
}

/**
 * Harness files are the same in every run: prepared once with a stand-in
 * script number, which is then replaced by the run's own (the number appears
 * in the text only as the guard names $pn<no>_<fn>).
 */
export interface PreparedTemplate { p: PreparedScript | null; error?: unknown }
const STANDIN = 987654321;

function fromTemplate(cache: Map<string, PreparedTemplate>, source: string, name: string, no: number): PreparedScript {
  let t = cache.get(name);
  if (!t) {
    try { t = { p: prepareForLoad(source, STANDIN, 'script') }; } catch (e) { t = { p: null, error: e }; }
    cache.set(name, t);
  }
  if (!t.p) throw t.error;
  return { ...t.p, code: t.p.code.split(`$pn${STANDIN}_`).join(`$pn${no}_`) };
}
