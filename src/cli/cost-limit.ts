// --max-overhead for run, attach and ui: a metric request made after attach is
// priced before it is placed (the cost system's prediction: calibrated handler
// costs times each point's expected runs, and the pinning of functions reached by
// breakpoints) and not placed if it would take the instrumentation over the limit;
// while the session runs, the observed cost is watched and a window over the
// limit is said (once), with what the tool measured.
import type { MetricInstance, MetricManager } from '../metrics/manager';
import type { Prediction } from '../cost/predict';
import type { Session } from '../session/session';

const pct = (x: number) => `${x > 0 && x < 1e-4 ? +(x * 100).toPrecision(2) : (x * 100).toFixed(x < 0.1 ? 2 : 1)}%`;

/** The requests that fit under the limit, in order; each one's price said, each refusal too (a note as well). */
export async function pricedRequests(mm: MetricManager, s: Session, requests: { metric: string; focus: string }[], limit: number,
  say: (line: string) => void): Promise<{ metric: string; focus: string }[]> {
  const out: { metric: string; focus: string }[] = [];
  let spent = 0;
  for (const r of requests) {
    const name = `${r.metric}${r.focus ? '@' + r.focus : ''}`;
    let p: Prediction;
    try {
      p = await mm.predictAll(r.metric, r.focus);
    } catch {
      // (an unknown focus fails the same way when it is enabled, with its own message)
      out.push(r);
      continue;
    }
    const pinned = p.pinned > 0 ? `, of which ${pct(p.pinned)} keeping ${p.pinning.length} function(s) reached by breakpoints in V8's interpreter` : '';
    if (spent + p.cost > limit) {
      const why = `metric request ${name} not placed: its predicted cost, ${pct(p.cost)} of a thread (${p.points} point(s)${pinned})` +
        `${spent > 0 ? `, with the ${pct(spent)} of the requests before it,` : ''} is over --max-overhead ${pct(limit)}; narrow its focus or raise the limit`;
      s.notes.push(why);
      say(why);
      continue;
    }
    spent += p.cost;
    say(`${name}: predicted cost ${pct(p.cost)} of a thread (${p.points} point(s)${pinned})`);
    out.push(r);
  }
  return out;
}

/**
 * Watch the observed cost (the busiest thread's, over windows of at least
 * `windowS`): the first window over the limit is said, with the requests in
 * place; at the end, the highest window is noted.
 */
export class ObservedCostWatch {
  private last?: { t: number; totals: Map<string, number> };
  private highest = 0;
  private warned = false;
  constructor(private readonly inst: MetricInstance, private readonly limit: number, private readonly say: (line: string) => void,
    private readonly windowS = 2) {}

  /** After each sample. */
  check(requests: () => string[]): void {
    const t = performance.now() / 1000;
    const totals = this.inst.threadTotals();
    if (!this.last) { this.last = { t, totals }; return; }
    const dt = t - this.last.t;
    if (dt < this.windowS) return;
    let observed = 0;
    for (const [k, v] of totals) observed = Math.max(observed, (v - (this.last.totals.get(k) ?? 0)) / dt);
    this.last = { t, totals };
    this.highest = Math.max(this.highest, observed);
    if (observed > this.limit && !this.warned) {
      this.warned = true;
      this.say(`the observed cost, ${pct(observed)} of a thread over the last ${dt.toFixed(1)} s, is over --max-overhead ${pct(this.limit)}` +
        ` (in place: ${requests().join(', ') || 'probes only'}); the requests stay: remove one, or narrow its focus`);
    }
  }

  /** What to note at the end. */
  summary(): string | null {
    return this.last ? `observed cost: at most ${pct(this.highest)} of a thread in a ${this.windowS}-s window (--max-overhead ${pct(this.limit)})` : null;
  }
}
