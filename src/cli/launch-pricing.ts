// --max-overhead for `run`: its requests go in before any of the program's code
// exists (standing, switched on in each module as it loads), so they cannot be
// priced before they are placed, as attach's are. They are priced as the code
// loads instead: after a sample that brought new scripts (at most once a
// second), each request still in place is priced over the code loaded by then,
// in the order attach admits them (probes, the call-path profile, metric
// requests), from one budget; one that no longer fits is taken out at once,
// said and noted, and what it measured until then is kept. Each request's first
// price over some of the program's code is said, its last one noted at the end.
import type { Prediction } from '../cost/predict';
import type { Session } from '../session/session';
import { pct, priceText } from './cost-limit';

/** A request made at launch, as the pricing sees it. */
export interface LaunchItem {
  /** as the user wrote it: 'probe …', 'call-path profile of …', 'metric request …' */
  what: string;
  /** its predicted cost over the code loaded now */
  price(): Promise<Prediction>;
  /** stop it; what it measured until now stays reported */
  takeOut(why: string): Promise<void>;
}

/** the longest wait before a request priced at no point is priced again (the wait doubles from gapMs) */
const UNPLACED_MAX_GAP_MS = 30_000;

export class LaunchPricing {
  private readonly inPlace: LaunchItem[];
  private readonly last = new Map<LaunchItem, Prediction>();
  /**
   * items priced at no point yet, and when to price them again: their code may be loaded but
   * not yet listed, with no more code to come to set off a pricing (CI's Node 26, loaded, twice)
   */
  private readonly unplaced = new Map<LaunchItem, { gapMs: number; at: number }>();
  // (code announced before this was made, launching, is priced at the first sample)
  private dirty = true;
  private closed = false;
  private running?: Promise<void>;
  private lastMs = -Infinity;
  private readonly onResources = () => { this.dirty = true; };
  private readonly onSample = () => { void this.check(); };

  constructor(items: LaunchItem[], private readonly limit: number, private readonly s: Session, private readonly say: (line: string) => void,
    private readonly gapMs = 1000) {
    this.inPlace = [...items];
    s.on('resources', this.onResources);
    s.on('sample', this.onSample);
  }

  /** No more pricing (the session ends: a detach, or the target's exit): one under way is waited for. */
  async close(): Promise<void> {
    this.closed = true;
    this.s.off('resources', this.onResources);
    this.s.off('sample', this.onSample);
    await this.running;
  }

  /** Price again when code loaded since the last pricing, or a request priced at no point is due (at most once per gapMs). */
  check(): Promise<void> {
    const now = performance.now();
    const due = this.dirty || [...this.unplaced.values()].some((u) => now >= u.at);
    if (this.closed || this.running || !due || now - this.lastMs < this.gapMs) return this.running ?? Promise.resolve();
    this.dirty = false;
    this.lastMs = performance.now();
    this.running = this.priceAll().finally(() => { this.running = undefined; });
    return this.running;
  }

  private async priceAll(): Promise<void> {
    let spent = 0;
    for (const item of [...this.inPlace]) {
      if (this.closed) return;
      let p: Prediction;
      try {
        p = await item.price();
      } catch {
        // (a target that ends meanwhile: its end is the session's to report; priced again after new code otherwise)
        this.dirty = true;
        continue;
      }
      const first = p.points > 0 && !(this.last.get(item)?.points);
      this.last.set(item, p);
      // (priced again after a wait that doubles: CI's Node 26 listed a program's one module after
      // the pricing its load set off, and nothing loaded after it to price the request again)
      if (p.points === 0) {
        const gapMs = Math.min(UNPLACED_MAX_GAP_MS, 2 * (this.unplaced.get(item)?.gapMs ?? this.gapMs / 2));
        this.unplaced.set(item, { gapMs, at: performance.now() + gapMs });
      } else this.unplaced.delete(item);
      if (this.closed) return;
      if (spent + p.cost <= this.limit) {
        spent += p.cost;
        if (first) this.say(`${item.what}: predicted cost ${priceText(p)} over the code loaded so far`);
        continue;
      }
      const why = `${item.what} taken out after ${this.s.elapsedSeconds.toFixed(1)} s: its predicted cost over the code loaded by then, ${priceText(p)}` +
        `${spent > 0 ? `, with the ${pct(spent)} of the requests before it,` : ''} is over --max-overhead ${pct(this.limit)} (what it measured until then is kept); narrow its focus or raise the limit`;
      this.inPlace.splice(this.inPlace.indexOf(item), 1);
      this.s.notes.push(why);
      // said once it is out: what the program does after the message is not measured (CI's Node 22
      // counted 1,000 calls made after it, the removal waiting for the thread's quiet point)
      try {
        await item.takeOut(why);
      } catch (e) {
        const failed = `${item.what}: not taken out: ${(e as Error).message}`;
        this.s.notes.push(failed);
        if (!this.closed) this.say(failed);
        continue;
      }
      // (closed meanwhile: the report is being written, and has the note)
      if (!this.closed) this.say(why);
    }
  }

  /** At the end: each request left in place with its last price (none: the session ended before one was made). */
  summary(): string[] {
    return this.inPlace.map((i) => {
      const p = this.last.get(i);
      return p ? `${i.what}: predicted cost ${priceText(p)} over the code loaded, under --max-overhead ${pct(this.limit)}` : `${i.what}: not priced (the session ended before the program's code was)`;
    });
  }
}
