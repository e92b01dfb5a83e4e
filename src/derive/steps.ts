import { type Defect, type Impact, IMPACT_RANK } from '../../schemas/defect.js';
import { defectId, type StepRow } from '../../schemas/outputs.js';

/**
 * Per step: the highest severity among defects citing it and a binary label at the threshold
 * (the paper scores minor and above as erroneous, §3.1). A record without a verdict (`judged`
 * false: too few jurors) has steps nobody judged: label and max_impact are null, never `false`,
 * so an unjudged step cannot read as a clean one.
 */
export function stepRows(recordId: string, nSteps: number, defects: readonly Defect[], threshold: Impact, judged = true): StepRow[] {
  const rows: StepRow[] = [];
  for (let i = 1; i <= nSteps; i++) rows.push({ record_id: recordId, step_index: i, max_impact: null, label: judged ? false : null, defect_ids: [] });
  if (!judged) return rows;
  defects.forEach((d, ordinal) => {
    for (const s of d.statement_refs) {
      const row = rows[s - 1];
      if (!row) continue; // refs were validated upstream; a stray one must not crash the stage
      row.defect_ids.push(defectId(recordId, ordinal));
      if (row.max_impact === null || IMPACT_RANK[d.impact] > IMPACT_RANK[row.max_impact]) row.max_impact = d.impact;
    }
  });
  for (const r of rows) r.label = r.max_impact !== null && IMPACT_RANK[r.max_impact] >= IMPACT_RANK[threshold];
  return rows;
}
