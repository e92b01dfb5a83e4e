import { Ledger, type PriceTable } from '../llm/ledger.js';
import type { System } from './ladder.js';

export interface CostRow {
  system: string;
  records: number;
  calls: number;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
  cost_per_record: number;
  /** this row / the baseline row (null when the baseline is 0 or absent) */
  ratio: { calls: number | null; tokens_in: number | null; tokens_out: number | null; tokens_total: number | null; cost_usd: number | null } | null;
}

const ratio = (a: number, b: number | undefined): number | null => (b ? a / b : null);

/**
 * The cost of each system over the same records (§4.8): every call a system needs, summed by a
 * Ledger from the usage recorded in the verdicts (so replayed or re-scored runs cost the same
 * as live ones). Ratios are to `baseline` (a chosen single judge, e.g. "solo jury-0").
 */
export function costTable(systems: readonly System[], recordIds: readonly string[], baseline?: string, prices: PriceTable = {}): CostRow[] {
  const rows = systems.map((s) => {
    const ledger = new Ledger(prices);
    for (const id of recordIds) for (const u of s.usage.get(id) ?? []) ledger.record(u, id, false);
    const t = ledger.summary().total;
    const n = recordIds.length;
    return { system: s.name, records: n, calls: t.calls, tokens_in: t.tokens_in, tokens_out: t.tokens_out, cost_usd: t.cost_usd, cost_per_record: n ? t.cost_usd / n : 0, ratio: null } as CostRow;
  });
  const base = rows.find((r) => r.system === baseline);
  if (base) {
    for (const r of rows) {
      r.ratio = {
        calls: ratio(r.calls, base.calls),
        tokens_in: ratio(r.tokens_in, base.tokens_in),
        tokens_out: ratio(r.tokens_out, base.tokens_out),
        tokens_total: ratio(r.tokens_in + r.tokens_out, base.tokens_in + base.tokens_out),
        cost_usd: ratio(r.cost_usd, base.cost_usd),
      };
    }
  }
  return rows;
}
