import type { Defect } from '../../schemas/defect.js';
import type { CallUsage } from '../../schemas/usage.js';
import type { Verdict } from '../../schemas/verdict.js';
import { type Aggregator, bootstrapMany } from './metrics/bootstrap.js';
import { recordConfusion, stepAggregator } from './metrics/step.js';
import { predictionFromDefects } from './predictions.js';
import type { Estimate, ScoreOptions } from './score.js';
import type { StepGold, StepPrediction } from './types.js';

/**
 * Ladder rungs for the verification passes (deterministic grounding, removal pass, evidence
 * arbiter), read back from verdicts that ran them, without another model call. Grounding runs
 * first on Phase 2's consensus and records every defect it saw (cited steps, severity), so the
 * consensus before grounding follows from `grounding.checks`; the removal pass and the arbiter
 * both see the grounded consensus, so it, each pass alone and the final verdict (both) follow
 * from `defects`, `dropped_negatives` and `negative_adjudications`. Voter corrections do not
 * change a step prediction, and grounding-checker calls in deliberation cannot be undone: a
 * deliberation run's rungs all carry them.
 */

const key = (d: Defect): string => `${d.statement_refs.join(',')}|${d.impact}|${d.what_went_wrong}`;

function unique(defects: readonly Defect[]): Defect[] {
  const seen = new Map<string, Defect>();
  for (const d of defects) if (!seen.has(key(d))) seen.set(key(d), d);
  return [...seen.values()];
}

/** 'ungrounded': Phase 2's consensus before grounding; 'none': the consensus the passes saw. */
export type PassRung = 'ungrounded' | 'none' | 'removal' | 'arbiter';

/** The consensus before grounding (cited steps and severity of every defect it checked); null when a check lacks the severity. */
function ungroundedConsensus(v: Verdict): Defect[] | null {
  const checks = v.grounding?.checks ?? [];
  if (checks.some((c) => c.impact === undefined)) return null;
  return checks.map((c) => ({ statement_refs: c.cited_refs.split(',').filter((x) => x !== '').map(Number), impact: c.impact!, evidence: c.evidence, what_went_wrong: '' }));
}

/** The defects the verdict would have had with only `rung` applied ('none': the consensus the passes saw). */
export function defectsWith(v: Verdict, rung: PassRung): Defect[] {
  if (rung === 'ungrounded') return v.grounding ? (ungroundedConsensus(v) ?? []) : defectsWith(v, 'none');
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
const LEFT_OUT: Record<PassRung, ReadonlySet<string>> = { ungrounded: new Set(['removal', 'arbiter']), none: new Set(['removal', 'arbiter']), removal: new Set(['arbiter']), arbiter: new Set(['removal']) };

/** Rung names without grounding, then with it (the baseline is always 'jury, no passes'). */
export const PASS_RUNG_NAMES: Record<PassRung, string> = { ungrounded: 'jury, no passes', none: 'jury, no passes', removal: 'jury + removal pass', arbiter: 'jury + evidence arbiter' };
export const GROUNDED_RUNG_NAMES: Record<PassRung, string> = { ungrounded: 'jury, no passes', none: 'jury + grounding', removal: 'jury + grounding + removal pass', arbiter: 'jury + grounding + evidence arbiter' };

/** The rungs a set of verdicts supports: the consensus (before grounding, then after it), then each pass that ran alone. */
function rungsOf(verdicts: readonly Verdict[]): { rungs: PassRung[]; names: Record<PassRung, string> } {
  const removal = verdicts.some((v) => v.dropped_negatives !== undefined);
  const arbiter = verdicts.some((v) => v.negative_adjudications !== undefined);
  const both: PassRung[] = removal && arbiter ? ['removal', 'arbiter'] : [];
  // The rung before grounding needs every grounded verdict's severities, which verdicts written
  // before they were kept lack; the pass rungs are still named for the grounding they carry.
  const grounded = verdicts.some((v) => v.grounding);
  const names = grounded ? GROUNDED_RUNG_NAMES : PASS_RUNG_NAMES;
  const before: PassRung[] = grounded && verdicts.every((v) => !v.grounding || ungroundedConsensus(v) !== null) ? ['ungrounded'] : [];
  return { rungs: [...before, ...(removal || arbiter ? (['none'] as const) : []), ...both], names };
}

/** The pass rungs a set of verdicts supports, each scored from the verdicts alone. */
export function passRungs(verdicts: readonly Verdict[]): PassSystem[] {
  const { rungs, names } = rungsOf(verdicts);
  return rungs.map((r) => ({
    name: names[r],
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
