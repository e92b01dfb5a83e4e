import type { ParticipantConfig } from '../../../schemas/config.js';
import type { Defect } from '../../../schemas/defect.js';
import { RemovalOutput } from '../../../schemas/passes.js';
import type { ModelGateway } from '../../llm/types.js';
import type { TraceInput } from '../../prompts/build.js';
import { findingIndex, removalMessages } from '../../prompts/passes.js';
import type { PromptSet } from '../../prompts/templates.js';
import { passCall, type PassCall } from './call.js';

/** Index into the reviewed defects -> why the trace does not support it. */
export type Removals = Map<number, string>;

/**
 * The removal pass: one call over the consensus defects (the first `max` of them). A defect
 * leaves only on an explicit `keep: false`; one the reply does not mention, or names twice, is
 * decided by its first mention or kept: doubt keeps a finding.
 */
export async function removalPass(args: { gateway: ModelGateway; recordId: string; seat: ParticipantConfig; prompts: PromptSet; input: TraceInput; defects: readonly Defect[]; max: number }): Promise<PassCall<Removals>> {
  const reviewed = args.defects.slice(0, args.max);
  const out: Removals = new Map();
  if (reviewed.length === 0) return { ok: true, value: out, usage: [] };
  const res = await passCall({ gateway: args.gateway, recordId: args.recordId, seat: args.seat, phase: 'removal', messages: removalMessages(args.prompts, args.input, reviewed), schema: RemovalOutput, schemaName: 'RemovalOutput' });
  if (!res.ok) return res;
  const seen = new Set<number>();
  for (const d of res.value.decisions) {
    const i = findingIndex(d.id);
    if (i === null || i >= reviewed.length || seen.has(i)) continue;
    seen.add(i);
    if (!d.keep) out.set(i, d.reason.trim() || 'no reason given');
  }
  return { ok: true, value: out, usage: res.usage };
}
