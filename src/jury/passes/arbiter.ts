import type { ParticipantConfig } from '../../../schemas/config.js';
import { ArbiterOutput } from '../../../schemas/passes.js';
import type { ModelGateway } from '../../llm/types.js';
import type { TraceInput } from '../../prompts/build.js';
import { arbiterMessages, findingIndex } from '../../prompts/passes.js';
import type { PromptSet } from '../../prompts/templates.js';
import { passCall, type PassCall } from './call.js';
import type { Contested } from './contested.js';

export interface Ruling {
  ruling: 'upheld' | 'rejected';
  rationale: string;
}

/** Index into the contested findings -> the arbiter's ruling; findings it skipped have none. */
export type Rulings = Map<number, Ruling>;

/** The evidence arbiter: one call over the contested findings; the first ruling per finding counts. */
export async function arbiterPass(args: { gateway: ModelGateway; recordId: string; seat: ParticipantConfig; prompts: PromptSet; input: TraceInput; contested: Contested }): Promise<PassCall<Rulings>> {
  const c = args.contested;
  const out: Rulings = new Map();
  if (c.defects.length === 0) return { ok: true, value: out, usage: [] };
  const res = await passCall({ gateway: args.gateway, recordId: args.recordId, seat: args.seat, phase: 'arbiter', messages: arbiterMessages(args.prompts, args.input, c.defects, c.contest), schema: ArbiterOutput, schemaName: 'ArbiterOutput' });
  if (!res.ok) return res;
  for (const r of res.value.rulings) {
    const i = findingIndex(r.id);
    if (i === null || i >= c.defects.length || out.has(i)) continue;
    out.set(i, { ruling: r.ruling, rationale: r.rationale.trim() || 'no rationale given' });
  }
  return { ok: true, value: out, usage: res.usage };
}
