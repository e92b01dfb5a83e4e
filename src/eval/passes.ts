import type { Defect } from '../../schemas/defect.js';
import type { CallUsage } from '../../schemas/usage.js';
import type { Verdict } from '../../schemas/verdict.js';
import { type Aggregator, bootstrapMany } from './metrics/bootstrap.js';
import { recordConfusion, stepAggregator } from './metrics/step.js';
import { predictionFromDefects } from './predictions.js';
import type { Estimate, ScoreOptions } from './score.js';
import type { StepGold, StepPrediction } from './types.js';

/**
 * Ladder rungs for the verification passes (removal pass, evidence arbiter), read back from
 * verdicts that ran them: both passes see the same Phase 2 consensus, so the consensus, the
 * consensus with only one pass applied, and the final verdict (both) all follow from
 * `defects`, `dropped_negatives` and `negative_adjudications` without another model call.
 */

const key = (d: Defect): string => `${d.statement_refs.join(',')}|${d.impact}|${d.what_went_wrong}`;

function unique(defects: readonly Defect[]): Defect[] {
  const seen = new Map<string, Defect>();
  for (const d of defects) if (!seen.has(key(d))) seen.set(key(d), d);
  return [...seen.values()];
}

export type PassRung = 'none' | 'removal' | 'arbiter';

/** The defects the verdict would have had with only `rung` applied ('none': Phase 2's consensus). */
export function defectsWith(v: Verdict, rung: PassRung): Defect[] {
  const adj = v.negative_adjudications ?? [];
  const joined = adj.filter((a) => a.origin === 'dissent' && a.ruling === 'upheld').map((a) => a.defect);
  const rejected = adj.filter((a) => a.origin === 'split_vote' && a.ruling === 'rejected').map((a) => a.defect);
  const dropped = (v.dropped_negatives ?? []).map((x) => x.defect);
  const joinedKeys = new Set(joined.map(key));
  const consensus = unique([...v.defects.filter((d) => !joinedKeys.has(key(d))), ...dropped, ...rejected]);
  if (rung === 'none') return consensus;
  const gone = new Set((rung === 'removal' ? dropped : rejected).map(key));
  return [...consensus.filter((d) => !gone.has(key(d))), ...(rung === 'arbiter' ? joined : [])];
}

export interface PassSystem {
  name: string;
  predictions: Map<string, StepPrediction>;
  usage: Map<string, CallUsage[]>;
}

/** Calls a rung would have made: the verdict's, less the passes it leaves out. */
const LEFT_OUT: Record<PassRung, ReadonlySet<string>> = { none: new Set(['removal', 'arbiter']), removal: new Set(['arbiter']), arbiter: new Set(['removal']) };

export const PASS_RUNG_NAMES: Record<PassRung, string> = { none: 'jury, no passes', removal: 'jury + removal pass', arbiter: 'jury + evidence arbiter' };

/** The pass rungs a set of verdicts supports: the consensus, then each pass that ran alone. */
export function passRungs(verdicts: readonly Verdict[]): PassSystem[] {
  const removal = verdicts.some((v) => v.dropped_negatives !== undefined);
  const arbiter = verdicts.some((v) => v.negative_adjudications !== undefined);
  if (!removal && !arbiter) return [];
  const rungs: PassRung[] = ['none', ...(removal && arbiter ? (['removal', 'arbiter'] as const) : [])];
  return rungs.map((r) => ({
    name: PASS_RUNG_NAMES[r],
    predictions: new Map(verdicts.map((v) => [v.record_id, predictionFromDefects(v.record_id, v.n_steps, defectsWith(v, r), v.error !== null)])),
    usage: new Map(verdicts.map((v) => [v.record_id, v.usage.filter((u) => !LEFT_OUT[r].has(u.phase))])),
  }));
}

/** A rung against a baseline on the same records: differences in points (rung minus baseline). */
export interface PairedDelta {
  system: string;
  baseline: string;
  precision: Estimate;
  recall: Estimate;
  balanced_f1: Estimate;
}

const DELTA_KEYS = ['precision', 'recall', 'balanced_f1'] as const;

/**
 * Paired record-level bootstrap of the differences: each resample weighs the same records in
 * both systems, so the interval is of the difference itself, narrower than two separate CIs.
 * (Kept local and small; a generic paired bootstrap is expected in metrics/bootstrap.ts.)
 */
export function pairedDeltas(golds: readonly StepGold[], baseline: Pick<PassSystem, 'name' | 'predictions'>, rungs: ReadonlyArray<Pick<PassSystem, 'name' | 'predictions'>>, opts: ScoreOptions): PairedDelta[] {
  const confusions = (s: Pick<PassSystem, 'predictions'>) => golds.map((g) => recordConfusion(g, s.predictions.get(g.record_id) ?? { record_id: g.record_id, n_steps: g.n_steps, failed: true, impacts: new Map() }, opts) ?? { tp: 0, fp: 0, tn: 0, fn: 0 });
  const base = stepAggregator(confusions(baseline));
  const aggs: Aggregator<string>[] = rungs.map((r) => {
    const agg = stepAggregator(confusions(r));
    return {
      n: golds.length,
      keys: DELTA_KEYS,
      compute(w) {
        const a = agg.compute(w);
        const b = base.compute(w);
        return Object.fromEntries(DELTA_KEYS.map((k) => [k, a[k] - b[k]]));
      },
    };
  });
  const cis = bootstrapMany(aggs, { resamples: opts.resamples, seed: opts.seed, level: opts.level });
  const fin = (x: number | undefined): number | null => (x !== undefined && Number.isFinite(x) ? x : null);
  return rungs.map((r, i) => {
    const point = aggs[i]!.compute(null);
    const est = (k: (typeof DELTA_KEYS)[number]): Estimate => ({ value: fin(point[k]), lo: fin(cis[i]![k]?.lo), hi: fin(cis[i]![k]?.hi) });
    return { system: r.name, baseline: baseline.name, precision: est('precision'), recall: est('recall'), balanced_f1: est('balanced_f1') };
  });
}
