/**
 * The curation columns of a corpus row: a judged record's decision, the rule that fired and a
 * compact defect summary, from the rows derived for it (taxonomy categories included when the
 * taxonomy step filled them).
 */
import type { CorpusRow } from '../../schemas/outputs.js';
import type { SourcePosition } from '../../schemas/trace.js';
import type { DerivedRows } from './rows.js';

const TOP_CATEGORIES = 3;
const NO_RULE = 'no rule matched';

/**
 * The rule's name from a decision reason ("<name>: <what it saw>", see decide()). Rule names
 * are the config's `name` or "rule <n>"; a name holding ": " is cut at it.
 */
export function ruleOfReason(reason: string): string | null {
  if (reason === NO_RULE) return null;
  const cut = reason.indexOf(': ');
  return cut < 0 ? reason : reason.slice(0, cut);
}

function topCategories(rows: DerivedRows): string[] {
  const counts = new Map<string, number>();
  for (const d of rows.defects) if (d.category_id) counts.set(d.category_id, (counts.get(d.category_id) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, TOP_CATEGORIES)
    .map(([id]) => id);
}

export function corpusRow(rows: DerivedRows, position: SourcePosition): CorpusRow {
  const d = rows.decision;
  return {
    record_id: d.record_id,
    decision: d.decision,
    rule: ruleOfReason(d.reason),
    reason: d.reason,
    n_steps: rows.verdict.n_steps,
    flagged_steps: rows.steps.filter((s) => s.label).length,
    n_neutral: d.n_neutral,
    n_minor: d.n_minor,
    n_major: d.n_major,
    n_fatal: d.n_fatal,
    fatal_step_rate: d.fatal_step_rate,
    top_categories: topCategories(rows),
    source: position.source,
    source_unit: position.unit,
    source_offset: position.offset,
  };
}
