// Intrusion compensation of timers (Li and Zhang's virtual time, issue #13):
// a timer's virtual time is its real time less the instrumentation's own work
// inside it. Once the tool has priced the cost classes (from its calibration),
// every handler adds its class's price to a running sum, [low, high] ms, as it
// counts its run; a timer notes the sum at its outermost start and adds what it
// grew by at its stop (at most the interval). Two floats per handler run and
// two per timer start or stop: no work at all until the tool sends prices.

export type Pair = [number, number];

/** What the tool sends: ns per run of the way a handler is reached, and per primitive, [low, high]. */
export interface HandlerPrices {
  mechanism: Record<string, Pair>;
  primitive: Record<string, Pair>;
}

export class Intrusion {
  on = false;
  /** the handlers' work so far, [low, high] ms: each priced handler adds to it */
  readonly S = new Float64Array(2);
  /** per timer (at its T index): the sum at its outermost start (low, high) and its intrusion so far (low, high), ms */
  O = new Float64Array(0);
  private prices: HandlerPrices | null = null;

  /**
   * @param size the timers' T length
   * @param toolClass the class of the runtime's work for the tool (counted in µs)
   * @param unpriced classes that are no handler's time (pinning, guard switches: they change V8's code)
   */
  constructor(private readonly size: number, private readonly toolClass: string, private readonly unpriced: readonly string[]) {}

  /** Prices set: running timers count from now (the runtime compiles its handlers again, priced). */
  price(p: HandlerPrices, T: Float64Array): void {
    this.prices = p;
    if (!this.O.length) this.O = new Float64Array(this.size);
    this.on = true;
    for (let i = 0; i < T.length; i += 4) if (T[i + 2] > 0) this.at(i);
  }

  /** A later session starts unpriced, from zero. */
  reset(): void {
    this.on = false;
    this.prices = null;
    this.S.fill(0);
    this.O.fill(0);
  }

  /** ms one run of a handler of the class costs, [low, high] (null: not priced, or not a handler's time). */
  priceOf(cls: string): Pair | null {
    const p = this.prices;
    if (!p || cls === this.toolClass || this.unpriced.includes(cls)) return null;
    const [how, prims] = cls.split(':');
    const m = p.mechanism[how];
    if (!m) return null;
    const out: Pair = [m[0], m[1]];
    // "n1w1p1": a letter and its count, read by hand (this runs as a probe is placed, by interrupt: no-regexp.ts)
    const text = prims ?? '';
    for (let i = 0; i < text.length;) {
      const kind = text[i++];
      let digits = '';
      while (i < text.length && text[i] >= '0' && text[i] <= '9') digits += text[i++];
      if (!digits || kind < 'a' || kind > 'z') continue;
      const q = p.primitive[kind] ?? [0, 0];
      out[0] += Number(digits) * q[0];
      out[1] += Number(digits) * q[1];
    }
    return [out[0] / 1e6, out[1] / 1e6];
  }

  /** The runtime's work for the tool, `us` µs of it (not a handler: added as it is counted). */
  tool(us: number): void {
    if (!this.on) return;
    this.S[0] += us / 1000;
    this.S[1] += us / 1000;
  }

  /** A timer (T index i) starts its outermost interval. */
  at(i: number): void {
    if (!this.on) return;
    this.O[i] = this.S[0];
    this.O[i + 1] = this.S[1];
  }

  /** It stops after `ms`: the handler work inside, at most the interval itself. */
  add(i: number, ms: number): void {
    if (!this.on) return;
    const O = this.O;
    O[i + 2] += Math.min(ms, this.S[0] - O[i]);
    O[i + 3] += Math.min(ms, this.S[1] - O[i + 1]);
  }

  /** [low, high] intrusion of timer i so far, a running interval's (`ms` long so far) included. */
  of(i: number, running: boolean, ms: number): Pair {
    const O = this.O;
    if (!running) return [O[i + 2], O[i + 3]];
    return [O[i + 2] + Math.min(ms, this.S[0] - O[i]), O[i + 3] + Math.min(ms, this.S[1] - O[i + 1])];
  }
}
