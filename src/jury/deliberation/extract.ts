import type { ParticipantConfig } from '../../../schemas/config.js';
import type { Defect } from '../../../schemas/defect.js';
import type { CallUsage } from '../../../schemas/usage.js';
import { isEndpointOutage } from '../../llm/outage.js';
import { ModelCallError, type ModelGateway } from '../../llm/types.js';
import type { PromptSet } from '../../prompts/templates.js';
import { normalizeDefects } from '../normalize.js';
import { refsCheckedFor } from '../step-refs.js';
import { extractionMessages } from './prompts.js';
import { ExtractionOutput } from './schemas.js';

export type ExtractionResult =
  | { ok: true; defects: Defect[]; dissenting: string[]; confidence: number; droppedRefs: number; usage: CallUsage[] }
  | { ok: false; error: string; usage: CallUsage[] };

/** Strict majority of the jurors that completed Phase 1 (§2.2.2: failures do not shift the rule). */
export function majorityOf(panelSize: number): number {
  return Math.floor(panelSize / 2) + 1;
}

/**
 * The final extraction call to the moderator (§2.2.2): Phase 1 judgements (the opening
 * statements), the whole transcript and the running consensus state (the journal) in; consensus defects, confidence and dissent out. The consensus rule is
 * checked here, not only asked for: voters are limited to the panel, and a defect that has
 * neither a majority of the panel nor the "raised and never contested" basis becomes a
 * dissenting view instead.
 */
export async function extractVerdict(args: {
  gateway: ModelGateway;
  recordId: string;
  seat: ParticipantConfig;
  prompts: PromptSet;
  /** ids of the jurors that completed Phase 1 */
  panel: readonly string[];
  openings: string;
  /** the whole journal: turns and the moderator's state changes (Journal.fullView) */
  journal: string;
  removed: readonly string[];
  termination: string;
  rounds: number;
  nSteps: number;
}): Promise<ExtractionResult> {
  const majority = majorityOf(args.panel.length);
  try {
    const res = await args.gateway.structured({
      ctx: { record_id: args.recordId, phase: 'extraction', participant: args.seat.id, caller: 'jury.deliberation.extract' },
      seat: args.seat,
      messages: extractionMessages(args.prompts, args.openings, args.journal, { panel: args.panel, majority, removed: args.removed, termination: args.termination, rounds: args.rounds }),
      schema: refsCheckedFor(ExtractionOutput, (v) => v.consensus_defects, 'consensus_defects', args.nSteps),
      schemaName: 'ExtractionOutput',
    });
    const onPanel = new Set(args.panel);
    const defects: Defect[] = [];
    const dissenting = [...res.value.dissenting_views];
    let droppedRefs = 0;
    for (const raw of res.value.consensus_defects) {
      // One at a time so each defect keeps its `basis` next to it.
      const n = normalizeDefects([raw], args.nSteps);
      droppedRefs += n.droppedRefs + n.droppedDefects;
      const d = n.defects[0];
      if (!d) continue;
      const voters = [...new Set((d.voters ?? []).filter((v) => onPanel.has(v)))].sort();
      const uncontested = raw.basis === 'uncontested' && voters.length > 0;
      if (voters.length >= majority || uncontested) defects.push({ ...d, voters, vote_count: voters.length });
      else dissenting.push(`${voters.length ? voters.join(', ') : 'no panelist'} (${d.impact}, ${d.statement_refs.map((s) => `STEP-${s}`).join(', ')}; ${voters.length} of ${majority} needed): ${d.what_went_wrong}`);
    }
    defects.sort((a, b) => (a.statement_refs[0] ?? 0) - (b.statement_refs[0] ?? 0));
    return { ok: true, defects, dissenting, confidence: res.value.confidence, droppedRefs, usage: [res.usage] };
  } catch (err) {
    if (isEndpointOutage(err)) throw err;
    return { ok: false, error: (err as Error).message, usage: err instanceof ModelCallError ? [err.usage] : [] };
  }
}
