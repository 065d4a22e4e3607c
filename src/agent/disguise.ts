// Keeps the rewrite out of the program's sight: stack frames of prepared
// scripts show the columns of the original text, and Function.prototype.toString
// of a prepared function gives its original text (so two functions written
// alike still print alike, and code rebuilt from a function's text runs
// without our globals). Both are hooks on what V8 hands the program: the
// CallSite objects every stack trace is formatted from (Node formats frames
// with their toString) and the toString function itself, answered by a Proxy
// whose own text is the native one.
import type { ScriptLayout } from '../instrument/layout';

const GUARD = /\$pn(\d+)_(\d+)/;

interface CallSite { getFileName(): string | null | undefined; getLineNumber(): number | null; getColumnNumber(): number | null }

export class Disguise {
  private readonly byFile = new Map<string, ScriptLayout>();
  private readonly byNo = new Map<number, ScriptLayout>();
  private installed = false;
  /** functions of ours standing in for the program's: their text is the one they replace */
  private readonly masks = new WeakMap<object, object>();

  /** A prepared script, known by the file name its frames carry and by its number (in its guards). */
  add(no: number, file: string, layout: ScriptLayout): void {
    this.byNo.set(no, layout);
    this.byFile.set(file, layout);
    if (!this.installed) {
      this.installed = true;
      try { this.patchStackFormat(); } catch { /* frames keep prepared columns */ }
      try { this.patchToString(); } catch { /* functions print prepared text */ }
    }
  }

  /** 1-based column of the original text for a 1-based column of the prepared one. */
  column(file: string | null | undefined, line: number | null, col: number | null): number | null {
    const layout = file ? this.byFile.get(file) : undefined;
    const entries = layout && line != null ? layout.lines[line] : undefined;
    if (!entries || col == null) return col;
    const c = col - 1;
    let shift = 0;
    for (let i = 0; i < entries.length; i += 2) {
      const at = entries[i], len = entries[i + 1];
      if (at + len <= c) shift += len;
      else if (at <= c) return at - shift + 1; // inside our text: where it was inserted
      else break;
    }
    return c - shift + 1;
  }

  /** The original text of a prepared function's text, or null when it is not one of ours. */
  original(text: string): string | null {
    const m = GUARD.exec(text);
    if (!m) return null;
    const layout = this.byNo.get(Number(m[1]));
    if (!layout) return null;
    const fn = Number(m[2]);
    const t = layout.texts;
    for (let i = 0; i < t.length; i += 4) {
      if (t[i + 1] !== text.length || t[i + 3] !== fn) continue;
      const start = t[i];
      let out = '';
      let from = 0;
      const at = layout.at;
      // the first insertion at or after the function's start (pairs sorted by position): a
      // script's earlier insertions are not walked at each function printed
      let lo = 0, hi = at.length >> 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (at[2 * mid] < start) lo = mid + 1; else hi = mid;
      }
      for (let k = 2 * lo; k < at.length; k += 2) {
        const p = at[k] - start;
        if (p >= text.length) break;
        out += text.slice(from, p);
        from = p + at[k + 1];
      }
      out += text.slice(from);
      if (out.length === t[i + 2]) return out;
    }
    return null;
  }

  /**
   * Node's default Error.prepareStackTrace (ErrorPrepareStackTrace, a function a
   * program can see and replace) formats every stack; ours in its place calls it
   * and gives frames of prepared scripts their original columns. A program that
   * put its own formatter there keeps it (its CallSites report prepared columns:
   * V8's CallSite methods cannot be replaced).
   */
  private patchStackFormat(): void {
    const E = Error as unknown as { prepareStackTrace?: unknown };
    const node = E.prepareStackTrace as ((this: unknown, error: unknown, trace: CallSite[]) => unknown) | undefined;
    if (typeof node !== 'function' || node.name !== 'ErrorPrepareStackTrace') return;
    const frames = (text: string, trace: CallSite[]) => this.frames(text, trace);
    const ours = { ErrorPrepareStackTrace(this: unknown, error: unknown, trace: CallSite[]) {
      const text = node.call(this, error, trace);
      try { return typeof text === 'string' ? frames(text, trace) : text; } catch { return text; }
    } }.ErrorPrepareStackTrace;
    this.masks.set(ours, node);
    E.prepareStackTrace = ours;
  }

  /** The stack text with each frame of a prepared script at its original column. */
  private frames(text: string, trace: CallSite[]): string {
    if (!trace.some((cs) => this.byFile.has(cs.getFileName() as string))) return text;
    let end = text.length;
    for (let i = trace.length - 1; i >= 0; i--) {
      const cs = trace[i];
      const s = String(cs);
      const k = text.lastIndexOf(s, end);
      if (k < 0) return text;
      end = k;
      const file = cs.getFileName();
      if (!file || !this.byFile.has(file)) continue;
      const line = cs.getLineNumber(), col = cs.getColumnNumber();
      const mapped = this.column(file, line, col);
      if (mapped === col) continue;
      const tail = `:${line}:${col}`;
      const t = s.lastIndexOf(tail);
      if (t < 0) continue;
      text = text.slice(0, k) + s.slice(0, t) + `:${line}:${mapped}` + s.slice(t + tail.length) + text.slice(k + s.length);
    }
    return text;
  }

  /**
   * Another realm (a vm context) that runs prepared code: its own
   * Function.prototype.toString gives the original text too.
   */
  coverRealm(global: { Function: { prototype: object } }): void {
    try { this.patchToString(global.Function.prototype); } catch { /* prepared text shows there */ }
  }

  private readonly covered = new WeakSet<object>();

  private patchToString(fnProto: object = Function.prototype): void {
    if (this.covered.has(fnProto)) return;
    this.covered.add(fnProto);
    const proto = fnProto as Record<string, unknown>;
    const d = Object.getOwnPropertyDescriptor(proto, 'toString');
    if (!d || typeof d.value !== 'function') return;
    const target = d.value as (this: unknown) => string;
    const masks = this.masks;
    const original = (text: string) => this.original(text);
    const proxy: object = new Proxy(target, {
      apply(t, thisArg, args) {
        // its own text is the native function's, a stand-in's that of what it replaces
        if (thisArg === proxy) return Reflect.apply(t, t, args);
        const masked = typeof thisArg === 'function' ? masks.get(thisArg) : undefined;
        if (masked) return Reflect.apply(t, masked, args);
        const s = Reflect.apply(t, thisArg, args) as string;
        if (typeof s !== 'string' || !s.includes('$pn')) return s;
        try { return original(s) ?? s; } catch { return s; }
      },
    });
    Object.defineProperty(proto, 'toString', { ...d, value: proxy });
  }
}
