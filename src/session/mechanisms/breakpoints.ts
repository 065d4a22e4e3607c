// The breakpoint way in one thread: the points that have no slot (a script
// that was not LiveEdited, a point LiveEdit could not give a slot) are reached
// by conditional breakpoints at V8's break location for them; points sharing
// a location share one breakpoint. The locations and conditions themselves
// are worked out by instrument/breakpoint.ts.
import { describePoint } from '../../analysis/describe';
import { calleeName } from '../../analysis/point-select';
import type { FunctionInfo, ScriptAnalysis } from '../../analysis/functions';
import type { FallbackPoint } from '../../agent/runtime';
import { Cdp } from '../../inspector/cdp';
import { BreakLocation, breakCondition, conditionSource, lineStarts, pickBreakLocation, toLocation } from '../../instrument/breakpoint';
import { sampleKey } from '../series';
import { R } from '../target-runtime';

/** A script loaded in the thread, as the runtime numbers it (registered with it). */
export interface ScriptRef { scriptId: string; filename: string; module: string }

/** What placing breakpoints in a script needs. */
export interface FallbackScript {
  scriptId: string;
  /** the script's current text, and where an offset of the analysed text is in it */
  text: string;
  map: (pos: number) => number;
  starts?: number[];
  module: string;
  functions: FunctionInfo[];
}

interface BreakpointAt {
  id: string;
  scriptId: string;
  lineNumber: number;
  columnNumber: number;
  /** by "no:fn:slot": its condition and the probes that need it */
  parts: Map<string, { order: number; condition: string; probes: Set<number> }>;
}

export class ThreadBreakpoints {
  /** runtime script number -> what placing breakpoints in it needs */
  private readonly scripts = new Map<number, FallbackScript>();
  /** fallback breakpoints by "scriptId:line:column", and the location of each "no:fn:slot" placed */
  private readonly locations = new Map<string, BreakpointAt>();
  private readonly slotAt = new Map<string, string>();

  /**
   * @param maxBreakpoints points reached by breakpoints, at most
   * @param notes where to report what could not be done
   */
  constructor(private readonly cdp: Cdp, private readonly maxBreakpoints: number, private readonly notes: string[]) {}

  /** A script whose points without a slot may be reached by breakpoints (its runtime number `no`). */
  addScript(no: number, script: FallbackScript): void {
    this.scripts.set(no, script);
  }

  /** A script that will not be LiveEdited: register it with the runtime; its functions are reached by breakpoints. */
  async registerScript(sc: ScriptRef, source: string, analysis: ScriptAnalysis, why: string): Promise<void> {
    const no = await this.cdp.evaluate<number>(`${R}.allocScript()`);
    this.scripts.set(no, { scriptId: sc.scriptId, text: source, module: sc.module, functions: analysis.functions, map: (p) => p });
    await this.cdp.evaluate(`${R}.registerScript(${no}, ${JSON.stringify(sc.module)}, ${JSON.stringify(analysis)}, function(){}, ${JSON.stringify(sc.filename)}, 'breakpoint')`);
    this.notes.push(`${why}; its points are reached by breakpoints instead, each hit of which stops the thread briefly ` +
      `(a debugger evaluation, about 0.1-0.4 ms: see docs/BENCHMARKS.md), and a function holding one is not optimized while it does: ` +
      `its own code runs several times slower (4-30x measured; \`paranode calibrate\` measures it here)`);
  }

  /** A point for a report: "/Code/<module>/<function> <point>", or its script's number when the tool does not know it. */
  whereOf(fp: FallbackPoint): string {
    const sc = this.scripts.get(fp.no);
    const fn = sc?.functions[fp.fn];
    return fn ? `/Code/${fn.module ?? sc!.module}/${fn.name} ${describePoint(fn.points[fp.point])}` : fp.where ?? `script ${fp.no}`;
  }

