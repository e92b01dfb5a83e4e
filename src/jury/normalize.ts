import { type Defect, type ModelDefect, parseStepRef } from '../../schemas/defect.js';

export interface Normalized {
  defects: Defect[];
  /** refs that name no step of this trace (or cannot be read), dropped and counted. */
  droppedRefs: number;
  /** defects left with no valid step at all: ungrounded, so dropped. */
  droppedDefects: number;
}

/**
 * Model output -> stored defects: refs become sorted unique step numbers within 1..nSteps.
 * A defect that cites no existing step cannot be audited and is dropped (and counted).
 */
export function normalizeDefects(raw: readonly ModelDefect[], nSteps: number): Normalized {
  const defects: Defect[] = [];
  let droppedRefs = 0;
  let droppedDefects = 0;
  for (const d of raw) {
    const refs = new Set<number>();
    for (const r of d.statement_refs) {
      const n = parseStepRef(r);
      if (n === null || n > nSteps) droppedRefs++;
      else refs.add(n);
    }
    if (refs.size === 0) {
      droppedDefects++;
      continue;
    }
    const out: Defect = {
      statement_refs: [...refs].sort((a, b) => a - b),
      what_went_wrong: d.what_went_wrong,
      impact: d.impact,
      evidence: d.evidence,
    };
    if (d.correct_value !== undefined && d.correct_value !== null && d.correct_value !== '') out.correct_value = d.correct_value;
    if (d.vote_count !== undefined) out.vote_count = d.vote_count;
    if (d.voters !== undefined) out.voters = d.voters;
    defects.push(out);
  }
  return { defects, droppedRefs, droppedDefects };
}
