import { type Defect, type Impact, IMPACT_RANK, Impact as ImpactSchema } from '../../schemas/defect.js';
import type { Verdict } from '../../schemas/verdict.js';
import type { StepPrediction } from './types.js';

/** Highest severity per cited step, refs outside 1..nSteps ignored. */
export function impactsOf(defects: readonly Defect[], nSteps: number): Map<number, Impact> {
  const out = new Map<number, Impact>();
  for (const d of defects) {
    for (const s of d.statement_refs) {
      if (s < 1 || s > nSteps) continue;
      const prev = out.get(s);
      if (prev === undefined || IMPACT_RANK[d.impact] > IMPACT_RANK[prev]) out.set(s, d.impact);
    }
  }
  return out;
}

/**
 * Non-neutral defects none of whose cited steps exist (1..nSteps). They flag no step, so a
 * verdict made only of them would read as "no error"; the report counts them instead.
 */
export function strayDefects(defects: readonly Defect[], nSteps: number): number {
  return defects.filter((d) => d.impact !== 'neutral' && !d.statement_refs.some((s) => s >= 1 && s <= nSteps)).length;
}

export function predictionFromDefects(recordId: string, nSteps: number, defects: readonly Defect[], failed: boolean): StepPrediction {
  if (failed) return { record_id: recordId, n_steps: nSteps, failed, impacts: new Map() };
  const stray = strayDefects(defects, nSteps);
  return { record_id: recordId, n_steps: nSteps, failed, impacts: impactsOf(defects, nSteps), ...(stray ? { stray_defects: stray } : {}) };
}

/**
 * One verdict per record: the first one read wins (as the official PRMBench evaluator keeps the
 * first result per idx, mr_eval/tasks/prmtest_classified/task.py lines 77-83); later ones are counted.
 */
export function firstVerdicts<T extends { record_id: string }>(verdicts: readonly T[]): { verdicts: T[]; duplicates: number; first_duplicate: string | null } {
  const seen = new Set<string>();
  const out: T[] = [];
  let first: string | null = null;
  for (const v of verdicts) {
    if (seen.has(v.record_id)) {
      first ??= v.record_id;
      continue;
    }
    seen.add(v.record_id);
    out.push(v);
  }
  return { verdicts: out, duplicates: verdicts.length - out.length, first_duplicate: first };
}

/** The final verdict as a prediction; a verdict with `error` set has no usable answer. */
export function predictionFromVerdict(v: Verdict): StepPrediction {
  return predictionFromDefects(v.record_id, v.n_steps, v.defects, v.error !== null);
}

/** Steps flagged at or above `threshold` (the paper scores minor and above, §3.1). */
export function flaggedSteps(p: StepPrediction, threshold: Impact): Set<number> {
  const out = new Set<number>();
  for (const [s, i] of p.impacts) if (IMPACT_RANK[i] >= IMPACT_RANK[threshold]) out.add(s);
  return out;
}

/** Earliest flagged step (1-based), or null when nothing is flagged. */
export function earliestFlagged(p: StepPrediction, threshold: Impact): number | null {
  let best: number | null = null;
  for (const s of flaggedSteps(p, threshold)) if (best === null || s < best) best = s;
  return best;
}

/**
 * Predictions from shard rows: the verdicts table gives n_steps and error per record, the steps
 * table the highest severity per step (`max_impact`, so any threshold can be applied later).
 */
export function predictionsFromShardRows(verdicts: ReadonlyArray<Record<string, unknown>>, steps: ReadonlyArray<Record<string, unknown>>): Map<string, StepPrediction> {
  const impacts = new Map<string, Map<number, Impact>>();
  for (const r of steps) {
    const parsed = ImpactSchema.safeParse(r.max_impact);
    if (!parsed.success) continue; // null: no defect cites the step
    const id = String(r.record_id);
    let m = impacts.get(id);
    if (!m) impacts.set(id, (m = new Map()));
    m.set(Number(r.step_index), parsed.data);
  }
  const out = new Map<string, StepPrediction>();
  for (const v of firstVerdicts(verdicts.map((r) => ({ ...r, record_id: String(r.record_id) }) as Record<string, unknown> & { record_id: string })).verdicts) {
    const id = v.record_id;
    const failed = v.error !== null && v.error !== undefined;
    out.set(id, { record_id: id, n_steps: Number(v.n_steps), failed, impacts: failed ? new Map() : (impacts.get(id) ?? new Map()) });
  }
  return out;
}
