import type { Impact } from '../../schemas/defect.js';
import { type Aggregator, bootstrapMany } from './metrics/bootstrap.js';
import { type Confusion, recordConfusion, type StepMetric, stepAggregator } from './metrics/step.js';
import { deltaAggregator, deltaSample } from './protocols/deltabench.js';
import { firstErrorAggregator, firstErrorSample } from './protocols/processbench.js';
import { prmAggregator, prmSample } from './protocols/prmbench.js';
import type { BenchmarkName, FailedPolicy, MissingPolicy, MissingReason, StepGold, StepPrediction } from './types.js';

export interface ScoreOptions {
  threshold: Impact;
  propagate: boolean;
  failed: FailedPolicy;
  /** selected records without any verdict: scored as wrong answers, or left out */
  missing: MissingPolicy;
  resamples: number;
  seed: number | string;
  level: number;
}

export const DEFAULT_SCORE_OPTIONS: ScoreOptions = { threshold: 'minor', propagate: false, failed: 'wrong', missing: 'wrong', resamples: 10_000, seed: 0, level: 0.95 };

/** A point estimate with its bootstrap interval; null where undefined. */
export interface Estimate {
  value: number | null;
  lo: number | null;
  hi: number | null;
}

export interface ProtocolScore {
  name: string;
  /** the metric the benchmark's leaderboard reports */
  headline: string;
  metrics: Record<string, Estimate>;
  counts: Record<string, number>;
}

export interface SystemScore {
  system: string;
  kind: string;
  records: { scored: number; failed: number; excluded: number; missing: number; stray_defects: number };
  confusion: Confusion;
  step: Record<StepMetric, Estimate>;
  protocol: ProtocolScore;
}

export interface SystemPredictions {
  name: string;
  kind: string;
  predictions: ReadonlyMap<string, StepPrediction>;
}

/** Which gold records a set of predictions covers, and what could not be joined. */
export interface Matched {
  /** the records to score: every selected one under `missing: wrong`, else the joined ones */
  golds: StepGold[];
  /** selected records without a usable verdict, all reasons together */
  missing: number;
  missing_by_reason: Record<MissingReason, number>;
  /** record id -> why it has no verdict (what scoreSystems gives each system for it) */
  reasons: Map<string, MissingReason>;
  /** predictions whose record id is not in the benchmark file */
  unmatched: string[];
  /** joined by id but with a different step count (the run re-segmented the trace) */
  mismatched: Array<{ record_id: string; gold_steps: number; predicted_steps: number }>;
}

/**
 * Join gold to predictions. A selected record is missing when nobody predicted it (`unreadable`
 * when its verdict line could not be read) or its verdict has another step count; `policy`
 * decides whether missing records stay in `golds` (to be scored as wrong) or leave.
 */
export function matchRecords(golds: readonly StepGold[], predictions: ReadonlyMap<string, StepPrediction>, policy: MissingPolicy = 'wrong', unreadable: ReadonlySet<string> = new Set()): Matched {
  const ids = new Set(golds.map((g) => g.record_id));
  const out: Matched = { golds: [], missing: 0, missing_by_reason: { no_verdict: 0, unreadable: 0, step_count: 0 }, reasons: new Map(), unmatched: [...predictions.keys()].filter((id) => !ids.has(id)), mismatched: [] };
  for (const g of golds) {
    const p = predictions.get(g.record_id);
    const reason: MissingReason | null = !p ? (unreadable.has(g.record_id) ? 'unreadable' : 'no_verdict') : p.n_steps !== g.n_steps ? 'step_count' : null;
    if (p && reason === 'step_count') out.mismatched.push({ record_id: g.record_id, gold_steps: g.n_steps, predicted_steps: p.n_steps });
    if (reason) {
      out.missing++;
      out.missing_by_reason[reason]++;
      out.reasons.set(g.record_id, reason);
    }
    if (!reason || policy === 'wrong') out.golds.push(g);
  }
  return out;
}

/** The prediction a system has for a gold record, or a `missing` one (no verdict, other step count). */
export function predictionFor(g: StepGold, predictions: ReadonlyMap<string, StepPrediction>, reasons?: ReadonlyMap<string, MissingReason>): StepPrediction {
  const p = predictions.get(g.record_id);
  if (p && p.n_steps === g.n_steps) return p;
  const missing: MissingReason = p ? 'step_count' : (reasons?.get(g.record_id) ?? 'no_verdict');
  return { record_id: g.record_id, n_steps: g.n_steps, failed: true, impacts: new Map(), missing };
}

