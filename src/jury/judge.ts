import { isExternalSeat, type JurorConfig, type JuryConfig, type ParticipantConfig } from '../../schemas/config.js';
import type { Defect } from '../../schemas/defect.js';
import type { CallUsage } from '../../schemas/usage.js';
import { type CascadeTrace, type ClaimCheck, type Judgement, type TerminationReason, type TranscriptTurn, Verdict } from '../../schemas/verdict.js';
import type { ModelGateway } from '../llm/types.js';
import { phase1Messages, type TraceInput } from '../prompts/build.js';
import type { PromptSet } from '../prompts/templates.js';
import { agreement, dissent, majorityDefects, mergedUnion, unionDefects } from './aggregate.js';
import { consolidate } from './consolidate.js';
import { deliberate } from './deliberation/index.js';
import type { Phase1Admission } from './admission.js';
import { runPhase1, type Phase1Result } from './phase1.js';
import { runCascade } from './cascade.js';
import { externalJudgement, type ExternalSources } from './external/index.js';
import { groundConsensus, groundingOn } from './grounding/index.js';
import { runPasses } from './passes/index.js';
import { activeSeats, minJurors, seatWithSeed } from './seats.js';

/** Everything judging needs besides the record; built once per run. */
export interface JuryContext {
  config: JuryConfig;
  gateway: ModelGateway;
  prompts: PromptSet;
  configHash: string;
  /** ms any endpoint has been down so far (the gateway's health view): Phase 1's ceiling skips it */
  downMs?: () => number;
  /** holds a record's Phase 1 until its endpoints can take the calls (./admission.ts); absent: no holding */
  admission?: Phase1Admission;
  /** sources of `kind: external` seats that read files (src/compose/external-sources.ts) */
  external?: ExternalSources;
}

export interface JudgeInput extends TraceInput {
  id: string;
  /** per `step_scores` seat id, the scores its `field` held in the input row */
  scores?: Readonly<Record<string, unknown>> | undefined;
}

type Phase2 = { defects: Defect[]; dissenting: string[]; droppedRefs: number; degradedReason: string | null; usage: CallUsage[]; claimChecks?: ClaimCheck[] } & Partial<Deliberated>;
/** What deliberation adds to a Phase 2 result (App. E). */
type Deliberated = { confidence: number; transcript: TranscriptTurn[]; rounds: number; termination: TerminationReason };

/** Phase 2 for the non-deliberative modes; falls back to a Phase 1 aggregate when it fails. */
async function phase2(ctx: JuryContext, input: JudgeInput, judgements: Judgement[]): Promise<Phase2> {
  const none = { droppedRefs: 0, degradedReason: null, usage: [] };
  switch (ctx.config.mode) {
    case 'single': {
      const only = judgements.find((j) => j.ok);
      return { ...none, defects: only ? only.defects : [], dissenting: [] };
    }
    case 'union':
      return { ...none, defects: unionDefects(judgements), dissenting: [] };
    case 'majority': {
      const m = majorityDefects(judgements);
      return { ...none, defects: m.defects, dissenting: dissent(m.defects, judgements) };
    }
    case 'consolidation': {
      const seat = seatWithSeed(ctx.config.consolidator!);
      const c = await consolidate({ gateway: ctx.gateway, recordId: input.id, seat, prompts: ctx.prompts, input, propagation: ctx.config.propagation, judgements });
      if (c.ok) return { defects: c.defects, dissenting: dissent(c.defects, judgements), droppedRefs: c.droppedRefs, degradedReason: null, usage: c.usage };
      const fallback = mergedUnion(judgements);
      return { defects: fallback, dissenting: [], droppedRefs: 0, degradedReason: `consolidation failed (${c.error}); verdict aggregated from phase 1`, usage: c.usage };
    }
    case 'deliberation':
      return deliberate({ gateway: ctx.gateway, prompts: ctx.prompts, config: ctx.config, input, judgements });
  }
}

