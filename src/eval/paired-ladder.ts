import type { System } from './ladder.js';
import { type Aggregator, pairedBootstrapDifferences } from './metrics/bootstrap.js';
import { recordConfusion, stepAggregator } from './metrics/step.js';
import { predictionFor, type ScoreOptions } from './score.js';
import type { MissingReason, StepGold } from './types.js';

/** One pair of ladder systems: Balanced F1 of `a` minus that of `b`, with a paired 95 % interval. */
export interface PairedRow {
  a: string;
  b: string;
  metric: 'balanced_f1';
  diff: number | null;
  lo: number | null;
  hi: number | null;
}

const num = (x: number): number | null => (Number.isFinite(x) ? x : null);

/**
 * Every two systems of the ladder compared on the same records (the paper's tables compare
 * rungs scored on one record set): the pooled step Balanced F1 difference, resampled by record
 * with both systems on each draw. Records enter exactly as scoreSystems scores them.
 */
export function pairedLadder(golds: readonly StepGold[], systems: readonly System[], opts: ScoreOptions, reasons?: ReadonlyMap<string, MissingReason>): PairedRow[] {
  if (systems.length < 2 || golds.length === 0) return [];
  const aggs = systems.map((s) => stepAggregator(golds.map((g) => recordConfusion(g, predictionFor(g, s.predictions, reasons), opts) ?? { tp: 0, fp: 0, tn: 0, fn: 0 })) as Aggregator<string>);
  const pairs: Array<[number, number]> = [];
  for (let i = 0; i < systems.length; i++) for (let j = i + 1; j < systems.length; j++) pairs.push([i, j]);
  return pairedBootstrapDifferences(aggs, 'balanced_f1', pairs, { resamples: opts.resamples, seed: opts.seed, level: opts.level }).map((d) => ({
    a: systems[d.a]!.name,
    b: systems[d.b]!.name,
    metric: 'balanced_f1',
    diff: num(d.diff),
    lo: num(d.lo),
    hi: num(d.hi),
  }));
}
