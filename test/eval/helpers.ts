import type { Defect, Impact } from '../../schemas/defect.js';
import type { TraceRecord } from '../../schemas/trace.js';
import { goldOf } from '../../src/eval/gold.js';
import { predictionFromDefects } from '../../src/eval/predictions.js';
import type { LabelScope, StepGold, StepPrediction } from '../../src/eval/types.js';

/** A record with `n` numbered steps and the given gold/meta. */
export function record(id: string, n: number, gold: TraceRecord['gold'], meta: Record<string, unknown> = {}): TraceRecord {
  return { id, problem: `problem ${id}`, steps: Array.from({ length: n }, (_, i) => `step ${i + 1} of ${id}`), meta, gold };
}

export function gold(id: string, n: number, g: TraceRecord['gold'], scope: LabelScope, meta: Record<string, unknown> = {}): StepGold {
  return goldOf(record(id, n, g, meta), scope);
}

export function defect(steps: number[], impact: Impact = 'major'): Defect {
  return { statement_refs: steps, what_went_wrong: `flaw at ${steps.join(',')}`, impact, evidence: 'e' };
}

/** A prediction citing `flags` (step -> severity); `null` = no usable verdict. */
export function prediction(id: string, n: number, flags: Record<number, Impact> | null): StepPrediction {
  if (flags === null) return predictionFromDefects(id, n, [], true);
  return predictionFromDefects(id, n, Object.entries(flags).map(([s, i]) => defect([Number(s)], i)), false);
}

export const close = (a: number | null, b: number | null, eps = 1e-9): boolean => (a === null || b === null || Number.isNaN(a) || Number.isNaN(b) ? (a === null || Number.isNaN(a)) === (b === null || Number.isNaN(b)) : Math.abs(a - b) <= eps);
