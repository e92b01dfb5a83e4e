import type { ParticipantConfig, RepairConfig } from '../../schemas/config.js';
import type { Defect } from '../../schemas/defect.js';
import type { RepairCondition } from '../../schemas/repair.js';
import type { CallUsage } from '../../schemas/usage.js';
import { isEndpointOutage } from '../llm/outage.js';
import { type ChatMessage, ModelCallError, type ModelGateway, NoObjectGeneratedError } from '../llm/types.js';
import type { TraceInput } from '../prompts/build.js';
import { repairMessages } from '../prompts/repair.js';
import type { PromptSet } from '../prompts/templates.js';
import { seatWithSeed } from './seats.js';

/** One retry as the generator wrote it (or why it wrote nothing). */
export interface RetryOutcome {
  condition: RepairCondition;
  attempt: number;
  messages: ChatMessage[];
  text: string | null;
  finish_reason: string | null;
  error: string | null;
  usage: CallUsage[];
}

/** The generator seat of attempt n: its own seed, moved by n-1, so attempts draw different samples and a re-run the same ones. */
export function generatorSeat(generator: ParticipantConfig, attempt: number): ParticipantConfig {
  const base = seatWithSeed(generator);
  return attempt === 1 ? base : { ...base, seed: ((base.seed ?? 0) + attempt - 1) & 0x7fffffff };
}

/**
 * One defect-guided retry (App. N): the generator re-solves the record with the findings of
 * `condition` in its prompt. A failed call is returned as an outcome with `error` (the record
 * keeps its row); a reply cut at max_tokens keeps its text with finish reason `length`, and
 * the answer is then taken from a complete ANSWER line only. An endpoint outage is thrown on:
 * the record stays unjudged and uncommitted, as for a juror.
 */
export async function retryOnce(args: { gateway: ModelGateway; prompts: PromptSet; repair: RepairConfig; recordId: string; input: TraceInput; defects: readonly Defect[]; condition: RepairCondition; attempt: number }): Promise<RetryOutcome> {
  const messages = repairMessages(args.prompts, args.input, args.defects, args.condition, args.repair.answer);
  const base = { condition: args.condition, attempt: args.attempt, messages };
  try {
    const res = await args.gateway.text({
      ctx: { record_id: args.recordId, phase: 'repair', participant: args.repair.generator.id, caller: `jury.repair.${args.condition}`, sample_index: args.attempt - 1 },
      seat: generatorSeat(args.repair.generator, args.attempt),
      messages,
    });
    return { ...base, text: res.value, finish_reason: res.finish_reason ?? 'stop', error: null, usage: [res.usage] };
  } catch (err) {
    if (isEndpointOutage(err)) throw err;
    if (err instanceof NoObjectGeneratedError && err.finishReason === 'length') return { ...base, text: err.text, finish_reason: 'length', error: null, usage: [err.usage] };
    return { ...base, text: null, finish_reason: null, error: (err as Error).message, usage: err instanceof ModelCallError ? [err.usage] : [] };
  }
}
