// What reading a window of stack samples costs, as a fixed part per window and
// a part per sample (a least-squares line through the windows read): the cost
// at another sampling interval is then known before V8's profiler is restarted
// for it, a restart that logs every code object of the heap again (0.2 s of a
// loaded server's thread).

export class WindowCostFit {
  private n = 0;
  private sx = 0;
  private sy = 0;
  private sxx = 0;
  private sxy = 0;

  /** One window: its samples and what it cost (ms). */
  add(samples: number, costMs: number): void {
    this.n++;
    this.sx += samples;
    this.sy += costMs;
    this.sxx += samples * samples;
    this.sxy += samples * costMs;
  }

  clear(): void {
    this.n = this.sx = this.sy = this.sxx = this.sxy = 0;
  }

  /** [per window, per sample] (ms, never below 0); null until windows of different sizes were read. */
  line(): [number, number] | null {
    const d = this.n * this.sxx - this.sx * this.sx;
    if (this.n < 4 || d <= 0) return null;
    const perSample = Math.max(0, (this.n * this.sxy - this.sx * this.sy) / d);
    const perWindow = Math.max(0, (this.sy - perSample * this.sx) / this.n);
    return [perWindow, perSample];
  }
}
