import { JudgementOutput } from '../../schemas/defect.js';
import type { ParticipantConfig } from '../../schemas/config.js';
import type { CallUsage } from '../../schemas/usage.js';
import type { Defect } from '../../schemas/defect.js';
import type { Judgement } from '../../schemas/verdict.js';
import { isEndpointOutage } from '../llm/outage.js';
import { ModelCallError, type ModelGateway } from '../llm/types.js';
import { consolidationMessages, type TraceInput } from '../prompts/build.js';
import type { PromptSet } from '../prompts/templates.js';
import { normalizeDefects } from './normalize.js';
import { refsCheckedFor } from './step-refs.js';

export type ConsolidationResult =
  | { ok: true; defects: Defect[]; droppedRefs: number; usage: CallUsage[] }
  | { ok: false; error: string; usage: CallUsage[] };

/**
 * One call that re-performs the audit with the panel's findings attached as unverified
 * candidates (App. C.1). Voters the consolidator names that were not on the panel are removed,
 * and vote_count is kept consistent with the voters that remain.
 */
export async function consolidate(args: {
  gateway: ModelGateway;
  recordId: string;
  seat: ParticipantConfig;
  prompts: PromptSet;
  input: TraceInput;
  propagation: boolean;
  judgements: readonly Judgement[];
}): Promise<ConsolidationResult> {
  const panel = args.judgements.filter((j) => j.ok).map((j) => ({ juror_id: j.juror_id, defects: j.defects }));
  try {
    const res = await args.gateway.structured({
      ctx: { record_id: args.recordId, phase: 'consolidation', participant: args.seat.id, caller: 'jury.consolidate' },
      seat: args.seat,
      messages: consolidationMessages(args.prompts, args.input, args.propagation, panel),
      schema: refsCheckedFor(JudgementOutput, (v) => v.negatives, 'negatives', args.input.steps.length),
      schemaName: 'JudgementOutput',
    });
    const n = normalizeDefects(res.value.negatives, args.input.steps.length);
    const onPanel = new Set(panel.map((p) => p.juror_id));
    const defects = n.defects.map((d) => {
      const voters = [...new Set((d.voters ?? []).filter((v) => onPanel.has(v)))].sort();
      return { ...d, voters, vote_count: voters.length };
    });
    return { ok: true, defects, droppedRefs: n.droppedRefs + n.droppedDefects, usage: [res.usage] };
  } catch (err) {
    if (isEndpointOutage(err)) throw err;
    return { ok: false, error: (err as Error).message, usage: err instanceof ModelCallError ? [err.usage] : [] };
  }
}
