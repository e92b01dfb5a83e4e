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
  const classification = gold.classification ?? gold.split;
  // No verdict at all (MissingPolicy `wrong`): every step judged the wrong way round.
  if (pred.missing) {
    const errors = new Set(gold.raw_error_steps);
    return { classification, error_steps: gold.raw_error_steps, labels: Array.from({ length: gold.n_steps }, (_, i) => errors.has(i + 1)) };
  }
  // A failed verdict is an invalid answer, which the official evaluator skips.
  if (pred.failed) return { classification, error_steps: gold.raw_error_steps, labels: null };
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

/**
 * How the benchmark's result tables turn the evaluator's numbers into PRMScore (the notebook
 * mr_visualize/eval_res_view/draw_tabs/form_latex_strs.ipynb, get_prmscore_from_current_res_dict):
 * the mean of F1 and negative F1, except for `multi_solutions` (no erroneous steps, so only the
 * positive F1 means anything); a score at or below zero is shown as 0 ("-" in the table).
 */
export const PRM_POSITIVE_ONLY_CLASSES: readonly string[] = ['multi_solutions'];
export const tableScore = (f1Pos: number, f1Neg: number, positiveOnly: boolean): number => {
  const raw = positiveOnly ? f1Pos : (f1Pos + f1Neg) / 2;
  return raw > 0 ? raw : 0;
};

/** The table's three groups of classes (same notebook, classification_parallel_dict); each averages its classes' scores. */
export const PRM_CLASS_GROUPS: Readonly<Record<string, readonly string[]>> = {
  simplicity: ['redundency', 'circular'],
  soundness: ['counterfactual', 'step_contradiction', 'domain_inconsistency', 'confidence'],
  sensitivity: ['missing_condition', 'deception', 'multi_solutions'],
};

export type PrmKey = 'prm_score' | 'prm_score_raw' | 'f1_pos' | 'f1_neg' | `${'prm_score' | 'f1_pos' | 'f1_neg'}:${string}` | `prm_avg:${string}`;

/**
 * `prm_score` and `prm_score:<class>` are the table's values (above); `prm_score_raw`,
 * `f1_pos[:<class>]` and `f1_neg[:<class>]` are the evaluator's own, -1 sentinels included.
 * `prm_avg:<group>` averages the table scores of the group's classes present in the data.
 */
export function prmAggregator(samples: readonly PrmSample[]): Aggregator<PrmKey> & { classes: string[]; invalid: number } {
  const classes = [...new Set(samples.map((s) => s.classification))];
  const counts = samples.map(prmCounts);
  const col = (k: keyof PrmCounts, keep: (s: PrmSample) => boolean) => Float64Array.from(counts, (c, i) => (keep(samples[i]!) ? c[k] : 0));
  const group = (keep: (s: PrmSample) => boolean) => ({ tp: col('tp', keep), fp: col('fp', keep), tn: col('tn', keep), fn: col('fn', keep) });
  const overall = group((s) => s.classification !== PRM_COMPANION_CLASS);
  const byClass = classes.map((c) => group((s) => s.classification === c));
  const sum = (g: ReturnType<typeof group>, w: Uint32Array | null): PrmCounts => ({ tp: wsum(g.tp, w), fp: wsum(g.fp, w), tn: wsum(g.tn, w), fn: wsum(g.fn, w) });
  const groups = Object.entries(PRM_CLASS_GROUPS).map(([name, members]) => ({ name, members: members.filter((m) => classes.includes(m)) })).filter((g) => g.members.length > 0);
  const perClass = classes.flatMap((c) => [`prm_score:${c}`, `f1_pos:${c}`, `f1_neg:${c}`] as PrmKey[]);
  return {
    n: samples.length,
    keys: ['prm_score', 'prm_score_raw', 'f1_pos', 'f1_neg', ...perClass, ...groups.map((g) => `prm_avg:${g.name}` as PrmKey)],
    classes,
    invalid: samples.filter((s) => s.labels === null).length,
    compute(w) {
      const m = prmMetrics(sum(overall, w));
      const out = { prm_score: tableScore(m.f1_pos, m.f1_neg, false), prm_score_raw: m.prm_score, f1_pos: m.f1_pos, f1_neg: m.f1_neg } as Record<PrmKey, number>;
      classes.forEach((c, i) => {
        const k = prmMetrics(sum(byClass[i]!, w));
        out[`prm_score:${c}`] = tableScore(k.f1_pos, k.f1_neg, PRM_POSITIVE_ONLY_CLASSES.includes(c));
        out[`f1_pos:${c}`] = k.f1_pos;
        out[`f1_neg:${c}`] = k.f1_neg;
      });
      for (const g of groups) out[`prm_avg:${g.name}`] = g.members.reduce((a, c) => a + (out[`prm_score:${c}`] ?? 0), 0) / g.members.length;
      return out;
    },
  };
}
