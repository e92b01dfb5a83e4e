import type { Impact } from '../../../schemas/defect.js';
import { PRM_COMPANION_CLASS } from '../adapters/prmbench.js';
import { type Aggregator, wsum } from '../metrics/bootstrap.js';
import { flaggedSteps } from '../predictions.js';
import type { StepGold, StepPrediction } from '../types.js';

/**
 * PRMBench's protocol. Steps are pooled over samples with "correct step" as the positive class:
 * TP correct & judged correct, FN correct & judged wrong, FP wrong & judged correct, TN wrong &
 * judged wrong. F1 is computed for the positive and the negative class and PRMScore is their
 * mean. Only the steps the judge returned labels for are visited, so listed error steps past the
 * end of the trace never count. A sample without a valid answer is left out. The clean companion
 * set ("correct") is scored on its own line but kept out of the overall pool. Where a ratio's
 * denominator is zero the official arithmetic uses -1, and an F1 whose two inputs sum to zero is
 * -1; this is reproduced so the numbers match.
 */
export interface PrmSample {
  classification: string;
  /** 1-based, as the file lists them */
  error_steps: readonly number[];
  /** per step: true = judged correct; null = no valid answer */
  labels: boolean[] | null;
}

export function prmSample(gold: StepGold, pred: StepPrediction, threshold: Impact): PrmSample {
  if (pred.failed) return { classification: gold.classification ?? gold.split, error_steps: gold.raw_error_steps, labels: null };
  const flagged = flaggedSteps(pred, threshold);
  return { classification: gold.classification ?? gold.split, error_steps: gold.raw_error_steps, labels: Array.from({ length: pred.n_steps }, (_, i) => !flagged.has(i + 1)) };
}

const OFFICIAL_UNDEFINED = -1;
const ratio = (a: number, b: number): number => (b !== 0 ? a / b : OFFICIAL_UNDEFINED);
const f1 = (p: number, r: number): number => (p + r !== 0 ? (2 * p * r) / (p + r) : OFFICIAL_UNDEFINED);

export interface PrmCounts {
  tp: number;
  fp: number;
  tn: number;
  fn: number;
}

export function prmMetrics(c: PrmCounts) {
  const precision = ratio(c.tp, c.tp + c.fp);
  const recall = ratio(c.tp, c.tp + c.fn);
  const negPrecision = ratio(c.tn, c.tn + c.fn);
  const negRecall = ratio(c.tn, c.tn + c.fp);
  const f1Pos = f1(precision, recall);
  const f1Neg = f1(negPrecision, negRecall);
  return { precision, recall, f1_pos: f1Pos, negative_precision: negPrecision, negative_recall: negRecall, f1_neg: f1Neg, prm_score: (f1Pos + f1Neg) / 2 };
}

export function prmCounts(s: PrmSample): PrmCounts {
  const c: PrmCounts = { tp: 0, fp: 0, tn: 0, fn: 0 };
  if (!s.labels) return c;
  const errors = new Set(s.error_steps);
  s.labels.forEach((judgedCorrect, i) => {
    if (errors.has(i + 1)) judgedCorrect ? c.fp++ : c.tn++;
    else judgedCorrect ? c.tp++ : c.fn++;
  });
  return c;
}

export type PrmKey = 'prm_score' | 'f1_pos' | 'f1_neg' | `prm_score:${string}`;

export function prmAggregator(samples: readonly PrmSample[]): Aggregator<PrmKey> & { classes: string[]; invalid: number } {
  const classes = [...new Set(samples.map((s) => s.classification))];
  const counts = samples.map(prmCounts);
  const col = (k: keyof PrmCounts, keep: (s: PrmSample) => boolean) => Float64Array.from(counts, (c, i) => (keep(samples[i]!) ? c[k] : 0));
  const group = (keep: (s: PrmSample) => boolean) => ({ tp: col('tp', keep), fp: col('fp', keep), tn: col('tn', keep), fn: col('fn', keep) });
  const overall = group((s) => s.classification !== PRM_COMPANION_CLASS);
  const byClass = classes.map((c) => group((s) => s.classification === c));
  const sum = (g: ReturnType<typeof group>, w: Uint32Array | null): PrmCounts => ({ tp: wsum(g.tp, w), fp: wsum(g.fp, w), tn: wsum(g.tn, w), fn: wsum(g.fn, w) });
  return {
    n: samples.length,
    keys: ['prm_score', 'f1_pos', 'f1_neg', ...classes.map((c) => `prm_score:${c}` as PrmKey)],
    classes,
    invalid: samples.filter((s) => s.labels === null).length,
    compute(w) {
      const m = prmMetrics(sum(overall, w));
      const out = { prm_score: m.prm_score, f1_pos: m.f1_pos, f1_neg: m.f1_neg } as Record<PrmKey, number>;
      classes.forEach((c, i) => (out[`prm_score:${c}`] = prmMetrics(sum(byClass[i]!, w)).prm_score));
      return out;
    },
  };
}
