import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBenchmark } from '../../src/eval/adapters/index.js';
import { MISSING_DATA_MESSAGE, sharedDataDir } from '../../src/eval/data.js';
import { goldOf } from '../../src/eval/gold.js';
import { DEFAULT_SCORE_OPTIONS, scoreSystems } from '../../src/eval/score.js';
import type { StepPrediction } from '../../src/eval/types.js';
import { createRng } from '../../src/util/prng.js';
import { prediction } from './helpers.js';

/**
 * Trivial predictors on the real ProcessBench files, scored by our path (adapter -> gold ->
 * predictions -> scoreSystems) and checked against arithmetic done by hand from the label
 * counts of the raw JSON, read here independently of the adapter.
 */
const dir = sharedDataDir();
const SPLITS = ['gsm8k', 'math', 'olympiadbench', 'omnimath'];

interface Raw {
  split: string;
  id: string;
  n: number;
  label: number;
}

describe.skipIf(!dir)(`ProcessBench baselines on the real files${dir ? '' : ` (skipped: ${MISSING_DATA_MESSAGE})`}`, () => {
  const raw: Raw[] = dir
    ? SPLITS.flatMap((split) => (JSON.parse(readFileSync(join(dir, 'processbench', `${split}.json`), 'utf8')) as Array<{ id: string; steps: string[]; label: number }>).map((x) => ({ split, id: x.id, n: x.steps.length, label: x.label })))
    : [];
  const loaded = dir ? loadBenchmark('processbench', join(dir, 'processbench')) : null;
  const golds = loaded ? loaded.records.map((r) => goldOf(r, loaded.scope)) : [];
  const idOf = (r: Raw) => `processbench/${r.split}/${r.id}`;

  function score(name: string, predict: (r: Raw) => number) {
    const predictions = new Map<string, StepPrediction>(raw.map((r) => {
      const p = predict(r);
      return [idOf(r), prediction(idOf(r), r.n, p < 0 ? {} : { [p + 1]: 'major' })];
    }));
    const [s] = scoreSystems('processbench', golds, [{ name, kind: 'final', predictions }], { ...DEFAULT_SCORE_OPTIONS, resamples: 200 });
    return s!;
  }

  /** Label counts per split, by hand. */
  const counts = (split: string) => {
    const rows = raw.filter((r) => r.split === split);
    return { err: rows.filter((r) => r.label >= 0).length, cor: rows.filter((r) => r.label < 0).length, atZero: rows.filter((r) => r.label === 0).length };
  };
  // Labelled steps: all steps of clean traces, steps up to and including the first error otherwise.
  const positives = raw.filter((r) => r.label >= 0).length;
  const negatives = raw.reduce((a, r) => a + (r.label < 0 ? r.n : r.label), 0);

  it('the adapter keeps every record and its label', () => {
    expect(raw.length).toBe(3400);
    expect(golds.length).toBe(3400);
    expect(SPLITS.map((s) => counts(s))).toEqual([
      { err: 207, cor: 193, atZero: 37 },
      { err: 594, cor: 406, atZero: 114 },
      { err: 661, cor: 339, atZero: 48 },
      { err: 759, cor: 241, atZero: 72 },
    ]);
  });

  it('all-correct predictor: ProcessBench F1 0 on every split; step recall 0, specificity 1', () => {
    const s = score('all correct', () => -1);
    for (const sp of SPLITS) {
      expect(s.protocol.metrics[`acc_err:${sp}`]!.value).toBe(0);
      expect(s.protocol.metrics[`acc_cor:${sp}`]!.value).toBe(1);
      expect(s.protocol.metrics[`f1:${sp}`]!.value).toBe(0);
    }
    expect(s.protocol.metrics.average_f1!.value).toBe(0);
    expect(s.confusion).toEqual({ tp: 0, fp: 0, fn: positives, tn: negatives });
    expect(s.step.balanced_f1.value).toBe(0);
    expect(s.step.f1.value).toBe(0);
    expect(s.step.precision.value).toBeNull(); // nothing flagged: undefined
    expect(s.step.accuracy.value).toBeCloseTo(negatives / (negatives + positives), 12);
  });

  it('always-step-0 predictor: acc_err = share of label 0, acc_cor 0, so F1 0; step F1 from the counts', () => {
    const s = score('step 0', () => 0);
    for (const sp of SPLITS) {
      const c = counts(sp);
      expect(s.protocol.metrics[`acc_err:${sp}`]!.value).toBeCloseTo(c.atZero / c.err, 12);
      expect(s.protocol.metrics[`acc_cor:${sp}`]!.value).toBe(0);
      expect(s.protocol.metrics[`f1:${sp}`]!.value).toBe(0);
    }
    const tp = raw.filter((r) => r.label === 0).length;
    const fp = raw.length - tp; // step 1 is a labelled correct step in every other trace
    const fn = positives - tp;
    expect(s.confusion).toEqual({ tp, fp, fn, tn: negatives - fp });
    expect(s.step.f1.value).toBeCloseTo((2 * tp) / (2 * tp + fp + fn), 12);
    const recall = tp / positives;
    const spec = (negatives - fp) / negatives;
    expect(s.step.balanced_f1.value).toBeCloseTo((2 * recall * spec) / (recall + spec), 12);
  });

  it('random predictor (seeded): matches a direct count and the expectation from the step counts', () => {
    const rng = createRng(['random-predictor', 7]);
    const guess = new Map(raw.map((r) => [idOf(r), rng.int(-1, r.n - 1)]));
    const s = score('random', (r) => guess.get(idOf(r))!);
    let f1Sum = 0;
    let expectedSum = 0;
    for (const sp of SPLITS) {
      const rows = raw.filter((r) => r.split === sp);
      const err = rows.filter((r) => r.label >= 0);
      const cor = rows.filter((r) => r.label < 0);
      const accErr = err.filter((r) => guess.get(idOf(r)) === r.label).length / err.length;
      const accCor = cor.filter((r) => guess.get(idOf(r)) === -1).length / cor.length;
      const f1 = (2 * accErr * accCor) / (accErr + accCor);
      expect(s.protocol.metrics[`f1:${sp}`]!.value).toBeCloseTo(f1, 12);
      f1Sum += f1;
      // A uniform guess over n + 1 answers is right with probability 1 / (n + 1).
      const eErr = err.reduce((a, r) => a + 1 / (r.n + 1), 0) / err.length;
      const eCor = cor.reduce((a, r) => a + 1 / (r.n + 1), 0) / cor.length;
      expectedSum += (2 * eErr * eCor) / (eErr + eCor);
      expect(Math.abs(accErr - eErr)).toBeLessThan(4 * Math.sqrt(eErr / err.length));
    }
    expect(s.protocol.metrics.average_f1!.value).toBeCloseTo(f1Sum / 4, 12);
    expect(Math.abs(s.protocol.metrics.average_f1!.value! - expectedSum / 4)).toBeLessThan(0.05);
    // Step level: one flagged step per trace (or none) against the labelled steps.
    let tp = 0, fp = 0;
    for (const r of raw) {
      const g = guess.get(idOf(r))!;
      if (g < 0) continue;
      if (g === r.label) tp++;
      else if (r.label < 0 || g < r.label) fp++; // steps after the first error are unlabelled
    }
    expect(s.confusion).toEqual({ tp, fp, fn: positives - tp, tn: negatives - fp });
  });
});
