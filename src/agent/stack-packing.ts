// A thread's stack samples as the tool reads them, each string and each distinct stack sent
// once a session. V8's inspector copies a request's answer on the sampled thread outside the
// runtime's counted work, and a loaded server's windows repeat the same stacks of 30 frames
// named by their modules' paths: 7.5 of a 9.6-KB sample were stacks. Sent once, a window is a
// list of [stack, count] numbers. (Runs in the target: no regular expressions, see no-regexp.ts.)
import type { StackRecord } from './cpu-sampler';

/**
 * The stacks of one sample: `k` the strings first used in it, from index k[0] on; `r` the
 * stacks first seen in it, from index r[0] on, each a StackRecord without its count and with
 * numbers for its strings; `s` each of its stacks' index and count. An index of 0 in k[0]
 * starts the tables anew (see MAX_PACKED).
 */
export interface PackedStacks { k: [number, ...string[]]; r: [number, ...PackedRecord[]]; s: [number, number][] }
/** [frames, own, calls, node, lines]: as many as the record had after its count */
type PackedRecord = (number[] | boolean | number | null | undefined)[];

/** the most strings or stacks kept for a session before the tables start anew (a compiler's stacks vary without end) */
const MAX_PACKED = 20_000;

/** The target's side: what it has sent since the tables (re)started. */
export class StackPacker {
  private readonly strings = new Map<string, number>();
  private readonly records = new Map<string, number>();

  /** Start anew: the tool's side has nothing (a new session's first read). */
  reset(): void {
    this.strings.clear();
    this.records.clear();
  }

  pack(stacks: StackRecord[]): PackedStacks {
    if (this.strings.size > MAX_PACKED || this.records.size > MAX_PACKED) this.reset();
    const k: PackedStacks['k'] = [this.strings.size];
    const r: PackedStacks['r'] = [this.records.size];
    const id = (text: string): number => {
      let n = this.strings.get(text);
      if (n === undefined) { this.strings.set(text, (n = this.strings.size)); k.push(text); }
      return n;
    };
    const s: [number, number][] = [];
    for (const rec of stacks) {
      const packed: PackedRecord = [rec[0].map(id), rec[2], rec[3]?.map(id), rec[4] === undefined ? undefined : id(rec[4]), rec[5]].slice(0, rec.length - 1);
      const key = JSON.stringify(packed);
      let n = this.records.get(key);
      if (n === undefined) { this.records.set(key, (n = this.records.size)); r.push(packed); }
      s.push([n, rec[1]]);
    }
    return { k, r, s };
  }
}

/** The tool's side: the strings and stacks of one thread's session so far. */
export class StackUnpacker {
  private readonly strings: string[] = [];
  private readonly records: PackedRecord[] = [];
  /** the first read asks the target to start its tables anew (a session before this one may have left them) */
  private started = false;

  /** Whether this read is the session's first (then the target starts anew). */
  first(): boolean {
    const was = this.started;
    this.started = true;
    return !was;
  }

  unpack(p: PackedStacks): StackRecord[] {
    // (an index of 0: the tables start anew)
    this.strings.length = p.k[0];
    for (let i = 1; i < p.k.length; i++) this.strings.push(p.k[i] as string);
    this.records.length = p.r[0];
    for (let i = 1; i < p.r.length; i++) this.records.push(p.r[i] as PackedRecord);
    const str = (n: number): string => {
      const text = this.strings[n];
      if (text === undefined) throw new Error(`stack samples: string ${n} was never sent`);
      return text;
    };
    return p.s.map(([n, count]) => {
      const e = this.records[n];
      if (e === undefined) throw new Error(`stack samples: stack ${n} was never sent`);
      // fresh arrays: a reader may replace a record's parts (FrameNames)
      const out: unknown[] = [(e[0] as number[]).map(str), count];
      if (e.length > 1) out.push(e[1]);
      if (e.length > 2) out.push(e[2] == null ? e[2] : (e[2] as number[]).map(str));
      if (e.length > 3) out.push(e[3] == null ? e[3] : str(e[3] as number));
      if (e.length > 4) out.push(e[4] == null ? e[4] : [...(e[4] as number[])]);
      return out as StackRecord;
    });
  }
}