/** Phase 1 once the admission lets the record in; each juror's share goes back as its call ends. */
async function phase1(ctx: JuryContext, input: JudgeInput, jurors: ParticipantConfig[]): Promise<Phase1Result> {
  const pass = ctx.admission ? await ctx.admission.enter(jurors) : undefined;
  try {
    return await runPhase1({
      gateway: ctx.gateway,
      recordId: input.id,
      jurors,
      messages: phase1Messages(ctx.prompts, input, ctx.config.propagation),
      nSteps: input.steps.length,
      timeoutMs: ctx.config.phase1_timeout_ms,
      ...(ctx.downMs ? { downMs: ctx.downMs } : {}),
      ...(pass ? { onJurorDone: (seat: ParticipantConfig) => pass.done(seat.endpoint) } : {}),
    });
  } finally {
    pass?.release();
  }
}

/**
 * Phase 1 over every seat, in seat order: model jurors are called (./phase1.ts), external seats
 * read (./external/), before any call so a dead-lettered record costs nothing. A seat that
 * abstains on the record is not seated for it. A cascade (`phase1.strategy: cascade`, ./cascade.ts)
 * reads every external seat first too, then seats them as its rules say.
 */
async function seatedPhase1(ctx: JuryContext, input: JudgeInput, seats: readonly JurorConfig[]): Promise<Phase1Result & { cascade?: CascadeTrace }> {
  const read = new Map<string, Judgement | null>();
  for (const s of seats) {
    if (!isExternalSeat(s)) continue;
    const out = externalJudgement(s, input, ctx.external);
    read.set(s.id, 'abstain' in out ? null : out.judgement);
  }
  const sit = async (group: readonly JurorConfig[]): Promise<Phase1Result> => {
    const models = group.filter((s): s is ParticipantConfig => !isExternalSeat(s));
    const p1 = models.length > 0 ? await phase1(ctx, input, models) : { judgements: [], usage: [] };
    const called = new Map(p1.judgements.map((j) => [j.juror_id, j]));
    const judgements = group.flatMap((s) => {
      const j = isExternalSeat(s) ? read.get(s.id) : called.get(s.id);
      return j ? [j] : [];
    });
    return { judgements, usage: p1.usage };
  };
  const p1 = ctx.config.phase1;
  return p1?.strategy === 'cascade' ? runCascade(seats, p1.cascade, sit) : sit(seats);
}

/**
 * One record through the jury: Phase 1 fan-out, then the configured Phase 2. Never throws for
 * model failures: a record that cannot be judged gets a verdict with `error` set. The
 * exceptions: EndpointOutageError (an endpoint down beyond the run's limit), thrown on so the
 * record stays unjudged instead of getting a verdict it does not deserve; and
 * ExternalRecordMissing, thrown before any call when an external seat with
 * `on_missing: dead_letter` lacks the record (the caller dead-letters it).
 */
