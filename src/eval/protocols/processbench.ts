import type { Impact } from '../../../schemas/defect.js';
import type { Aggregator } from '../metrics/bootstrap.js';
import { earliestFlagged } from '../predictions.js';
import type { StepGold, StepPrediction } from '../types.js';

/**
 * ProcessBench's protocol: the judge names one index, the earliest erroneous step (0-based) or
 * -1. Per split, acc_err is the share of erroneous samples whose index equals the label exactly,
 * acc_cor the share of clean samples answered -1, F1 their harmonic mean; the headline is the
 * mean F1 over splits. An unparseable answer matches nothing. Undefined values (a split with no
 * erroneous or no clean samples, or both accuracies 0) are NaN, as the benchmark's numpy
 * arithmetic gives. The same arithmetic serves BIG-Bench Mistake and MR-Ben (first error only).
 */
export interface FirstErrorSample {
  split: string;
  /** 0-based earliest error, -1 when clean */
  label: number;
  /** 0-based earliest flagged step, -1 when none; null when unparseable */
  prediction: number | null;
}

export function firstErrorSample(gold: StepGold, pred: StepPrediction, threshold: Impact): FirstErrorSample {
  const first = pred.failed ? null : earliestFlagged(pred, threshold);
  return { split: gold.split, label: gold.first_error === null ? -1 : gold.first_error - 1, prediction: pred.failed ? null : first === null ? -1 : first - 1 };
}

export type FirstErrorKey = 'average_f1' | `${'f1' | 'acc_err' | 'acc_cor'}:${string}`;

const f1 = (a: number, b: number): number => (2 * a * b) / (a + b); // 0/0 -> NaN, as numpy

export function firstErrorAggregator(samples: readonly FirstErrorSample[]): Aggregator<FirstErrorKey> & { splits: string[] } {
  const splits = [...new Set(samples.map((s) => s.split))];
  const splitOf = Int32Array.from(samples, (s) => splits.indexOf(s.split));
  const isErr = Uint8Array.from(samples, (s) => (s.label >= 0 ? 1 : 0));
  const hit = Uint8Array.from(samples, (s) => (s.label >= 0 ? s.prediction === s.label : s.prediction === -1) ? 1 : 0);
  const keys: FirstErrorKey[] = ['average_f1', ...splits.flatMap((sp) => [`f1:${sp}`, `acc_err:${sp}`, `acc_cor:${sp}`] as FirstErrorKey[])];
  return {
    n: samples.length,
    keys,
    splits,
    compute(w) {
      // [errN, errHit, corN, corHit] per split, one pass over the records.
      const acc = new Float64Array(splits.length * 4);
      for (let i = 0; i < samples.length; i++) {
        const m = w === null ? 1 : w[i]!;
        if (m === 0) continue;
        const o = splitOf[i]! * 4 + (isErr[i] ? 0 : 2);
        acc[o] = acc[o]! + m;
        acc[o + 1] = acc[o + 1]! + m * hit[i]!;
      }
      const out = {} as Record<FirstErrorKey, number>;
      let sum = 0;
      splits.forEach((sp, j) => {
        const accErr = acc[j * 4 + 1]! / acc[j * 4]!;
        const accCor = acc[j * 4 + 3]! / acc[j * 4 + 2]!;
        out[`acc_err:${sp}`] = accErr;
        out[`acc_cor:${sp}`] = accCor;
        sum += out[`f1:${sp}`] = f1(accErr, accCor);
      });
      out.average_f1 = splits.length ? sum / splits.length : NaN;
      return out;
    },
  };
}
