import type { JuryConfig } from '../../schemas/config.js';
import type { Verdict } from '../../schemas/verdict.js';
import { totalCost, type DerivedRows } from '../derive/rows.js';
import type { ModelGateway } from '../llm/types.js';
import type { PromptSet } from '../prompts/templates.js';
import { createAssigner, statusOf, type Assigner } from './assign.js';
import { loadTaxonomy, type Taxonomy } from './schema.js';
import { assignerSeat, taxonomySettings } from './seats.js';

/** The stage's per-record hook: fills a record's defect rows before they are stored. */
export type RowEnricher = (rows: DerivedRows, verdict: Verdict) => Promise<DerivedRows>;

export interface EnricherDeps {
  config: JuryConfig;
  gateway: ModelGateway;
  prompts: PromptSet;
  /** overrides config.taxonomy.file (tests) */
  taxonomy?: Taxonomy;
}

/**
 * Assignment in the stream: every consensus defect of the record gets a leaf (or
 * `unassigned:<reason>`). The calls' tokens and cost are added to the verdict row, so the
 * row keeps saying what the record cost in total; they run after the jury, so their latency
 * adds to the critical path too.
 */
export function createTaxonomyEnricher(deps: EnricherDeps): { enrich: RowEnricher; assigner: Assigner } {
  const settings = taxonomySettings(deps.config);
  const taxonomy = deps.taxonomy ?? loadTaxonomy(settings.file);
  const assigner = createAssigner({
    gateway: deps.gateway,
    seat: assignerSeat(deps.config),
    prompts: deps.prompts,
    taxonomy,
    batchSize: settings.batch_size,
    maxRounds: settings.max_rounds,
    caller: 'taxonomy.stream',
  });

  const enrich: RowEnricher = async (rows, verdict) => {
    if (rows.defects.length === 0) return rows;
    const { labels, usage } = await assigner.assign(
      verdict.record_id,
      rows.defects.map((d) => ({ id: d.defect_id, what_went_wrong: d.what_went_wrong, impact: d.impact })),
    );
    const defects = rows.defects.map((d) => {
      const label = labels.get(d.defect_id);
      if (!label) throw new Error(`taxonomy assignment lost defect ${d.defect_id}`); // a bug, not a model failure
      return {
        ...d,
        category_id: label.status === 'assigned' ? label.category_id : null,
        leaf_id: label.status === 'assigned' ? label.leaf_id : null,
        taxonomy_status: statusOf(label),
      };
    });
    const sum = (k: 'tokens_in' | 'tokens_out' | 'latency_ms') => usage.reduce((a, u) => a + u[k], 0);
    const cost = totalCost(usage);
    const verdictRow = {
      ...rows.verdict,
      tokens_in: rows.verdict.tokens_in + sum('tokens_in'),
      tokens_out: rows.verdict.tokens_out + sum('tokens_out'),
      cost_usd: rows.verdict.cost_usd === null || cost === null ? null : rows.verdict.cost_usd + cost,
      latency_ms: rows.verdict.latency_ms + sum('latency_ms'),
    };
    return { ...rows, verdict: verdictRow, defects };
  };
  return { enrich, assigner };
}