export async function judgeRecord(ctx: JuryContext, input: JudgeInput): Promise<Verdict> {
  const p1 = await seatedPhase1(ctx, input, activeSeats(ctx.config));
  const jurors = p1.judgements; // the seats that sat for this record
  const need = minJurors(ctx.config, jurors.length);
  const ok = p1.judgements.filter((j) => j.ok);
  const failed = p1.judgements.filter((j) => !j.ok);
  const base = {
    record_id: input.id,
    mode: ctx.config.mode,
    n_steps: input.steps.length,
    termination_reason: 'not_applicable' as const,
    rounds: 0,
    phase1_judgements: p1.judgements,
    transcript: [],
    jurors_total: jurors.length,
    jurors_ok: ok.length,
    ...(p1.cascade ? { cascade: p1.cascade } : {}),
    prompt_hash: ctx.prompts.hash,
    config_hash: ctx.configHash,
  };
  const failures = failed.map((j) => `${j.juror_id}: ${j.error}`).join('; ');
  if (ok.length < need) {
    return Verdict.parse({
      ...base,
      defects: [],
      confidence: 0,
      dissenting_views: [],
      dropped_refs: 0,
      degraded: true,
      degraded_reason: `only ${ok.length} of ${jurors.length} jurors succeeded (minimum ${need})`,
      error: `too few jurors succeeded: ${failures}`,
      usage: p1.usage,
    });
  }
  const p2 = await phase2(ctx, input, p1.judgements);
  // Deterministic grounding (no call) before the passes, so they review only what it kept.
  const g = groundingOn(ctx.config);
  const grounded = g ? groundConsensus(g, p2.defects, input.steps.map((s) => s.text), p1.judgements) : null;
  const consensus = grounded ? grounded.defects : p2.defects;
  // The verification passes (removal, arbiter) after Phase 2; null when none is configured.
  const passes0 = await runPasses({ config: ctx.config, gateway: ctx.gateway, prompts: ctx.prompts, recordId: input.id, input, consensus, judgements: p1.judgements });
  const { passes, grounded: groundedAll } = groundRestored(g, grounded, passes0, p2.defects.length, input, p1.judgements);
  const defects = passes ? passes.defects : consensus;
  // Parsing checks the contract at the boundary and puts keys in schema order for readers.
  const reasons = [failed.length > 0 ? `${failed.length} of ${jurors.length} jurors failed (${failures})` : null, p2.degradedReason, groundedAll?.flag ?? null, ...(passes?.failures ?? [])].filter((r): r is string => r !== null);
  return Verdict.parse({
    ...base,
    defects,
    confidence: p2.confidence ?? agreement(defects, p1.judgements),
    ...(p2.termination ? { termination_reason: p2.termination, rounds: p2.rounds ?? 0, transcript: p2.transcript ?? [] } : {}),
    // A dissenting finding the arbiter upheld is no longer dissent.
    dissenting_views: (passes || groundedAll) && p2.dissenting.length > 0 ? dissent(defects, p1.judgements) : p2.dissenting,
    dropped_refs: p2.droppedRefs + (ctx.config.mode === 'consolidation' ? 0 : ok.reduce((a, j) => a + j.dropped_refs, 0)),
    degraded: reasons.length > 0,
    degraded_reason: reasons.length > 0 ? reasons.join('; ') : null,
    error: null,
    usage: [...p1.usage, ...p2.usage, ...(passes?.usage ?? [])],
    ...(passes?.dropped ? { dropped_negatives: passes.dropped } : {}),
    ...(passes?.adjudications ? { negative_adjudications: passes.adjudications } : {}),
    ...(groundedAll ? { grounding: { ...groundedAll.outcome, ...(p2.claimChecks ? { claim_checks: p2.claimChecks } : {}) } } : {}),
  });
}

type Grounded = ReturnType<typeof groundConsensus>;
type Passes = Awaited<ReturnType<typeof runPasses>>;

/**
 * Dissenting findings the arbiter upheld join the verdict after grounding ran over the
 * consensus: they are grounded too, under the same policy, so `drop` cannot be bypassed
 * through the arbiter. Their checks follow the consensus's (defect_index from `offset` on).
 */
function groundRestored(g: ReturnType<typeof groundingOn>, grounded: Grounded | null, passes: Passes, offset: number, input: JudgeInput, judgements: readonly Judgement[]): { passes: Passes; grounded: Grounded | null } {
  const restored = (passes?.adjudications ?? []).filter((a) => a.origin === 'dissent' && a.ruling === 'upheld').map((a) => a.defect);
  if (!g || !grounded || !passes || restored.length === 0) return { passes, grounded };
  const again = groundConsensus(g, restored, input.steps.map((s) => s.text), judgements);
  const upheld = new Set(restored);
  const defects = [...passes.defects.filter((d) => !upheld.has(d)), ...again.defects].sort((a, b) => (a.statement_refs[0] ?? 0) - (b.statement_refs[0] ?? 0));
  const checks = [...grounded.outcome.checks, ...again.outcome.checks.map((c) => ({ ...c, defect_index: c.defect_index + offset }))];
  const flagged = checks.filter((c) => c.outcome === 'flagged').length;
  return {
    passes: { ...passes, defects },
    grounded: {
      defects: grounded.defects,
      outcome: { ...grounded.outcome, checks, voter_corrections: [...grounded.outcome.voter_corrections, ...again.outcome.voter_corrections] },
      flag: flagged > 0 ? `grounding: ${flagged} of ${checks.length} defects have no evidence quote found in the trace` : null,
    },
  };
}
