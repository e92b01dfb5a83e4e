import type { ParticipantConfig } from '../../../schemas/config.js';
import type { CallUsage } from '../../../schemas/usage.js';
import { isEndpointOutage } from '../../llm/outage.js';
import { ModelCallError, type ModelGateway } from '../../llm/types.js';
import type { ChatMessage } from '../../llm/types.js';
import type { z } from 'zod';

export type PassCall<T> = { ok: true; value: T; usage: CallUsage[] } | { ok: false; error: string; usage: CallUsage[] };

/**
 * One structured call of a verification pass. A failure is returned, not thrown, so the verdict
 * is kept; an endpoint outage is thrown on, as everywhere, so the stage stops unjudged.
 */
export async function passCall<T>(args: {
  gateway: ModelGateway;
  recordId: string;
  seat: ParticipantConfig;
  phase: 'removal' | 'arbiter' | 'grounding';
  messages: ChatMessage[];
  schema: z.ZodType<T>;
  schemaName: string;
}): Promise<PassCall<T>> {
  try {
    const res = await args.gateway.structured({
      ctx: { record_id: args.recordId, phase: args.phase, participant: args.seat.id, caller: args.phase === 'grounding' ? 'jury.deliberation.grounding' : `jury.passes.${args.phase}` },
      seat: args.seat,
      messages: args.messages,
      schema: args.schema,
      schemaName: args.schemaName,
    });
    return { ok: true, value: res.value, usage: [res.usage] };
  } catch (err) {
    if (isEndpointOutage(err)) throw err;
    return { ok: false, error: (err as Error).message, usage: err instanceof ModelCallError ? [err.usage] : [] };
  }
}
