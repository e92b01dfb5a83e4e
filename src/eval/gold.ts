import type { TraceRecord } from '../../schemas/trace.js';
import type { LabelScope, StepGold } from './types.js';

const str = (v: unknown, fallback: string): string => (typeof v === 'string' && v.length > 0 ? v : fallback);

/** The scorers' view of an adapted record's gold (adapters always give steps and gold). */
export function goldOf(rec: TraceRecord, scope: LabelScope): StepGold {
  const n = rec.steps?.length ?? 0;
  const g = rec.gold ?? {};
  const listed = g.error_steps ?? (g.first_error_step ? [g.first_error_step] : []);
  const inRange = [...new Set(listed)].filter((s) => s >= 1 && s <= n).sort((a, b) => a - b);
  const first = g.first_error_step ?? inRange[0] ?? null;
  const raw = Array.isArray(rec.meta.raw_error_steps) ? (rec.meta.raw_error_steps as number[]) : listed;
  return {
    record_id: rec.id,
    split: str(rec.meta.split, 'all'),
    n_steps: n,
    error_steps: scope === 'first_error' ? (first !== null ? [first] : []) : inRange,
    first_error: first !== null && first <= n ? first : null,
    scope,
    classification: typeof rec.meta.classification === 'string' ? rec.meta.classification : null,
    raw_error_steps: raw,
  };
}

/**
 * Gold label per step (index 0 = step 1): 1 erroneous, 0 correct, null unlabelled. With
 * `propagate`, every step after the first gold error counts as erroneous (the convention of
 * Hard2Verify and of the paper's "propagation-aware" scores); without it, steps after the first
 * error of a first-error benchmark stay unlabelled and are left out of step metrics.
 */
export function stepLabels(g: StepGold, propagate: boolean): Array<0 | 1 | null> {
  const out: Array<0 | 1 | null> = [];
  const errors = new Set(g.error_steps);
  const f = g.first_error;
  for (let s = 1; s <= g.n_steps; s++) {
    if (f !== null && s > f && propagate) out.push(1);
    else if (g.scope === 'first_error') out.push(f === null || s < f ? 0 : s === f ? 1 : null);
    else out.push(errors.has(s) ? 1 : 0);
  }
  return out;
}
