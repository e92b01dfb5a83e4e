import { z } from 'zod';
import { Defect } from './defect.js';
import { CallUsage } from './usage.js';

export const JURY_MODES = ['single', 'union', 'majority', 'consolidation', 'deliberation'] as const;
export const JuryMode = z.enum(JURY_MODES);
export type JuryMode = z.infer<typeof JuryMode>;

/** One juror's independent Phase 1 result. */
export const Judgement = z.object({
  juror_id: z.string(),
  model: z.string(),
  ok: z.boolean(),
  defects: z.array(Defect),
  /** refs the juror cited that are not steps of this trace (dropped, counted). */
  dropped_refs: z.int().nonnegative(),
  error: z.string().optional(),
});
export type Judgement = z.infer<typeof Judgement>;

export const TranscriptTurn = z.object({
  turn: z.int().nonnegative(),
  round: z.int().nonnegative(),
  speaker: z.string(),
  instruction: z.string().optional(),
  message: z.string(),
});
export type TranscriptTurn = z.infer<typeof TranscriptTurn>;

export const TERMINATION_REASONS = [
  'not_applicable', // single / union / majority / consolidation
  'no_new_arguments',
  'universal_agreement',
  'cycling',
  'turn_cap',
  'skipped_unanimous', // adaptive phase 2 skipped deliberation
  'skipped_empty',
  'error',
] as const;
export const TerminationReason = z.enum(TERMINATION_REASONS);
export type TerminationReason = z.infer<typeof TerminationReason>;

/** A consensus defect the removal pass took out of the verdict (App. E `dropped_negatives`). */
export const DroppedNegative = z.object({
  defect: Defect,
  /** why the trace does not support it, in the pass's words */
  reason: z.string(),
});
export type DroppedNegative = z.infer<typeof DroppedNegative>;

export const ADJUDICATION_SOURCES = ['split_vote', 'dissent'] as const;
export const ARBITER_RULINGS = ['upheld', 'rejected'] as const;

/** The evidence arbiter's ruling on one contested finding (App. E `negative_adjudications`). */
export const NegativeAdjudication = z.object({
  defect: Defect,
  /** (`origin`, not `source`: DuckDB reserves that word) split_vote: a consensus defect fewer jurors backed than succeeded; dissent: a Phase 1 finding left out of the consensus */
  origin: z.enum(ADJUDICATION_SOURCES),
  /** upheld: stays in (or, for dissent, joins) the verdict; rejected: stays out (or leaves) */
  ruling: z.enum(ARBITER_RULINGS),
  rationale: z.string(),
});
export type NegativeAdjudication = z.infer<typeof NegativeAdjudication>;

export const GROUNDING_POLICIES = ['off', 'keep', 'flag', 'drop'] as const;
export const GROUNDING_STATUSES = ['grounded', 'relocated', 'ungrounded'] as const;
export const GROUNDING_ACTIONS = ['kept', 'flagged', 'dropped'] as const;
export const QUOTE_MATCHES = ['exact', 'fuzzy', 'none'] as const;

/** Deterministic grounding of one consensus defect (src/jury/grounding): where its quotes sit in the trace. */
export const GroundingCheck = z.object({
  /** the defect's index in the consensus before grounding */
  defect_index: z.int().nonnegative(),
  /** the steps it cited, as "3,4" */
  cited_refs: z.string(),
  evidence: z.string(),
  /** grounded: a quote sits in a cited step; relocated: only in other steps (refs corrected); ungrounded: nowhere */
  status: z.enum(GROUNDING_STATUSES),
  /** (field names avoid DuckDB's reserved words: action, match, matched, quote, by) what the policy did: kept, flagged (kept, the verdict marked) or dropped */
  outcome: z.enum(GROUNDING_ACTIONS),
  quotes: z.int().nonnegative(),
  /** quotes found anywhere in the trace */
  quotes_found: z.int().nonnegative(),
  /** the best match of its quotes */
  best_match: z.enum(QUOTE_MATCHES),
  /** the corrected steps ("5"), when relocated */
  corrected_refs: z.string().nullable(),
  /** the defect's severity, so that a dropped defect can be put back when scoring the run without grounding (absent in verdicts written before it was kept) */
  impact: Defect.shape.impact.optional(),
});
export type GroundingCheck = z.infer<typeof GroundingCheck>;

