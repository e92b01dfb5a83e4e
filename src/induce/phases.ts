import PQueue from 'p-queue';
import type { ZodType } from 'zod';
import type { ParticipantConfig } from '../../schemas/config.js';
import type { ChatMessage, ModelGateway } from '../llm/types.js';
import type { PromptSet } from '../prompts/templates.js';
import { createAssigner } from '../taxonomy/assign.js';
import { consolidateMessages, growMessages } from '../taxonomy/prompts.js';
import { ConsolidateReply, GrowReply, type DraftTree } from '../taxonomy/wire.js';
import type { InduceDefect } from './input.js';
import type { InduceState } from './state.js';
import { freezeTree, mergeGrown, reconcileConsolidation } from './tree.js';
import { ReasoningJuryError } from '../util/errors.js';

/** What the three passes share. `save` persists the state after each step. */
export interface PhaseContext {
  gateway: ModelGateway;
  seat: ParticipantConfig;
  prompts: PromptSet;
  /** interleaved order */
  defects: readonly InduceDefect[];
  state: InduceState;
  save: () => Promise<void>;
  signal?: AbortSignal | undefined;
  concurrency: number;
  onProgress?: ((phase: 'grow' | 'consolidate' | 'assign', done: number, total: number) => void) | undefined;
}

/** Tries per grow or consolidation call before giving up on it (each try is a fresh sample). */
const TRIES = 3;
const RECORD_ID = 'taxonomy-induce';

async function tryStructured<T>(ctx: PhaseContext, caller: string, messages: ChatMessage[], schema: ZodType<T>, schemaName: string, sampleBase: number): Promise<{ value: T } | { error: string }> {
  let error = '';
  for (let t = 0; t < TRIES; t++) {
    try {
      const r = await ctx.gateway.structured({ ctx: { record_id: RECORD_ID, phase: 'taxonomy', participant: ctx.seat.id, caller, sample_index: sampleBase + t }, seat: ctx.seat, messages, schema, schemaName, ...(ctx.signal ? { signal: ctx.signal } : {}) });
      return { value: r.value };
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
      if (ctx.signal?.aborted) break;
    }
  }
  return { error };
}

/** Grow: one call per batch, strictly in order, each seeing the tree the previous one left. */
export async function growPhase(ctx: PhaseContext, batchSize: number): Promise<boolean> {
  const g = ctx.state.grow;
  while (g.next < g.batches) {
    if (ctx.signal?.aborted) return false;
    const batch = ctx.defects.slice(g.next * batchSize, (g.next + 1) * batchSize);
    const lines = batch.map((d, i) => ({ key: `D${i + 1}`, description: d.what_went_wrong }));
    const r = await tryStructured(ctx, 'taxonomy.induce.grow', growMessages(ctx.prompts, g.tree, lines), GrowReply, 'TaxonomyGrow', g.next * TRIES);
    if ('value' in r) {
      const m = mergeGrown(g.tree, r.value.taxonomy);
      g.tree = m.tree;
      g.added += m.added;
      g.restored += m.restored;
    } else if (!ctx.signal?.aborted) {
      // A batch the model could not answer adds nothing; the assign pass still labels its defects.
      g.skipped.push(g.next);
    } else return false;
    g.next += 1;
    await ctx.save();
    ctx.onProgress?.('grow', g.next, g.batches);
  }
  return true;
}

export class InductionError extends ReasoningJuryError {
  override get kind() {
    return 'internal' as const;
  }
}

/** Consolidate: one call over the grown tree, reconciled and frozen with stable ids. */
export async function consolidatePhase(ctx: PhaseContext, name: string): Promise<boolean> {
  if (ctx.state.consolidation) return true;
  if (ctx.signal?.aborted) return false;
  const tree: DraftTree = ctx.state.grow.tree;
  if (tree.categories.length === 0) throw new InductionError('growing produced an empty taxonomy: no defect gave the model anything to add');
  const r = await tryStructured(ctx, 'taxonomy.induce.consolidate', consolidateMessages(ctx.prompts, tree), ConsolidateReply, 'TaxonomyConsolidation', 0);
  if (!('value' in r)) {
    if (ctx.signal?.aborted) return false;
    throw new InductionError(`consolidation failed after ${TRIES} tries: ${r.error} (run again to retry from the grown taxonomy)`);
  }
  const rec = reconcileConsolidation(tree, r.value);
  ctx.state.consolidation = { taxonomy: freezeTree(rec.tree, name, {}), merges: rec.merges, restored: rec.restored };
  await ctx.save();
  ctx.onProgress?.('consolidate', 1, 1);
  return true;
}

/**
 * Assign: labels are reset when the phase starts, then every defect is labelled against the
 * frozen leaves; defects left unassigned are collected and tried again in another pass (with
 * what went wrong last time) until all are covered or `maxPasses` is spent.
 */
export async function assignPhase(ctx: PhaseContext, batchSize: number, maxRounds: number, maxPasses: number): Promise<boolean> {
  const taxonomy = ctx.state.consolidation!.taxonomy;
  const assigner = createAssigner({ gateway: ctx.gateway, seat: ctx.seat, prompts: ctx.prompts, taxonomy, batchSize, maxRounds, caller: 'taxonomy.induce.assign' });
  const byId = new Map(ctx.defects.map((d) => [d.defect_id, d] as const));
  const st = (ctx.state.assign ??= { pass: 0, batches: [], next: 0, labels: {} });
  if (st.pass === 0 && st.batches.length === 0) {
    st.labels = {}; // reset: nothing from before survives into this assignment
    st.batches = chunk(ctx.defects.map((d) => d.defect_id), batchSize);
    await ctx.save();
  }
  for (;;) {
    while (st.next < st.batches.length) {
      if (ctx.signal?.aborted) return false;
      const wave = st.batches.slice(st.next, st.next + ctx.concurrency);
      const queue = new PQueue({ concurrency: ctx.concurrency });
      const results = await Promise.all(
        wave.map((ids, w) =>
          queue.add(() =>
            assigner.assign(
              `${RECORD_ID}:p${st.pass}b${st.next + w}`,
              ids.map((id) => {
                const d = byId.get(id)!;
                const prev = st.labels[id];
                return { id, what_went_wrong: d.what_went_wrong, impact: d.impact, ...(prev?.s === 'u' ? { previous: { reason: prev.reason, detail: prev.detail } } : {}) };
              }),
              { attemptOffset: st.pass * maxRounds },
            ),
          ),
        ),
      );
      for (const r of results) {
        for (const [id, l] of r!.labels) st.labels[id] = l.status === 'assigned' ? { s: 'a', leaf: l.leaf_id, pass: st.pass } : { s: 'u', reason: l.reason, detail: l.detail, pass: st.pass };
      }
      st.next += wave.length;
      await ctx.save();
      ctx.onProgress?.('assign', Object.values(st.labels).filter((l) => l.s === 'a').length, ctx.defects.length);
    }
    const leftover = ctx.defects.map((d) => d.defect_id).filter((id) => st.labels[id]?.s !== 'a');
    if (leftover.length === 0 || st.pass + 1 >= maxPasses) return true;
    st.pass += 1;
    st.batches = chunk(leftover, batchSize);
    st.next = 0;
    await ctx.save();
  }
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
