// --max-overhead for run, attach and ui: a metric request or probe made after attach is
// priced before it is placed (the cost system's prediction: calibrated handler
// costs times each point's expected runs, and the pinning of functions reached by
// breakpoints) and not placed if it would take the instrumentation over the limit;
// while the session runs, the observed cost is watched and a window over the
// limit is said (once), with what the tool measured.
import type { Calibration } from '../cost/calibration';
import { predictPlan, Prediction } from '../cost/predict';
import { runnableTime } from '../agent/runnable-time';
import type { ProbeRequest } from '../instrument/probe';
import type { Plan } from '../mdl/evaluate';
import type { MetricInstance, MetricManager } from '../metrics/manager';
import type { Session } from '../session/session';

/** A share of a thread as a percentage, a tiny one with its two significant digits. */
export const pct = (x: number) => `${x > 0 && x < 1e-4 ? +(x * 100).toPrecision(2) : (x * 100).toFixed(x < 0.1 ? 2 : 1)}%`;

/** A prediction as said: its cost, its points, and what of it is breakpoints' pinning. */
export function priceText(p: Prediction): string {
  const pinned = p.pinned > 0 ? `, of which ${pct(p.pinned)} keeping ${p.pinning.length} function(s) reached by breakpoints in V8's interpreter` : '';
  return `${pct(p.cost)} of a thread (${p.points} point(s)${pinned})`;
}

/** What the requests admitted so far are predicted to cost, against the limit. */
export class CostBudget {
  private spent = 0;
  constructor(private readonly limit: number, private readonly s: Session, private readonly say: (line: string) => void) {}

  /** Whether `what`, predicted at p, fits beside what was admitted before it: its price said, a refusal noted too. */
  admit(what: string, p: Prediction): boolean {
    if (this.spent + p.cost > this.limit) {
      const why = `${what} not placed: its predicted cost, ${priceText(p)}` +
        `${this.spent > 0 ? `, with the ${pct(this.spent)} of the requests before it,` : ''} is over --max-overhead ${pct(this.limit)}; narrow its focus or raise the limit`;
      this.s.notes.push(why);
      this.say(why);
      return false;
    }
    this.spent += p.cost;
    this.say(`${what}: predicted cost ${priceText(p)}`);
    return true;
  }
}

/** Probes as a plan of their placements, to be priced over the functions their globs match now. */
export function probePlan(reqs: ProbeRequest[]): Plan {
  return { placements: reqs.map((r) => ({ resource: r.resource, point: r.point, where: r.where, order: r.order, snippet: r.snippet, optional: false })), flags: [], variable: '', kind: 'counter' };
}

/** Whether probes fit the budget (one probe, or a call-path profile's four): what, as the user wrote it. */
export async function probesFit(s: Session, what: string, reqs: ProbeRequest[], cal: Calibration, budget: CostBudget): Promise<boolean> {
  return budget.admit(what, await predictPlan(probePlan(reqs), s, cal));
}

/** The metric requests that fit the budget, in order. */
export async function pricedRequests(mm: MetricManager, requests: { metric: string; focus: string }[], budget: CostBudget): Promise<{ metric: string; focus: string }[]> {
  const out: { metric: string; focus: string }[] = [];
  for (const r of requests) {
    let p: Prediction;
    try {
      p = await mm.predictAll(r.metric, r.focus);
    } catch {
      // (an unknown focus fails the same way when it is enabled, with its own message)
      out.push(r);
      continue;
    }
    if (budget.admit(`metric request ${r.metric}${r.focus ? '@' + r.focus : ''}`, p)) out.push(r);
  }
  return out;
}

/**
 * Watch the observed cost (the busiest thread's, over windows of at least
 * `windowS`): the first window over the limit is said, with the requests in
 * place; at the end, the highest window is noted.
 */
export class ObservedCostWatch {
  private last?: { t: number; totals: Map<string, number>; waits: Map<string, number> };
  private highest = 0;
  private warned = false;
  /** @param wait each thread's waits for a CPU (cpu_wait): the cost is a share of the time it could run (agent/runnable-time.ts) */
  constructor(private readonly inst: MetricInstance, private readonly limit: number, private readonly say: (line: string) => void,
    private readonly windowS = 2, private readonly wait?: MetricInstance) {}

  /** After each sample. */
  check(requests: () => string[]): void {
    const t = performance.now() / 1000;
    const totals = this.inst.threadTotals();
    const waits = this.wait?.threadTotals() ?? new Map<string, number>();
    if (!this.last) { this.last = { t, totals, waits }; return; }
    const dt = t - this.last.t;
    if (dt < this.windowS) return;
    let observed = 0;
    for (const [k, v] of totals) {
      const ran = runnableTime(dt, (waits.get(k) ?? 0) - (this.last.waits.get(k) ?? 0));
      observed = Math.max(observed, (v - (this.last.totals.get(k) ?? 0)) / ran);
    }
    this.last = { t, totals, waits };
    this.highest = Math.max(this.highest, observed);
    if (observed > this.limit && !this.warned) {
      this.warned = true;
      this.say(`the observed cost, ${pct(observed)} of the time a thread could run over the last ${dt.toFixed(1)} s, is over --max-overhead ${pct(this.limit)}` +
        ` (in place: ${requests().join(', ') || 'probes only'}); the requests stay: remove one, or narrow its focus`);
    }
  }

  /** The highest share of a window so far. */
  get highestShare(): number { return this.highest; }

  /** What to note at the end. */
  summary(): string | null {
    return this.last ? `observed cost: at most ${pct(this.highest)} of the time a thread could run in a ${this.windowS}-s window (--max-overhead ${pct(this.limit)})` : null;
  }
}
