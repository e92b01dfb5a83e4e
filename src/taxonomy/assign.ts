import type { ParticipantConfig } from '../../schemas/config.js';
import type { Impact } from '../../schemas/defect.js';
import type { CallUsage } from '../../schemas/usage.js';
import { isEndpointOutage } from '../llm/outage.js';
import { ModelCallError, type ModelGateway } from '../llm/types.js';
import type { PromptSet } from '../prompts/templates.js';
import { assignMessages, type RetryHint } from './prompts.js';
import { TaxonomyIndex, type Taxonomy } from './schema.js';
import { assignReplySchema, INVALID_LEAF, type AssignReply } from './wire.js';

/**
 * Labels defects with taxonomy leaves by model calls. Defects go in batches; every answer is
 * checked against the taxonomy's leaf ids, and defects whose answer was invalid, missing or
 * lost to a failed call are asked again (with a note saying what was wrong) for up to
 * `maxRounds` calls. What is still unlabelled then is `unassigned` with the last reason, so an
 * invalid id can never come out of here.
 */

export const UNASSIGNED_REASONS = ['invalid_leaf', 'omitted', 'call_failed'] as const;
export type UnassignedReason = (typeof UNASSIGNED_REASONS)[number];

export type Label =
  | { status: 'assigned'; leaf_id: string; category_id: string }
  | { status: 'unassigned'; reason: UnassignedReason; detail: string };

/** The `taxonomy_status` column value: 'assigned' or 'unassigned:<reason>'. */
export function statusOf(label: Label): string {
  return label.status === 'assigned' ? 'assigned' : `unassigned:${label.reason}`;
}

export interface DefectToLabel {
  /** unique within one assign() call (the defect_id in shards) */
  id: string;
  what_went_wrong: string;
  impact?: Impact;
  /** why an earlier pass left it unassigned: told to the model on this try */
  previous?: { reason: UnassignedReason; detail: string };
}

export interface AssignCallOptions {
  signal?: AbortSignal;
  /** attempts already spent on these defects (by earlier passes); numbers the retries */
  attemptOffset?: number;
}

export interface AssignerOptions {
  gateway: ModelGateway;
  seat: ParticipantConfig;
  prompts: PromptSet;
  taxonomy: Taxonomy;
  batchSize: number;
  maxRounds: number;
  /** audit/ledger name of the code path, e.g. "taxonomy.stream" */
  caller: string;
}

export interface AssignResult {
  labels: Map<string, Label>;
  usage: CallUsage[];
}

export interface Assigner {
  readonly index: TaxonomyIndex;
  /** `recordId` tags the calls in the audit log and ledger (a record, or an induction batch). */
  assign(recordId: string, defects: readonly DefectToLabel[], opts?: AssignCallOptions): Promise<AssignResult>;
}

interface Pending {
  defect: DefectToLabel;
  reason: UnassignedReason | null;
  detail: string;
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function hintFor(p: Pending, key: string): RetryHint | null {
  if (p.reason === 'invalid_leaf') return { key, problem: `the answer ${p.detail} is not a leaf id of this taxonomy` };
  if (p.reason === 'omitted') return { key, problem: 'it was left out of the answer' };
  return null; // a failed call says nothing about this defect
}

export function createAssigner(opts: AssignerOptions): Assigner {
  const index = new TaxonomyIndex(opts.taxonomy);
  // One schema object per assigner: the gateway derives (and caches) its JSON Schema once.
  const schema = assignReplySchema([...index.leaves.keys()]);

  async function callBatch(recordId: string, batch: readonly Pending[], attempt: number, signal: AbortSignal | undefined): Promise<{ reply: AssignReply | null; error: string; usage: CallUsage | null }> {
    const keys = batch.map((_, i) => `D${i + 1}`);
    const lines = batch.map((p, i) => ({ key: keys[i]!, ...(p.defect.impact ? { severity: p.defect.impact } : {}), description: p.defect.what_went_wrong }));
    const hints = batch.map((p, i) => hintFor(p, keys[i]!)).filter((h): h is RetryHint => h !== null);
    try {
      const r = await opts.gateway.structured({
        ctx: { record_id: recordId, phase: 'taxonomy', participant: opts.seat.id, caller: opts.caller, sample_index: attempt },
        seat: opts.seat,
        messages: assignMessages(opts.prompts, opts.taxonomy, lines, hints, attempt + 1),
        schema,
        schemaName: 'TaxonomyAssignment',
        ...(signal ? { signal } : {}),
      });
      return { reply: r.value, error: '', usage: r.usage };
    } catch (err) {
      if (isEndpointOutage(err)) throw err; // the record stays unjudged, not half-labelled
      if (err instanceof ModelCallError) return { reply: null, error: err.message, usage: err.usage };
      // Anything else (gateway closed, a bug) also leaves the defects unlabelled, never half-labelled.
      return { reply: null, error: err instanceof Error ? err.message : String(err), usage: null };
    }
  }

  async function assign(recordId: string, defects: readonly DefectToLabel[], call: AssignCallOptions = {}): Promise<AssignResult> {
    const labels = new Map<string, Label>();
    const usage: CallUsage[] = [];
    const offset = call.attemptOffset ?? 0;
    let pending: Pending[] = defects.map((d) => ({ defect: d, reason: d.previous?.reason ?? null, detail: d.previous?.detail ?? '' }));
    for (let round = 0; round < opts.maxRounds && pending.length > 0; round++) {
      const next: Pending[] = [];
      // Batches of one record run one after another: records already run in parallel.
      for (const batch of chunk(pending, opts.batchSize)) {
        const { reply, error, usage: u } = await callBatch(recordId, batch, offset + round, call.signal);
        if (u) usage.push(u);
        if (!reply) {
          for (const p of batch) next.push({ defect: p.defect, reason: 'call_failed', detail: error });
          continue;
        }
        // First answer per key wins; keys the batch does not have are ignored.
        const answers = new Map<string, string>();
        for (const a of reply.assignments) if (!answers.has(a.key)) answers.set(a.key, a.leaf_id);
        batch.forEach((p, i) => {
          const answer = answers.get(`D${i + 1}`);
          const entry = answer === undefined ? undefined : index.leaf(answer);
          if (entry) labels.set(p.defect.id, { status: 'assigned', leaf_id: entry.leaf.id, category_id: entry.category.id });
          else if (answer === undefined) next.push({ defect: p.defect, reason: 'omitted', detail: 'no answer for this defect' });
          else next.push({ defect: p.defect, reason: 'invalid_leaf', detail: JSON.stringify(answer.startsWith(INVALID_LEAF) ? answer.slice(INVALID_LEAF.length) : answer) });
        });
      }
      pending = next;
    }
    for (const p of pending) labels.set(p.defect.id, { status: 'unassigned', reason: p.reason ?? 'call_failed', detail: p.detail });
    return { labels, usage };
  }

  return { index, assign };
}
