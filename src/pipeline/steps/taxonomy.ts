import type { FilterPolicy } from '../../../schemas/config.js';
import { decideRows } from '../../derive/rows.js';
import type { RowEnricher } from '../../taxonomy/enrich.js';
import type { Derived, Step } from '../envelope.js';

/**
 * Fills the defect rows' taxonomy columns (a leaf per defect) when assignment is configured,
 * then decides again: filter rules may test categories and leaves, which exist only now.
 */
export function taxonomyStep(enrich: RowEnricher, filter: FilterPolicy): Step<Derived, Derived> {
  return {
    name: 'taxonomy',
    run: async (env) => {
      const rows = await enrich(env.rows, env.verdict);
      return { ...env, rows: { ...rows, decision: decideRows(rows, filter) } };
    },
  };
}