const num = (x: number): number | null => (Number.isFinite(x) ? x : null);

function estimates(point: Record<string, number>, ci: Record<string, { lo: number; hi: number }>): Record<string, Estimate> {
  return Object.fromEntries(Object.keys(point).map((k) => [k, { value: num(point[k]!), lo: num(ci[k]?.lo ?? NaN), hi: num(ci[k]?.hi ?? NaN) }]));
}

/** The benchmark's own protocol as an aggregator over the same records, plus its bookkeeping. */
function protocolOf(benchmark: BenchmarkName, golds: readonly StepGold[], preds: readonly StepPrediction[], opts: ScoreOptions): { name: string; headline: string; agg: Aggregator<string>; counts: Record<string, number> } {
  const t = opts.threshold;
  switch (benchmark) {
    case 'processbench':
    case 'bigbench-mistake':
    case 'mr-ben': {
      const agg = firstErrorAggregator(golds.map((g, i) => firstErrorSample(g, preds[i]!, t)));
      return { name: benchmark === 'processbench' ? 'processbench' : 'first_error (ProcessBench arithmetic)', headline: 'average_f1', agg, counts: { splits: agg.splits.length } };
    }
    case 'prmbench': {
      const agg = prmAggregator(golds.map((g, i) => prmSample(g, preds[i]!, t)));
      return { name: 'prmbench', headline: 'prm_score', agg, counts: { invalid: agg.invalid } };
    }
    case 'deltabench': {
      const agg = deltaAggregator(golds.map((g, i) => deltaSample(g, preds[i]!, t)));
      return { name: 'deltabench', headline: 'macro_f1', agg, counts: { scored: agg.scored, unparsed: agg.unparsed, no_gold: agg.no_gold } };
    }
    case 'hard2verify': {
      // Positive class "correct step"; errors propagate; a missing verdict counts as "wrong step".
      const base = stepAggregator(golds.map((g, i) => recordConfusion(g, preds[i]!, { threshold: t, propagate: true, failed: 'flag_all' })!));
      const agg: Aggregator<string> = {
        n: base.n,
        keys: ['balanced_f1', 'balanced_accuracy', 'tpr', 'tnr'],
        compute(w) {
          const m = base.compute(w);
          return { balanced_f1: m.balanced_f1, balanced_accuracy: m.balanced_accuracy, tpr: m.specificity, tnr: m.recall };
        },
      };
      return { name: 'hard2verify', headline: 'balanced_f1', agg, counts: {} };
    }
  }
}

/**
 * Score several systems on the same records: pooled step metrics (§3.1) and the benchmark's own
 * protocol, each with a paired record-level bootstrap interval.
 */
export function scoreSystems(benchmark: BenchmarkName, golds: readonly StepGold[], systems: readonly SystemPredictions[], opts: ScoreOptions, reasons?: ReadonlyMap<string, MissingReason>): SystemScore[] {
  const built = systems.map((s) => {
    const preds = golds.map((g) => predictionFor(g, s.predictions, reasons));
    const conf = golds.map((g, i) => recordConfusion(g, preds[i]!, opts));
    const step = stepAggregator(conf.map((c) => c ?? { tp: 0, fp: 0, tn: 0, fn: 0 }));
    const protocol = protocolOf(benchmark, golds, preds, opts);
    return { s, preds, conf, step, protocol };
  });
  const aggs = built.flatMap((b) => [b.step as Aggregator<string>, b.protocol.agg as Aggregator<string>]);
  const cis = bootstrapMany(aggs, { resamples: opts.resamples, seed: opts.seed, level: opts.level });
  return built.map((b, i) => ({
    system: b.s.name,
    kind: b.s.kind,
    records: {
      scored: b.conf.filter((c) => c !== null).length,
      failed: b.preds.filter((p) => p.failed && !p.missing).length,
      excluded: b.conf.filter((c) => c === null).length,
      missing: b.preds.filter((p) => p.missing).length,
      stray_defects: b.preds.reduce((n, p) => n + (p.stray_defects ?? 0), 0),
    },
    confusion: b.step.pooled,
    step: estimates(b.step.compute(null), cis[2 * i]!) as Record<StepMetric, Estimate>,
    protocol: { name: b.protocol.name, headline: b.protocol.headline, metrics: estimates(b.protocol.agg.compute(null), cis[2 * i + 1]!), counts: b.protocol.counts },
  }));
}

