import type { JuryConfig } from '../../schemas/config.js';
import { maxImpact } from '../../schemas/defect.js';
import { type DecisionRow, type DefectRow, defectId, type StepRow, type VerdictDetailRow, type VerdictRow } from '../../schemas/outputs.js';
import type { RepairRow } from '../../schemas/repair.js';
import type { SourcePosition } from '../../schemas/trace.js';
import type { Verdict } from '../../schemas/verdict.js';
import { decideFacts, factsOfRows } from './decision.js';
import { detailRow, passesOn, wantsDetail } from './detail.js';
import { stepRows } from './steps.js';

export interface DerivedRows {
  verdict: VerdictRow;
  defects: DefectRow[];
  steps: StepRow[];
  decision: DecisionRow;
  /** the `verdict_details` row, when the config asks for it (see wantsDetail) */
  detail?: VerdictDetailRow;
  /** the `repairs` rows, when `repair` is on and the gate selected the record */
  repairs?: RepairRow[];
}

/**
 * Latency a record waited on models: the slowest Phase 1 call (they run in parallel) plus every
 * later call (sequential). Taken from recorded usage, so cache replays reproduce it exactly.
 */
export function criticalPathMs(v: Verdict): number {
  let phase1 = 0;
  let rest = 0;
  for (const u of v.usage) {
    if (u.phase === 'phase1') phase1 = Math.max(phase1, u.latency_ms);
    else rest += u.latency_ms;
  }
  return phase1 + rest;
}

/** A verdict and its record's position/meta -> its rows of the shard tables. */
export function deriveRows(v: Verdict, position: SourcePosition, meta: Record<string, unknown>, config: Pick<JuryConfig, 'severity_threshold' | 'filter' | 'verdict_details' | 'removal_pass' | 'arbiter'>): DerivedRows {
  const steps = stepRows(v.record_id, v.n_steps, v.defects, config.severity_threshold, v.error === null);
  const sum = (k: 'tokens_in' | 'tokens_out') => v.usage.reduce((a, u) => a + u[k], 0);
  const verdict: VerdictRow = {
    record_id: v.record_id,
    mode: v.mode,
    jurors_total: v.jurors_total,
    jurors_ok: v.jurors_ok,
    phase1_seats: v.cascade ? v.cascade.seats.length : null,
    escalations: v.cascade ? v.cascade.escalations : null,
    n_steps: v.n_steps,
    n_defects: v.defects.length,
    max_impact: maxImpact(v.defects.map((d) => d.impact)),
    confidence: v.confidence,
    n_dissent: v.dissenting_views.length,
    termination_reason: v.termination_reason,
    rounds: v.rounds,
    degraded: v.degraded,
    degraded_reason: v.degraded_reason,
    error: v.error,
    tokens_in: sum('tokens_in'),
    tokens_out: sum('tokens_out'),
    cost_usd: totalCost(v.usage),
    latency_ms: criticalPathMs(v),
    prompt_hash: v.prompt_hash,
    config_hash: v.config_hash,
    source: position.source,
    source_unit: position.unit,
    source_offset: position.offset,
    meta: Object.keys(meta).length > 0 ? JSON.stringify(meta) : null,
  };
  const defects: DefectRow[] = v.defects.map((d, i) => ({
    record_id: v.record_id,
    defect_id: defectId(v.record_id, i),
    statement_refs: d.statement_refs,
    impact: d.impact,
    what_went_wrong: d.what_went_wrong,
    evidence: d.evidence,
    correct_value: d.correct_value ?? null,
    vote_count: d.vote_count ?? null,
    voters: d.voters ?? [],
    category_id: null,
    leaf_id: null,
    taxonomy_status: null,
  }));
  return { verdict, defects, steps, decision: decideRows({ verdict, defects, steps }, config.filter), ...(wantsDetail(config.verdict_details, v.mode, passesOn(config)) ? { detail: detailRow(v) } : {}) };
}

/** The decision of a record's rows; the taxonomy step calls it again once defects have leaves. */
export function decideRows(rows: Pick<DerivedRows, 'verdict' | 'defects' | 'steps'>, policy: JuryConfig['filter']): DecisionRow {
  return decideFacts(factsOfRows(rows.verdict, rows.defects, rows.steps), policy);
}

/** Sum of the calls' costs; null as soon as one call's model has no price (the total is unknown). */
export function totalCost(usage: readonly { cost_usd: number | null }[]): number | null {
  let sum = 0;
  for (const u of usage) {
    if (u.cost_usd === null) return null;
    sum += u.cost_usd;
  }
  return sum;
}
