/**
 * A stricter gate evaluated on the retries of a looser one (Table 14: the fatal-only gate reuses
 * the any-defect gate's retries): the rows of the records whose verdict's highest severity is at
 * least `impact`, under the gate name `<gate>/<impact>`. Records the stricter gate leaves out
 * keep their original answer in the corpus accuracy, as for any gate. Pure.
 */
import { IMPACTS, type Impact } from '../../../schemas/defect.js';
import type { RepairRow } from '../../../schemas/repair.js';

export const subgateName = (gate: string, impact: Impact): string => `${gate}/${impact}`;

/** `severity`: each judged record's verdict `max_impact` (null when it has no defect); a record missing from it is left out. */
export function subgateRows(rows: readonly RepairRow[], severity: ReadonlyMap<string, Impact | null>, impact: Impact): RepairRow[] {
  const min = IMPACTS.indexOf(impact);
  return rows.flatMap((r) => {
    const s = severity.get(r.record_id);
    return s !== undefined && s !== null && IMPACTS.indexOf(s) >= min ? [{ ...r, gate: subgateName(r.gate, impact) }] : [];
  });
}
