// Paradyn's time histogram: a fixed number of buckets; when the last is
// filled, the bucket width doubles and neighbouring buckets fold pairwise, so
// memory stays fixed however long the run.

export class TimeHistogram {
  private buckets: number[];
  private width: number;
  private filled = 0;

  constructor(readonly size = 64, initialWidthSeconds = 0.1) {
    if (size < 2 || size % 2) throw new Error('histogram size must be an even number >= 2');
    this.buckets = new Array(size).fill(0);
    this.width = initialWidthSeconds;
  }

  get bucketSeconds(): number { return this.width; }

  /** Add `amount` spread evenly over [from, to) seconds since the start. */
  add(from: number, to: number, amount: number): void {
    if (!(to > from) || amount === 0) {
      if (amount !== 0) this.addAt(from, amount);
      return;
    }
    while (to > this.width * this.size) this.fold();
    const rate = amount / (to - from);
    let t = from;
    while (t < to) {
      const i = Math.min(this.size - 1, Math.floor(t / this.width + 1e-9));
      const end = Math.min(to, (i + 1) * this.width);
      this.buckets[i] += rate * (end - t);
      this.filled = Math.max(this.filled, i + 1);
      if (end <= t) break;
      t = end;
    }
  }

  private addAt(t: number, amount: number): void {
    while (t >= this.width * this.size) this.fold();
    const i = Math.floor(t / this.width);
    this.buckets[i] += amount;
    this.filled = Math.max(this.filled, i + 1);
  }

  private fold(): void {
    const b = this.buckets;
    for (let i = 0; i < this.size / 2; i++) b[i] = b[2 * i] + b[2 * i + 1];
    for (let i = this.size / 2; i < this.size; i++) b[i] = 0;
    this.width *= 2;
    this.filled = Math.ceil(this.filled / 2);
  }

  /** Bucket contents so far (trailing unused buckets left out). */
  values(): number[] {
    return this.buckets.slice(0, this.filled);
  }

  total(): number {
    return this.buckets.reduce((a, b) => a + b, 0);
  }
}
