import { describe, expect, it } from 'vitest';
import { stepLabels } from '../../src/eval/gold.js';
import { type Aggregator, bootstrap, wsum } from '../../src/eval/metrics/bootstrap.js';
import { metricsFromConfusion, recordConfusion, stepAggregator } from '../../src/eval/metrics/step.js';
import { earliestFlagged, flaggedSteps, predictionsFromShardRows } from '../../src/eval/predictions.js';
import { createRng } from '../../src/util/prng.js';
import { gold, prediction } from './helpers.js';

describe('gold step labels', () => {
  it('first-error benchmarks: before the error correct, the error erroneous, after it unlabelled (or erroneous with propagation)', () => {
    const g = gold('r', 5, { first_error_step: 3 }, 'first_error');
    expect(stepLabels(g, false)).toEqual([0, 0, 1, null, null]);
    expect(stepLabels(g, true)).toEqual([0, 0, 1, 1, 1]);
    expect(stepLabels(gold('c', 3, { first_error_step: null }, 'first_error'), true)).toEqual([0, 0, 0]);
  });

  it('all-steps benchmarks label every step; propagation adds the steps after the first error', () => {
    const g = gold('r', 6, { error_steps: [2, 4, 9] }, 'all_steps');
    expect(g.error_steps).toEqual([2, 4]); // 9 is past the trace
    expect(stepLabels(g, false)).toEqual([0, 1, 0, 1, 0, 0]);
    expect(stepLabels(g, true)).toEqual([0, 1, 1, 1, 1, 1]);
  });
});

describe('step metrics', () => {
  it('computes the paper metrics from a confusion', () => {
    const m = metricsFromConfusion({ tp: 30, fn: 10, fp: 20, tn: 140 });
    expect(m.recall).toBeCloseTo(0.75, 12);
    expect(m.specificity).toBeCloseTo(140 / 160, 12);
    expect(m.precision).toBeCloseTo(0.6, 12);
    expect(m.balanced_f1).toBeCloseTo((2 * 0.75 * 0.875) / (0.75 + 0.875), 12);
    expect(m.balanced_accuracy).toBeCloseTo((0.75 + 0.875) / 2, 12);
    expect(m.accuracy).toBeCloseTo(170 / 200, 12);
    expect(m.f1).toBeCloseTo((2 * 0.6 * 0.75) / 1.35, 12);
    expect(Number.isNaN(metricsFromConfusion({ tp: 0, fn: 0, fp: 0, tn: 5 }).recall)).toBe(true);
  });

  it('applies the severity threshold and counts failed records per policy', () => {
    const g = gold('r', 4, { error_steps: [2] }, 'all_steps');
    const p = prediction('r', 4, { 1: 'neutral', 2: 'minor', 4: 'fatal' });
    expect([...flaggedSteps(p, 'minor')].sort()).toEqual([2, 4]);
    expect(earliestFlagged(p, 'major')).toBe(4);
    expect(recordConfusion(g, p, { threshold: 'minor', propagate: false, failed: 'wrong' })).toEqual({ tp: 1, fn: 0, fp: 1, tn: 2 });
    expect(recordConfusion(g, p, { threshold: 'major', propagate: false, failed: 'wrong' })).toEqual({ tp: 0, fn: 1, fp: 1, tn: 2 });
    const failed = prediction('r', 4, null);
    expect(recordConfusion(g, failed, { threshold: 'minor', propagate: false, failed: 'wrong' })).toEqual({ tp: 0, fn: 1, fp: 3, tn: 0 });
    expect(recordConfusion(g, failed, { threshold: 'minor', propagate: false, failed: 'flag_all' })).toEqual({ tp: 1, fn: 0, fp: 3, tn: 0 });
    expect(recordConfusion(g, failed, { threshold: 'minor', propagate: false, failed: 'exclude' })).toBeNull();
  });

  it('reads predictions back from shard rows at any threshold', () => {
    const preds = predictionsFromShardRows(
      [
        { record_id: 'a', n_steps: 3, error: null },
        { record_id: 'b', n_steps: 2, error: 'too few jurors' },
      ],
      [
        { record_id: 'a', step_index: 1, max_impact: null },
        { record_id: 'a', step_index: 2, max_impact: 'minor' },
        { record_id: 'a', step_index: 3, max_impact: 'fatal' },
      ],
    );
    expect([...flaggedSteps(preds.get('a')!, 'major')]).toEqual([3]);
    expect(preds.get('b')!.failed).toBe(true);
  });
});

describe('record-level bootstrap', () => {
  it('is seeded, brackets the estimate and has the width of a normal interval on a simple mean', () => {
    const rng = createRng(['bootstrap-test']);
    const xs = Float64Array.from({ length: 2000 }, () => (rng.chance(0.3) ? 1 : 0));
    const mean: Aggregator<'mean'> = { n: xs.length, keys: ['mean'], compute: (w) => ({ mean: wsum(xs, w) / (w ? wsum(new Float64Array(xs.length).fill(1), w) : xs.length) }) };
    const a = bootstrap(mean, { resamples: 2000, seed: 1 });
    const b = bootstrap(mean, { resamples: 2000, seed: 1 });
    const c = bootstrap(mean, { resamples: 2000, seed: 2 });
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    const m = mean.compute(null).mean;
    expect(a.mean.lo).toBeLessThan(m);
    expect(a.mean.hi).toBeGreaterThan(m);
    const se = Math.sqrt((m * (1 - m)) / xs.length);
    expect((a.mean.hi - a.mean.lo) / (2 * 1.96 * se)).toBeGreaterThan(0.85);
    expect((a.mean.hi - a.mean.lo) / (2 * 1.96 * se)).toBeLessThan(1.15);
  });

  it('resamples records, not steps: a record whose steps always agree widens the interval', () => {
    // 100 records of 20 steps each, all right or all wrong: the effective sample is 100, not 2000.
    const conf = Array.from({ length: 100 }, (_, i) => (i % 2 ? { tp: 10, fn: 0, fp: 0, tn: 10 } : { tp: 0, fn: 10, fp: 10, tn: 0 }));
    const ci = bootstrap(stepAggregator(conf), { resamples: 2000, seed: 3 });
    expect(ci.accuracy.hi - ci.accuracy.lo).toBeGreaterThan(0.15); // ±0.1 for n = 100; ±0.02 if steps were independent
  });
});
