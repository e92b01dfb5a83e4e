import type { RowEnricher } from '../../taxonomy/enrich.js';
import type { PipelineStep } from '../envelope.js';

/** Fills the defect rows' taxonomy columns (a leaf per defect) when assignment is configured. */
export function taxonomyStep(enrich: RowEnricher): PipelineStep {
  return {
    name: 'taxonomy',
    run: async (env) => ({ ...env, rows: await enrich(env.rows!, env.verdict!) }),
  };
}
