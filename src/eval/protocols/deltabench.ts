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
  /** the record's `task_l1` (math, code, ...), for the per-domain rows */
  task?: string;
}

/**
 * A failed verdict is an empty critique, which the official evaluator leaves unscored; a record
 * with no verdict at all (MissingPolicy `wrong`) answers "no error", which it scores 0.
 */
export function deltaSample(gold: StepGold, pred: StepPrediction, threshold: Impact): DeltaSample {
  const predicted = pred.missing ? [] : pred.failed ? null : [...flaggedSteps(pred, threshold)].sort((a, b) => a - b);
  return { gold: gold.raw_error_steps, predicted, task: gold.split };
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
type Field = (typeof FIELDS)[number];
/** `<field>:<task_l1>` are the official script's per-domain rows (filtered variant, as it reports them). */
export type DeltaKey = `${(typeof VARIANTS)[number]}${Field}` | `${Field}:${string}`;

type Cols = Record<'tp' | 'fp' | 'fn' | 'p' | 'r' | 'f1' | 'scored', Float64Array>;

/** Macro means over the scored samples, micro from pooled counts, for one group of samples. */
function groupMetrics(c: Cols, w: Uint32Array | null): Record<Field, number> {
  const n = wsum(c.scored, w);
  const tp = wsum(c.tp, w), fp = wsum(c.fp, w), fn = wsum(c.fn, w);
  const mp = safe(tp, tp + fp), mr = safe(tp, tp + fn);
  return {
    macro_precision: n > 0 ? wsum(c.p, w) / n : NaN,
    macro_recall: n > 0 ? wsum(c.r, w) / n : NaN,
    macro_f1: n > 0 ? wsum(c.f1, w) / n : NaN,
    micro_precision: mp,
    micro_recall: mr,
    micro_f1: mp + mr > 0 ? (2 * mp * mr) / (mp + mr) : 0,
  };
}

export function deltaAggregator(samples: readonly DeltaSample[]): Aggregator<DeltaKey> & { scored: number; unparsed: number; no_gold: number; tasks: string[] } {
  const scored = samples.map((s) => s.gold.length > 0 && s.predicted !== null);
  const tasks = [...new Set(samples.flatMap((s) => (s.task === undefined ? [] : [s.task])))];
  const per = VARIANTS.map((v) => samples.map((s, i) => (scored[i] ? deltaPerSample(s.gold, s.predicted!, v === '') : null)));
  const colsOf = (rows: Array<DeltaPerSample | null>, keep: (i: number) => boolean): Cols => {
    const col = (k: keyof DeltaPerSample) => Float64Array.from(rows, (r, i) => (r && keep(i) ? r[k] : 0));
    return { tp: col('tp'), fp: col('fp'), fn: col('fn'), p: col('precision'), r: col('recall'), f1: col('f1'), scored: Float64Array.from(rows, (r, i) => (r && keep(i) ? 1 : 0)) };
  };
  const all = per.map((rows) => colsOf(rows, () => true));
  const byTask = tasks.map((t) => colsOf(per[0]!, (i) => samples[i]!.task === t));
  return {
    n: samples.length,
    keys: [...VARIANTS.flatMap((v) => FIELDS.map((f) => `${v}${f}` as DeltaKey)), ...tasks.flatMap((t) => FIELDS.map((f) => `${f}:${t}` as DeltaKey))],
    scored: scored.filter(Boolean).length,
    unparsed: samples.filter((s) => s.gold.length > 0 && s.predicted === null).length,
    no_gold: samples.filter((s) => s.gold.length === 0).length,
    tasks,
    compute(w) {
      const out = {} as Record<DeltaKey, number>;
      VARIANTS.forEach((v, i) => {
        const m = groupMetrics(all[i]!, w);
        for (const f of FIELDS) out[`${v}${f}`] = m[f];
      });
      tasks.forEach((t, i) => {
        const m = groupMetrics(byTask[i]!, w);
        for (const f of FIELDS) out[`${f}:${t}`] = m[f];
      });
      return out;
    },
  };
}
