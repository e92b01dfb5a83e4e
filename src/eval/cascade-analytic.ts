import type { CascadeRule, ParticipantConfig } from '../../schemas/config.js';
import type { Impact } from '../../schemas/defect.js';
import { atLeast, type ModelRates, type RatesOf } from './analytic.js';

/**
 * What a cascade Phase 1 should do, from the jurors' noise alone (issue 16.4): the share of
 * records that escalate, the Phase 1 calls per record as a multiple of a single judge's one,
 * and the step recall and false-positive rate of the cascade with `union` as Phase 2.
 *
 * Assumptions, under which it is exact: every seat is a model seat that never fails; each
 * juror flags each step independently (the simulator with `miss_correlation` 0) with its recall
 * on gold-erroneous steps and its false-positive rate on clean ones; one finding cites one step
 * (`adjacent_rate` 0); `add: all` (one escalation seats every remaining seat); the rules are
 * `any_finding` and/or `disagree_step` (any_finding implies disagree_step's condition is not
 * needed: a disagreement needs a finding).
 *
 * Per record, with start seats S, later seats L, p_j(s) the chance juror j cites step s and
 * q_j(s) the chance its finding reaches the severity threshold:
 *   no escalation:  any_finding    Π_s Π_{j∈S} (1 − p_j(s))
 *                   disagree_step  Π_s [Π_{j∈S} (1 − p_j(s)) + Π_{j∈S} p_j(s)]
 *   step s flagged: 1 − [N_s + (A_s − N_s)·B_s], A_s = Π_{j∈S} (1 − p_j q_j), B_s = Π_{j∈L} (1 − p_j q_j),
 *                   N_s = P(no start seat flags s at the threshold and no escalation): the
 *                   no-escalation product with step s's factor replaced by Π(1 − p_j)
 *                   (+ Π p_j (1 − q_j) under disagree_step, where all citing below the threshold agrees).
 */

export type AnalyticRule = Extract<CascadeRule, 'any_finding' | 'disagree_step'>;

export interface CascadeRecordShape {
  n_steps: number;
  /** 1-based gold-erroneous steps */
  error_steps: readonly number[];
}

export interface CascadePrediction {
  /** share of records that seat more than the start seats */
  escalation_rate: number;
  /** Phase 1 calls per record over a single judge's 1 */
  calls_x_single: number;
  /** step recall / false-positive rate of cascade + union at the threshold */
  recall: number;
  fpr: number;
}

interface SeatRates {
  cite: number;
  severe: number;
}

function seatRates(m: ModelRates, isTrue: boolean, threshold: Impact): SeatRates {
  return { cite: isTrue ? m.recall : m.false_positive_rate, severe: atLeast(isTrue ? m.severity_mix : (m.fp_severity_mix ?? m.severity_mix), threshold) };
}

const prod = (xs: readonly number[]) => xs.reduce((a, b) => a * b, 1);

/** P(the start seats raise no escalation on one step), and the same jointly with "nobody flags it at the threshold". */
function stepFactors(start: readonly SeatRates[], rule: AnalyticRule): { quiet: number; quietUnflagged: number } {
  const none = prod(start.map((r) => 1 - r.cite));
  if (rule === 'any_finding') return { quiet: none, quietUnflagged: none };
  return { quiet: none + prod(start.map((r) => r.cite)), quietUnflagged: none + prod(start.map((r) => r.cite * (1 - r.severe))) };
}

export function predictCascade(args: {
  ratesOf: RatesOf;
  jurors: ReadonlyArray<Pick<ParticipantConfig, 'model'>>;
  start: number;
  rules: readonly AnalyticRule[];
  threshold: Impact;
  records: readonly CascadeRecordShape[];
}): CascadePrediction {
  const models = args.jurors.map((j) => {
    const m = args.ratesOf(j.model);
    if (!m) throw new Error(`no rates for model "${j.model}"`);
    return m;
  });
  const k = Math.min(args.start, models.length);
  // any_finding fires whenever disagree_step does: with both, any_finding decides.
  const rule: AnalyticRule = args.rules.includes('any_finding') ? 'any_finding' : 'disagree_step';
  const side = (isTrue: boolean) => {
    const rates = models.map((m) => seatRates(m, isTrue, args.threshold));
    const f = stepFactors(rates.slice(0, k), rule);
    const a = prod(rates.slice(0, k).map((r) => 1 - r.cite * r.severe));
    const b = prod(rates.slice(k).map((r) => 1 - r.cite * r.severe));
    return { ...f, a, b };
  };
  const t = side(true);
  const c = side(false);
  let escalations = 0;
  let tp = 0;
  let pos = 0;
  let fp = 0;
  let neg = 0;
  for (const r of args.records) {
    const e = new Set(r.error_steps.filter((s) => s >= 1 && s <= r.n_steps)).size;
    const clean = r.n_steps - e;
    const quiet = t.quiet ** e * c.quiet ** clean;
    escalations += 1 - quiet;
    // N_s: the record's quiet product with this step's factor swapped for "quiet and unflagged".
    const flagged = (x: typeof t, others: number) => 1 - (others * x.quietUnflagged + (x.a - others * x.quietUnflagged) * x.b);
    if (e > 0) tp += e * flagged(t, t.quiet ** (e - 1) * c.quiet ** clean);
    pos += e;
    if (clean > 0) fp += clean * flagged(c, t.quiet ** e * c.quiet ** (clean - 1));
    neg += clean;
  }
  const rate = args.records.length > 0 ? escalations / args.records.length : 0;
  return { escalation_rate: rate, calls_x_single: k + rate * (models.length - k), recall: pos > 0 ? tp / pos : NaN, fpr: neg > 0 ? fp / neg : NaN };
}