  /** Set (or share) the breakpoint of one point for a probe; returns why not if it cannot be. */
  async place(probe: number, fp: FallbackPoint, usesReturn: boolean): Promise<string | null> {
    const key = `${fp.no}:${fp.fn}:${fp.slot}`;
    const at = this.slotAt.get(key);
    if (at) { this.locations.get(at)!.parts.get(key)!.probes.add(probe); return null; }
    const sc = this.scripts.get(fp.no);
    if (!sc) {
      return fp.where ? 'no slot here (a call in an optional chain, a throw\'s operand, code inside with) in a program prepared at load, whose debugger stays off'
        : 'no slot here and the script is not known to the tool';
    }
    const fn = sc.functions[fp.fn];
    const p = fn.points[fp.point];
    if (fp.slot % 2 === 1) return 'a breakpoint cannot run code after a call returns (postInsn)';
    if (this.slotAt.size >= this.maxBreakpoints) return `over the limit of ${this.maxBreakpoints} breakpoint points (maxBreakpoints)`;
    const starts = sc.starts ??= lineStarts(sc.text);
    const { locations } = await this.cdp.send('Debugger.getPossibleBreakpoints', {
      start: { scriptId: sc.scriptId, ...toLocation(starts, sc.map(fn.start)) },
      end: { scriptId: sc.scriptId, ...toLocation(starts, sc.map(fn.end)) },
      restrictToFunction: true,
    });
    const locs: BreakLocation[] = locations.map((l) => ({ ...l, offset: starts[l.lineNumber] + (l.columnNumber ?? 0), columnNumber: l.columnNumber ?? 0 }));
    const loc = pickBreakLocation(fn, p, locs, sc.map);
    if (typeof loc === 'string') return loc;
    // several points can share a location (an entry and the first call): one breakpoint runs them all, in point order
    const locKey = `${sc.scriptId}:${loc.lineNumber}:${loc.columnNumber}`;
    const bp = this.locations.get(locKey) ?? { id: '', scriptId: sc.scriptId, lineNumber: loc.lineNumber, columnNumber: loc.columnNumber, parts: new Map() };
    bp.parts.set(key, { order: fp.point, condition: breakCondition(fp.no, fn, p, fp.slot), probes: new Set([probe]) });
    this.locations.set(locKey, bp);
    this.slotAt.set(key, locKey);
    await this.setBreakpoint(bp);
    if (p.kind === 'exit' && usesReturn) this.notes.push(`/Code/${fn.module ?? sc.module}/${fn.name} ${describePoint(p)}: by breakpoint, $return reads undefined there`);
    return null;
  }

  /**
   * The functions holding a breakpoint now, as stack samples name them: V8
   * never optimizes them while it is set (priced as the cost class 'pinned').
   * V8's profiler gives the ticks of a function running the debugger's copy of
   * its bytecode to its caller (measured on Node 22, 24 and 26), so the
   * functions of its script that call it by name are in the set too: what is
   * counted with them is a high bound of the pinned time.
   */
  pinned(): Set<string> {
    const out = new Set<string>();
    const byScript = new Map<number, Set<string>>();
    for (const key of this.slotAt.keys()) {
      const [no, fn] = key.split(':').map(Number);
      const f = this.scripts.get(no)?.functions[fn];
      if (!f) continue;
      let names = byScript.get(no);
      if (!names) byScript.set(no, (names = new Set()));
      names.add(f.name.slice(f.name.lastIndexOf('.') + 1));
    }
    for (const [no, names] of byScript) {
      const sc = this.scripts.get(no)!;
      for (const f of sc.functions) {
        const own = f.name.slice(f.name.lastIndexOf('.') + 1);
        if (names.has(own) || f.points.some((p) => p.kind === 'call' && p.callee !== undefined && names.has(calleeName(p.callee) ?? ''))) {
          out.add(sampleKey(`${f.module ?? sc.module}/${f.name}`));
        }
      }
    }
    return out;
  }

  /** Take a probe's breakpoints out (those no other probe needs). */
  async remove(probe: number): Promise<void> {
    for (const bp of this.locations.values()) {
      let changed = false;
      for (const [key, part] of bp.parts) {
        if (!part.probes.delete(probe) || part.probes.size) continue;
        bp.parts.delete(key);
        this.slotAt.delete(key);
        changed = true;
      }
      if (changed) await this.setBreakpoint(bp);
    }
  }

  /** Every breakpoint out. */
  async restore(): Promise<void> {
    for (const bp of this.locations.values()) if (bp.id) await this.cdp.send('Debugger.removeBreakpoint', { breakpointId: bp.id });
    this.locations.clear();
    this.slotAt.clear();
  }

  /** (Re)set the one breakpoint of a location with the conditions of all its parts. */
  private async setBreakpoint(bp: BreakpointAt): Promise<void> {
    if (bp.id) await this.cdp.send('Debugger.removeBreakpoint', { breakpointId: bp.id }).catch(() => undefined);
    bp.id = '';
    if (!bp.parts.size) return;
    const parts = [...bp.parts.values()].sort((a, b) => a.order - b.order).map((x) => x.condition);
    const r = await this.cdp.send('Debugger.setBreakpoint', {
      location: { scriptId: bp.scriptId, lineNumber: bp.lineNumber, columnNumber: bp.columnNumber },
      condition: conditionSource(parts),
    });
    bp.id = r.breakpointId;
  }
}