/** A consensus defect whose voters did not match the Phase 1 findings the jurors made. */
export const VoterCorrection = z.object({
  defect_index: z.int().nonnegative(),
  /** comma-separated seat ids, as the consensus gave them and as corrected */
  voters_before: z.string(),
  voters_after: z.string(),
  vote_count_before: z.int().nonnegative().nullable(),
  vote_count_after: z.int().nonnegative(),
});
export type VoterCorrection = z.infer<typeof VoterCorrection>;

/** The grounding checker's look at one new claim in deliberation (src/jury/deliberation/grounding.ts). */
export const CLAIM_CHECK_RESULTS = ['grounded', 'ungrounded', 'accepted_on_failure'] as const;
export const ClaimCheck = z.object({
  turn: z.int().nonnegative(),
  speaker: z.string(),
  /** the claim's steps, as "3,4" */
  refs: z.string(),
  quoted: z.string(),
  /** deterministic: quote matching; model: the checker call decided; failure: the call failed */
  decided_by: z.enum(['deterministic', 'model', 'failure']),
  /** ungrounded claims are not counted as evidence; a failed check accepts the claim */
  result: z.enum(CLAIM_CHECK_RESULTS),
  error: z.string().nullable(),
});
export type ClaimCheck = z.infer<typeof ClaimCheck>;

/** What grounding did to a verdict (present when `grounding.policy` is not off). */
export const GroundingOutcome = z.object({
  policy: z.enum(GROUNDING_POLICIES),
  checks: z.array(GroundingCheck),
  voter_corrections: z.array(VoterCorrection),
  /** deliberation only, with the checker on */
  claim_checks: z.array(ClaimCheck).optional(),
});
export type GroundingOutcome = z.infer<typeof GroundingOutcome>;
/** What a cascade Phase 1 did for one record (config `phase1.strategy: cascade`). */
export const CascadeTrace = z.object({
  /** ids of the seats that judged the record, in the order they were seated (external seats included) */
  seats: z.array(z.string()),
  /** one entry per escalation: `after <n> seats: <rule>[, <rule>...] -> <seat ids added>` */
  escalations: z.array(z.string()),
});
export type CascadeTrace = z.infer<typeof CascadeTrace>;

/** The jury's answer for one record (paper App. E plus pipeline bookkeeping). */
export const Verdict = z.object({
  record_id: z.string(),
  mode: JuryMode,
  n_steps: z.int().nonnegative(),
  defects: z.array(Defect),
  confidence: z.number().min(0).max(1),
  dissenting_views: z.array(z.string()),
  termination_reason: TerminationReason,
  rounds: z.int().nonnegative(),
  phase1_judgements: z.array(Judgement),
  transcript: z.array(TranscriptTurn),
  jurors_total: z.int().nonnegative(),
  jurors_ok: z.int().nonnegative(),
  /** out-of-range refs dropped from the final defects. */
  dropped_refs: z.int().nonnegative(),
  degraded: z.boolean(),
  degraded_reason: z.string().nullable(),
  /** set when no verdict could be formed at all (e.g. fewer than min_jurors succeeded). */
  error: z.string().nullable(),
  usage: z.array(CallUsage),
  /** present when the removal pass ran (absent when it is off, or failed: then degraded_reason says so) */
  dropped_negatives: z.array(DroppedNegative).optional(),
  /** present when the evidence arbiter ran (absent when it is off, or failed: then degraded_reason says so) */
  negative_adjudications: z.array(NegativeAdjudication).optional(),
  /** present when deterministic grounding ran (`grounding.policy` not off) */
  grounding: GroundingOutcome.optional(),
  /** present when Phase 1 ran as a cascade: which seats ran and why each escalation happened */
  cascade: CascadeTrace.optional(),
  prompt_hash: z.string(),
  config_hash: z.string(),
});
export type Verdict = z.infer<typeof Verdict>;
