/** The JSON the page gets for a row of the records table and for the overview. */
import { FILTER_DECISIONS, IMPACTS_ORDER } from './schema-bits.js';
import type { RecordIndex } from './record-index.js';

export interface RecordSummary {
  id: string;
  decision: string | null;
  rule: string | null;
  severity: string | null;
  defects: number;
  jurors_ok: number;
  jurors_total: number;
  dissent: number;
  categories: string[];
  degraded: boolean;
  failed: boolean;
  cost: number | null;
  reviewed: string | null;
}

export function summary(ix: RecordIndex, i: number): RecordSummary {
  const cats = ix.categorySets.values[ix.categories[i]!]!;
  const reviewed = ix.reviewed[i]!;
  return {
    id: ix.ids[i]!,
    decision: FILTER_DECISIONS[ix.decision[i]!] ?? null,
    rule: ix.rule[i] === 0 ? null : ix.rules.values[ix.rule[i]!]!,
    severity: IMPACTS_ORDER[ix.impact[i]!] ?? null,
    defects: ix.defects[i]!,
    jurors_ok: ix.jurorsOk[i]!,
    jurors_total: ix.jurorsTotal[i]!,
    dissent: ix.dissent[i]!,
    categories: cats === '' ? [] : cats.split(','),
    degraded: ix.degraded[i] === 1,
    failed: ix.failed[i] === 1,
    cost: Number.isNaN(ix.cost[i]!) ? null : ix.cost[i]!,
    reviewed: reviewed === 0 ? null : FILTER_DECISIONS[reviewed - 1]!,
  };
}

const bump = (m: Record<string, number>, k: string) => (m[k] = (m[k] ?? 0) + 1);

export interface Overview {
  records: number;
  decisions: Record<string, number>;
  reviewed: Record<string, number>;
  severities: Record<string, number>;
  categories: Record<string, number>;
  rules: Record<string, number>;
  degraded: number;
  failed: number;
  cost_usd: number;
  cost_unknown: number;
}

/** Counts over every record: what the overview's bars show and link from. */
export function overview(ix: RecordIndex): Overview {
  const o: Overview = { records: ix.ready, decisions: {}, reviewed: {}, severities: {}, categories: {}, rules: {}, degraded: 0, failed: 0, cost_usd: 0, cost_unknown: 0 };
  const perSet = new Float64Array(ix.categorySets.values.length);
  const perRule = new Float64Array(ix.rules.values.length);
  for (let i = 0; i < ix.ready; i++) {
    bump(o.decisions, FILTER_DECISIONS[ix.decision[i]!] ?? 'none');
    if (ix.reviewed[i]! > 0) bump(o.reviewed, FILTER_DECISIONS[ix.reviewed[i]! - 1]!);
    bump(o.severities, IMPACTS_ORDER[ix.impact[i]!] ?? 'none');
    perSet[ix.categories[i]!]! += 1;
    perRule[ix.rule[i]!]! += 1;
    o.degraded += ix.degraded[i]!;
    o.failed += ix.failed[i]!;
    if (Number.isNaN(ix.cost[i]!)) o.cost_unknown += 1;
    else o.cost_usd += ix.cost[i]!;
  }
  ix.categorySets.values.forEach((set, s) => {
    if (set !== '') for (const c of set.split(',')) o.categories[c] = (o.categories[c] ?? 0) + perSet[s]!;
  });
  ix.rules.values.forEach((r, k) => {
    if (perRule[k]! > 0) o.rules[k === 0 ? '(default)' : r] = perRule[k]!;
  });
  return o;
}
