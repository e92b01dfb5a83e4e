import type { JuryConfig, VerdictDetails } from '../../schemas/config.js';
import type { Defect } from '../../schemas/defect.js';
import type { JuryMode } from '../../schemas/verdict.js';
import { PHASE1_STATUSES, type VerdictDetailRow } from '../../schemas/outputs.js';
import type { Verdict } from '../../schemas/verdict.js';

/**
 * Whether a verdict gets a `verdict_details` row. `auto` (the default) writes it where there is
 * something only the detail holds: deliberation's transcript, or what a verification pass
 * (removal pass, evidence arbiter) removed and ruled. Other modes' defect rows already carry
 * voters and vote counts, so their Phase 1 detail is on request (`on`).
 */
export function wantsDetail(setting: VerdictDetails | undefined, mode: JuryMode, passes = false): boolean {
  const s = setting ?? 'auto';
  return s === 'on' || (s === 'auto' && (mode === 'deliberation' || passes));
}

/** Whether the config turns on a verification pass (`removal_pass`, `arbiter`) or grounding (`grounding.policy` not off). */
export function passesOn(config: Pick<JuryConfig, 'removal_pass' | 'arbiter'> & { grounding?: JuryConfig['grounding'] }): boolean {
  return config.removal_pass?.enabled === true || config.arbiter?.enabled === true || (config.grounding !== undefined && config.grounding.policy !== 'off');
}

const detailDefect = (d: Defect) => ({
  statement_refs: d.statement_refs,
  impact: d.impact,
  what_went_wrong: d.what_went_wrong,
  evidence: d.evidence,
  correct_value: d.correct_value ?? null,
});

const passDefect = (d: Defect) => ({ ...detailDefect(d), vote_count: d.vote_count ?? null, voters: d.voters ?? [] });

/** The verdict's nested detail: Phase 1 judgements, transcript, dissent, termination facts, calls. */
export function detailRow(v: Verdict): VerdictDetailRow {
  const [ok, failed] = PHASE1_STATUSES;
  const last = v.transcript.at(-1);
  return {
    record_id: v.record_id,
    mode: v.mode,
    termination_reason: v.termination_reason,
    rounds: v.rounds,
    turns: v.transcript.length,
    last_speaker: last ? last.speaker : null,
    dropped_refs: v.dropped_refs,
    phase1: v.phase1_judgements.map((j) => ({
      seat_id: j.juror_id,
      model: j.model,
      status: j.ok ? ok : failed,
      error: j.ok ? null : (j.error ?? 'failed without a message'),
      dropped_refs: j.dropped_refs,
      defects: j.defects.map(detailDefect),
    })),
    dissenting_views: v.dissenting_views,
    transcript: v.transcript.map((t) => ({ turn: t.turn, round: t.round, speaker: t.speaker, instruction: t.instruction ?? null, content: t.message })),
    calls: v.usage.map((u) => ({
      phase: u.phase,
      participant: u.participant,
      model: u.model,
      tokens_in: u.tokens_in,
      tokens_out: u.tokens_out,
      cost_usd: u.cost_usd,
      latency_ms: u.latency_ms,
      attempts: u.attempts,
      outcome: u.outcome,
    })),
    dropped_negatives: v.dropped_negatives ? v.dropped_negatives.map((x) => ({ defect: passDefect(x.defect), reason: x.reason })) : null,
    negative_adjudications: v.negative_adjudications ? v.negative_adjudications.map((a) => ({ defect: passDefect(a.defect), origin: a.origin, ruling: a.ruling, rationale: a.rationale })) : null,
    grounding: v.grounding ? v.grounding.checks.map((c) => ({ ...c, impact: c.impact ?? null })) : null,
    voter_corrections: v.grounding ? v.grounding.voter_corrections : null,
    claim_checks: v.grounding?.claim_checks ?? null,
  };
}

