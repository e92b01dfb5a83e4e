import type { ParticipantConfig } from '../../schemas/config.js';
import type { ModelGateway } from '../llm/types.js';
import type { PromptSet } from '../prompts/templates.js';
import type { LabelRow } from './labels.js';
import { TaxonomyIndex, type Taxonomy } from '../taxonomy/schema.js';
import { InputError, inputHash, interleave, type InduceDefect } from './input.js';
import { assignPhase, consolidatePhase, growPhase, type PhaseContext } from './phases.js';
import { readState, writeState, type InduceParams, type InduceState } from './state.js';
import { ReasoningJuryError } from '../util/errors.js';

/**
 * `taxonomy induce` (paper App. J): grow -> consolidate -> assign over pooled defects, with a
 * checkpoint after every step so a stopped or killed job picks up where it was.
 */

export interface InduceOptions {
  gateway: ModelGateway;
  seat: ParticipantConfig;
  prompts: PromptSet;
  defects: readonly InduceDefect[];
  workDir: string;
  growBatch: number;
  /** grow from the first n interleaved defects only (all are still assigned); null = all */
  growLimit: number | null;
  assignBatch: number;
  maxRounds: number;
  maxPasses: number;
  concurrency: number;
  name: string;
  signal?: AbortSignal;
  onProgress?: PhaseContext['onProgress'];
}

export interface InduceResult {
  /** true when the signal stopped the job before the end; run again to continue */
  stopped: boolean;
  resumed: boolean;
  taxonomy: Taxonomy | null;
  labels: LabelRow[];
}

export class ResumeMismatchError extends ReasoningJuryError {
  override get kind() {
    return 'input' as const;
  }
}

function freshState(input: string, params: InduceParams, batches: number): InduceState {
  return { version: 1, input, params, grow: { batches, next: 0, tree: { categories: [] }, added: 0, restored: 0, skipped: [] }, consolidation: null, assign: null, done: false };
}

export async function induceTaxonomy(o: InduceOptions): Promise<InduceResult> {
  if (o.defects.length === 0) throw new InputError('the runs hold no defects to induce a taxonomy from');
  const order = interleave(o.defects);
  const growing = o.growLimit === null ? order : order.slice(0, o.growLimit);
  const params: InduceParams = {
    grow_batch: o.growBatch,
    grow_limit: o.growLimit,
    assign_batch: o.assignBatch,
    max_rounds: o.maxRounds,
    max_passes: o.maxPasses,
    seat: `${o.seat.model}@${o.seat.endpoint} t=${o.seat.temperature} seed=${o.seat.seed ?? ''}`,
  };
  const input = inputHash(order);
  let state = await readState(o.workDir);
  const resumed = state !== null;
  if (state && (state.input !== input || JSON.stringify(state.params) !== JSON.stringify(params))) {
    throw new ResumeMismatchError(`${o.workDir} holds a checkpoint for other input or settings; use another --work folder or delete it to start over`);
  }
  state ??= freshState(input, params, Math.ceil(growing.length / o.growBatch));
  const s = state;
  const ctx: PhaseContext = { gateway: o.gateway, seat: o.seat, prompts: o.prompts, defects: order, state: s, save: () => writeState(o.workDir, s), signal: o.signal, concurrency: o.concurrency, onProgress: o.onProgress };
  await ctx.save();

  const stopped = (): InduceResult => ({ stopped: true, resumed, taxonomy: null, labels: [] });
  if (!(await growPhase({ ...ctx, defects: growing }, o.growBatch))) return stopped();
  if (!(await consolidatePhase(ctx, o.name))) return stopped();
  if (!(await assignPhase(ctx, o.assignBatch, o.maxRounds, o.maxPasses))) return stopped();
  s.done = true;
  await ctx.save();
  return { stopped: false, resumed, ...finish(s, order, o) };
}

/** The frozen taxonomy with a record of how it was made, and one label row per defect. */
function finish(s: InduceState, order: readonly InduceDefect[], o: InduceOptions): { taxonomy: Taxonomy; labels: LabelRow[] } {
  const frozen = s.consolidation!.taxonomy;
  const index = new TaxonomyIndex(frozen);
  const labels: LabelRow[] = [...order]
    .sort((a, b) => (a.defect_id < b.defect_id ? -1 : a.defect_id > b.defect_id ? 1 : 0))
    .map((d) => {
      const l = s.assign!.labels[d.defect_id];
      const entry = l?.s === 'a' ? index.leaf(l.leaf) : undefined;
      if (entry) return { record_id: d.record_id, defect_id: d.defect_id, category_id: entry.category.id, leaf_id: entry.leaf.id, taxonomy_status: 'assigned' };
      return { record_id: d.record_id, defect_id: d.defect_id, category_id: null, leaf_id: null, taxonomy_status: `unassigned:${l?.s === 'u' ? l.reason : 'call_failed'}` };
    });
  const generators: Record<string, number> = {};
  for (const d of order) generators[d.generator] = (generators[d.generator] ?? 0) + 1;
  const perLeaf: Record<string, number> = {};
  for (const l of labels) if (l.leaf_id) perLeaf[l.leaf_id] = (perLeaf[l.leaf_id] ?? 0) + 1;
  const assigned = labels.filter((l) => l.leaf_id !== null).length;
  const taxonomy: Taxonomy = {
    ...frozen,
    description: `Induced by reasoning-jury from ${order.length} defects of ${Object.keys(generators).length} generator(s): grow, consolidate, assign (paper App. J).`,
    induction: {
      defects: order.length,
      generators,
      seat: { model: o.seat.model, endpoint: o.seat.endpoint, temperature: o.seat.temperature },
      grow: { batch_size: o.growBatch, batches: s.grow.batches, defects_used: Math.min(order.length, s.grow.batches * o.growBatch), nodes_added: s.grow.added, nodes_restored: s.grow.restored, skipped_batches: s.grow.skipped },
      consolidation: { merges: s.consolidation!.merges, restored: s.consolidation!.restored },
      assignment: { batch_size: o.assignBatch, passes: s.assign!.pass + 1, assigned, unassigned: labels.length - assigned, defects_per_leaf: perLeaf },
    },
  };
  return { taxonomy, labels };
}
