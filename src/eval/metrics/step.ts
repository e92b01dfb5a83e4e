import type { Impact } from '../../../schemas/defect.js';
import { stepLabels } from '../gold.js';
import { flaggedSteps } from '../predictions.js';
import type { FailedPolicy, StepGold, StepPrediction } from '../types.js';
import { type Aggregator, wsum } from './bootstrap.js';

/** Step-level confusion with "erroneous step" as the positive class. */
export interface Confusion {
  tp: number;
  fp: number;
  tn: number;
  fn: number;
}

export const STEP_METRICS = ['balanced_f1', 'balanced_accuracy', 'accuracy', 'precision', 'recall', 'specificity', 'f1'] as const;
export type StepMetric = (typeof STEP_METRICS)[number];

const ratio = (a: number, b: number): number => (b === 0 ? NaN : a / b);
const harmonic = (a: number, b: number): number => (Number.isNaN(a) || Number.isNaN(b) ? NaN : a + b === 0 ? 0 : (2 * a * b) / (a + b));

/**
 * The paper's six step metrics (§3.1) plus specificity. Recall is error recall; Balanced F1 is
 * the harmonic mean of error recall and specificity (Hard2Verify's definition); NaN where a
 * denominator is zero.
 */
export function metricsFromConfusion(c: Confusion): Record<StepMetric, number> {
  const recall = ratio(c.tp, c.tp + c.fn);
  const specificity = ratio(c.tn, c.tn + c.fp);
  const precision = ratio(c.tp, c.tp + c.fp);
  return {
    balanced_f1: harmonic(recall, specificity),
    balanced_accuracy: (recall + specificity) / 2,
    accuracy: ratio(c.tp + c.tn, c.tp + c.tn + c.fp + c.fn),
    precision,
    recall,
    specificity,
    f1: ratio(2 * c.tp, 2 * c.tp + c.fp + c.fn),
  };
}

export interface StepOptions {
  threshold: Impact;
  propagate: boolean;
  failed: FailedPolicy;
}

/** One record's confusion over its labelled steps; null when the record is left out. */
export function recordConfusion(gold: StepGold, pred: StepPrediction, opts: StepOptions): Confusion | null {
  const labels = stepLabels(gold, opts.propagate);
  const c: Confusion = { tp: 0, fp: 0, tn: 0, fn: 0 };
  // A selected record with no verdict at all counts as wrong (MissingPolicy) whatever `failed` says;
  // Hard2Verify's `flag_all` is its own rule for every step without a verdict.
  const policy: FailedPolicy = pred.missing && opts.failed !== 'flag_all' ? 'wrong' : opts.failed;
  if (pred.failed && policy === 'exclude') return null;
  const flagged = pred.failed ? null : flaggedSteps(pred, opts.threshold);
  labels.forEach((label, i) => {
    if (label === null) return;
    // A failed record under `wrong` is misclassified at every step; under `flag_all` every step is flagged.
    const hit = flagged ? flagged.has(i + 1) : policy === 'flag_all' ? true : label === 0;
    if (label === 1) hit ? c.tp++ : c.fn++;
    else hit ? c.fp++ : c.tn++;
  });
  return c;
}

export function addConfusion(a: Confusion, b: Confusion): Confusion {
  return { tp: a.tp + b.tp, fp: a.fp + b.fp, tn: a.tn + b.tn, fn: a.fn + b.fn };
}

/** Pooled ("micro over steps") step metrics over records, resampled by record. */
export function stepAggregator(confusions: readonly Confusion[]): Aggregator<StepMetric> & { pooled: Confusion } {
  const col = (k: keyof Confusion) => Float64Array.from(confusions, (c) => c[k]);
  const tp = col('tp'), fp = col('fp'), tn = col('tn'), fn = col('fn');
  return {
    n: confusions.length,
    keys: STEP_METRICS,
    pooled: confusions.reduce(addConfusion, { tp: 0, fp: 0, tn: 0, fn: 0 }),
    compute: (w) => metricsFromConfusion({ tp: wsum(tp, w), fp: wsum(fp, w), tn: wsum(tn, w), fn: wsum(fn, w) }),
  };
}
