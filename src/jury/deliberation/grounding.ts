import type { GroundingConfig, ParticipantConfig } from '../../../schemas/config.js';
import { GroundingCheckOutput } from '../../../schemas/passes.js';
import type { CallUsage } from '../../../schemas/usage.js';
import type { ClaimCheck, Judgement, TranscriptTurn } from '../../../schemas/verdict.js';
import type { ModelGateway } from '../../llm/types.js';
import type { TraceInput } from '../../prompts/build.js';
import { groundingCheckMessages } from '../../prompts/passes.js';
import { fillTemplate, type PromptSet } from '../../prompts/templates.js';
import { locateQuote, matchOptions, quotedSpans, stepTokens, tokens } from '../grounding/index.js';
import { passCall } from '../passes/call.js';

/**
 * The grounding checker of deliberation (App. F). A juror's turn is read paragraph by
 * paragraph; a paragraph citing a step nobody has cited yet (in the openings or an earlier turn)
 * is a new claim. Before the moderator sees the turn, each new claim's quoted spans are looked up
 * in the steps it cites (../grounding, the same matching as the verdict's grounding). A claim
 * none of whose quotes is found, or that quotes nothing, is ungrounded; with `checker.model` a
 * model call decides instead, and when that call fails the claim is accepted and the check says
 * so (benefit of the doubt). An ungrounded claim is replaced, in what the moderator and the
 * final extraction read, by `prompts/grounding.note.md`; the transcript keeps the turn as spoken.
 */
export interface ClaimReview {
  /** the turn's text as the moderator and the extraction read it */
  message: string;
  checks: ClaimCheck[];
  usage: CallUsage[];
}

export interface ClaimChecker {
  review(turn: TranscriptTurn): Promise<ClaimReview>;
}

const STEP = /\[STEP-(\d+)\]/gi;

export function claimChecker(args: { grounding: GroundingConfig; gateway: ModelGateway; recordId: string; prompts: PromptSet; input: TraceInput; judgements: readonly Judgement[]; seat: ParticipantConfig }): ClaimChecker {
  const n = args.input.steps.length;
  const steps = stepTokens(args.input.steps.map((s) => s.text));
  const opts = matchOptions(args.grounding);
  const cited = new Set(args.judgements.filter((j) => j.ok).flatMap((j) => j.defects.flatMap((d) => d.statement_refs)));
  const useModel = args.grounding.checker?.model === true;

  async function check(turn: TranscriptTurn, paragraph: string, refs: number[]): Promise<{ check: ClaimCheck; usage: CallUsage[] }> {
    const quotes = quotedSpans(paragraph);
    const base = { turn: turn.turn, speaker: turn.speaker, refs: refs.join(','), quoted: quotes.join(' | '), error: null };
    const found = quotes.some((q) => locateQuote(steps, tokens(q), refs, opts)?.cited === true);
    if (found || !useModel) return { check: { ...base, decided_by: 'deterministic', result: found ? 'grounded' : 'ungrounded' }, usage: [] };
    const res = await passCall({ gateway: args.gateway, recordId: args.recordId, seat: args.seat, phase: 'grounding', messages: groundingCheckMessages(args.prompts, args.input, paragraph, refs.map((r) => `[STEP-${r}]`).join(', ')), schema: GroundingCheckOutput, schemaName: 'GroundingCheckOutput' });
    if (!res.ok) return { check: { ...base, decided_by: 'failure', result: 'accepted_on_failure', error: res.error }, usage: res.usage };
    return { check: { ...base, decided_by: 'model', result: res.value.grounded ? 'grounded' : 'ungrounded' }, usage: res.usage };
  }

  return {
    async review(turn) {
      const out: string[] = [];
      const checks: ClaimCheck[] = [];
      const usage: CallUsage[] = [];
      for (const paragraph of turn.message.split(/\n\s*\n/)) {
        const refs = [...new Set([...paragraph.matchAll(STEP)].map((m) => Number(m[1])))].filter((r) => r >= 1 && r <= n);
        if (refs.length === 0 || refs.every((r) => cited.has(r))) {
          out.push(paragraph);
          continue;
        }
        const r = await check(turn, paragraph, refs);
        checks.push(r.check);
        usage.push(...r.usage);
        if (r.check.result === 'ungrounded') {
          out.push(fillTemplate(args.prompts.templates['grounding.note'], { steps: refs.map((s) => `[STEP-${s}]`).join(', ') }).trim());
          continue;
        }
        for (const s of refs) cited.add(s);
        out.push(paragraph);
      }
      return { message: out.join('\n\n'), checks, usage };
    },
  };
}
