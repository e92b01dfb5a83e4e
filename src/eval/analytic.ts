import { type Impact, IMPACT_RANK, IMPACTS } from '../../schemas/defect.js';
import { metricsFromConfusion, type StepMetric } from './metrics/step.js';

/** Weights of the severities a model gives its findings. */
export type SeverityMix = Record<Impact, number>;

/**
 * What one model's behaviour is made of for the predictions: the rates a simulator profile's
 * model entry carries (src/sim/profile.ts), given here by shape so evaluation needs no simulator.
 */
export interface ModelRates {
  recall: number;
  false_positive_rate: number;
  severity_mix: SeverityMix;
  /** severities of false positives; severity_mix when absent */
  fp_severity_mix?: SeverityMix | undefined;
  consolidator: { accept_true: number; accept_false: number; fill_recall: number; fill_false_positive_rate: number };
}

/** The rates of the model named, or null when the profile has none. */
export type RatesOf = (model: string) => ModelRates | null;

/** Per-step flag probabilities of a system: on gold-erroneous steps (recall) and on clean ones. */
export interface Rates {
  recall: number;
  fpr: number;
}

/** Share of a severity mix at or above the threshold. */
export function atLeast(mix: SeverityMix, threshold: Impact): number {
  const total = IMPACTS.reduce((s, i) => s + mix[i], 0);
  return IMPACTS.filter((i) => IMPACT_RANK[i] >= IMPACT_RANK[threshold]).reduce((s, i) => s + mix[i], 0) / total;
}

function ratesFor(ratesOf: RatesOf, model: string): ModelRates {
  const m = ratesOf(model);
  if (!m) throw new Error(`simulator profile has no model "${model}"`);
  return m;
}

/** P(a strict majority of jurors cite the step and the strongest citing defect reaches the threshold). */
function majorityRate(cite: readonly number[], severe: readonly number[]): number {
  const k = cite.length;
  const need = Math.floor(k / 2) + 1;
  let total = 0;
  for (let mask = 0; mask < 1 << k; mask++) {
    let p = 1;
    let mild = 1;
    let size = 0;
    for (let j = 0; j < k; j++) {
      if (mask & (1 << j)) {
        p *= cite[j]!;
        mild *= 1 - severe[j]!;
        size++;
      } else p *= 1 - cite[j]!;
    }
    if (size >= need) total += p * (1 - mild);
  }
  return total;
}

/**
 * What the simulator's profile predicts for each rung, per step and independently across jurors.
 * Exact for profiles with `adjacent_rate: 0` (every finding cites one step, so consolidation
 * groups are single steps) and no faults; otherwise an approximation.
 *  solo:          r·q            (q: share of the juror's severity mix at or above the threshold)
 *  union:         1 − Π(1 − r·q)
 *  majority:      Σ over juror subsets of a strict majority, times P(some member's severity ≥ threshold)
 *  consolidation: [U·accept + (1 − U)·fill]·q_c, with U = 1 − Π(1 − r) the chance any juror cited the step
 */
export function predictLadder(ratesOf: RatesOf, jurors: ReadonlyArray<{ id: string; model: string }>, consolidatorModel: string, threshold: Impact) {
  const ms = jurors.map((j) => ratesFor(ratesOf, j.model));
  const c = ratesFor(ratesOf, consolidatorModel);
  const side = (isTrue: boolean) => {
    const cite = ms.map((m) => (isTrue ? m.recall : m.false_positive_rate));
    const severe = ms.map((m) => atLeast(isTrue ? m.severity_mix : (m.fp_severity_mix ?? m.severity_mix), threshold));
    const anyCite = 1 - cite.reduce((s, p) => s * (1 - p), 1);
    const qc = atLeast(isTrue ? c.severity_mix : (c.fp_severity_mix ?? c.severity_mix), threshold);
    const accept = isTrue ? c.consolidator.accept_true : c.consolidator.accept_false;
    const fill = isTrue ? c.consolidator.fill_recall : c.consolidator.fill_false_positive_rate;
    return {
      solo: cite.map((p, j) => p * severe[j]!),
      union: 1 - cite.reduce((s, p, j) => s * (1 - p * severe[j]!), 1),
      majority: majorityRate(cite, severe),
      consolidation: (anyCite * accept + (1 - anyCite) * fill) * qc,
    };
  };
  const t = side(true);
  const f = side(false);
  return {
    solo: Object.fromEntries(jurors.map((j, i) => [j.id, { recall: t.solo[i]!, fpr: f.solo[i]! }])) as Record<string, Rates>,
    union: { recall: t.union, fpr: f.union } as Rates,
    majority: { recall: t.majority, fpr: f.majority } as Rates,
    consolidation: { recall: t.consolidation, fpr: f.consolidation } as Rates,
  };
}

/** Metrics the rates predict on a step pool with `positives` erroneous and `negatives` clean steps. */
export function predictedMetrics(r: Rates, positives: number, negatives: number): Record<StepMetric, number> {
  return metricsFromConfusion({ tp: r.recall * positives, fn: (1 - r.recall) * positives, fp: r.fpr * negatives, tn: (1 - r.fpr) * negatives });
}
