import type { Impact } from '../../../schemas/defect.js';
import { type Aggregator, wsum } from '../metrics/bootstrap.js';
import { flaggedSteps } from '../predictions.js';
import type { StepGold, StepPrediction } from '../types.js';

/**
 * DeltaBench's protocol over section sets. Per sample: predicted sections numbered above the
 * highest gold section are discarded (the "unfiltered" variant keeps them, so false alarms
 * after the last gold error cost something); TP/FP/FN over the sets; precision, recall and F1
 * with 0 when undefined. Macro = mean over samples, micro = from pooled TP/FP/FN. As in the
 * official evaluator, only samples with gold sections are scored, and a sample without a usable
 * answer drops out (its metrics are missing, and the evaluator's means skip missing values).
 */
export interface DeltaSample {
  gold: readonly number[];
  /** predicted sections; null = no usable answer */
  predicted: readonly number[] | null;
}

export function deltaSample(gold: StepGold, pred: StepPrediction, threshold: Impact): DeltaSample {
  return { gold: gold.raw_error_steps, predicted: pred.failed ? null : [...flaggedSteps(pred, threshold)].sort((a, b) => a - b) };
}

export interface DeltaPerSample {
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
  f1: number;
}

const safe = (a: number, b: number): number => (b > 0 ? a / b : 0);

export function deltaPerSample(gold: readonly number[], predicted: readonly number[], filter: boolean): DeltaPerSample {
  const g = new Set(gold);
  const last = Math.max(...gold);
  const p = new Set(filter ? predicted.filter((x) => x <= last) : predicted);
  const tp = [...p].filter((x) => g.has(x)).length;
  const fp = p.size - tp;
  const fn = [...g].filter((x) => !p.has(x)).length;
  const precision = safe(tp, tp + fp);
  const recall = safe(tp, tp + fn);
  return { tp, fp, fn, precision, recall, f1: precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0 };
}

const VARIANTS = ['', 'unfiltered_'] as const;
const FIELDS = ['macro_precision', 'macro_recall', 'macro_f1', 'micro_precision', 'micro_recall', 'micro_f1'] as const;
export type DeltaKey = `${(typeof VARIANTS)[number]}${(typeof FIELDS)[number]}`;

export function deltaAggregator(samples: readonly DeltaSample[]): Aggregator<DeltaKey> & { scored: number; unparsed: number; no_gold: number } {
  const scored = samples.map((s) => s.gold.length > 0 && s.predicted !== null);
  const per = VARIANTS.map((v) => samples.map((s, i) => (scored[i] ? deltaPerSample(s.gold, s.predicted!, v === '') : null)));
  const cols = per.map((rows) => {
    const col = (k: keyof DeltaPerSample) => Float64Array.from(rows, (r) => (r ? r[k] : 0));
    return { tp: col('tp'), fp: col('fp'), fn: col('fn'), p: col('precision'), r: col('recall'), f1: col('f1') };
  });
  const isScored = Float64Array.from(scored, (b) => (b ? 1 : 0));
  return {
    n: samples.length,
    keys: VARIANTS.flatMap((v) => FIELDS.map((f) => `${v}${f}` as DeltaKey)),
    scored: scored.filter(Boolean).length,
    unparsed: samples.filter((s) => s.gold.length > 0 && s.predicted === null).length,
    no_gold: samples.filter((s) => s.gold.length === 0).length,
    compute(w) {
      const out = {} as Record<DeltaKey, number>;
      const n = wsum(isScored, w);
      VARIANTS.forEach((v, i) => {
        const c = cols[i]!;
        const tp = wsum(c.tp, w), fp = wsum(c.fp, w), fn = wsum(c.fn, w);
        const mp = safe(tp, tp + fp), mr = safe(tp, tp + fn);
        out[`${v}macro_precision`] = n > 0 ? wsum(c.p, w) / n : NaN;
        out[`${v}macro_recall`] = n > 0 ? wsum(c.r, w) / n : NaN;
        out[`${v}macro_f1`] = n > 0 ? wsum(c.f1, w) / n : NaN;
        out[`${v}micro_precision`] = mp;
        out[`${v}micro_recall`] = mr;
        out[`${v}micro_f1`] = mp + mr > 0 ? (2 * mp * mr) / (mp + mr) : 0;
      });
      return out;
    },
  };
}
