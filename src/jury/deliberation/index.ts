import { DeliberationConfig, type GroundingConfig, type JuryConfig, type ParticipantConfig } from '../../../schemas/config.js';
import type { Defect } from '../../../schemas/defect.js';
import type { CallUsage } from '../../../schemas/usage.js';
import type { ClaimCheck, Judgement, TerminationReason, TranscriptTurn } from '../../../schemas/verdict.js';
import type { ModelGateway } from '../../llm/types.js';
import type { PanelEntry, TraceInput } from '../../prompts/build.js';
import type { PromptSet } from '../../prompts/templates.js';
import { agreement, dissent, mergedUnion } from '../aggregate.js';
import { modelJurors, seatWithSeed } from '../seats.js';
import { extractVerdict } from './extract.js';
import { type ClaimChecker, claimChecker } from './grounding.js';
import { runLoop } from './loop.js';
import { settledSection, sharedAuditPart } from './prompts.js';
import { renderOpenings, TurnRenderer } from './render.js';
import { triage } from './triage.js';

export { NOTHING_NEW, AGREE_ALL } from '../../prompts/deliberation-wire.js';
export { triage, type Triage, type TriagePath } from './triage.js';
export { majorityOf } from './extract.js';

/** Which way a record went through Phase 2 (reported by the benchmark and the docs). */
export type Phase2Path = 'skipped_empty' | 'skipped_unanimous' | 'contested_only' | 'full' | 'too_few_jurors';

export interface DeliberationOutcome {
  defects: Defect[];
  dissenting: string[];
  droppedRefs: number;
  degradedReason: string | null;
  usage: CallUsage[];
  confidence: number;
  transcript: TranscriptTurn[];
  rounds: number;
  termination: TerminationReason;
  path: Phase2Path;
  /** the grounding checker's look at each new claim; absent when it is off */
  claimChecks?: ClaimCheck[];
}

/** The `deliberation` section with its defaults filled in (the section is optional). */
export function deliberationSettings(config: Pick<JuryConfig, 'deliberation'>): DeliberationConfig {
  return config.deliberation ?? DeliberationConfig.parse({});
}

const byFirstRef = (a: Defect, b: Defect) => (a.statement_refs[0] ?? 0) - (b.statement_refs[0] ?? 0);

/**
 * Phase 2 in deliberation mode: adaptive triage (when enabled), the moderated loop, then the
 * final extraction; an extraction failure falls back to the Phase 1 aggregate, marked degraded.
 */
export async function deliberate(args: {
  gateway: ModelGateway;
  prompts: PromptSet;
  config: JuryConfig;
  input: TraceInput & { id: string };
  judgements: readonly Judgement[];
}): Promise<DeliberationOutcome> {
  const { config, judgements } = args;
  const settings = deliberationSettings(config);
  const policy = settings.adaptive;
  const ok = judgements.filter((j) => j.ok);
  const tri = triage(judgements, policy.same_severity);
  const okIds = new Set(ok.map((j) => j.juror_id));
  const speakers = modelJurors(config).filter((j) => okIds.has(j.id));
  const early = withoutDebate(policy, tri, judgements, ok.length, speakers.length);
  if (early) return early;

  const focus = policy.enabled && policy.contested_only && tri.path === 'contested' && tri.settled.length > 0;
  const panel: PanelEntry[] = focus ? tri.contested : ok.map((j) => ({ juror_id: j.juror_id, defects: j.defects }));
  const settled = focus ? tri.settled : [];
  const moderator = seatWithSeed(config.moderator!);
  const turns = new TurnRenderer();
  const openings = renderOpenings(panel);
  const loop = await runLoop({
    gateway: args.gateway,
    recordId: args.input.id,
    prompts: args.prompts,
    settings,
    maxRounds: policy.enabled ? policy.max_rounds : undefined,
    moderator,
    jurors: speakers.map(seatWithSeed),
    checker: checkerFor(args, moderator),
    turn: {
      set: args.prompts,
      shared: sharedAuditPart(args.prompts, args.input, config.propagation),
      openings,
      settled: settledSection(args.prompts, settled.length > 0 ? [{ juror_id: 'all panelists', defects: settled }] : []),
      turns,
    },
  });

  const ex = await extractVerdict({
    gateway: args.gateway,
    recordId: args.input.id,
    seat: moderator,
    prompts: args.prompts,
    panel: panel.map((p) => p.juror_id),
    openings,
    journal: loop.journal.fullView(),
    removed: loop.removed,
    termination: loop.termination,
    rounds: loop.rounds,
    nSteps: args.input.steps.length,
  });
  const notes = [...loop.notes];
  const usage = [...loop.usage, ...ex.usage];
  const common = { transcript: loop.transcript, rounds: loop.rounds, termination: loop.termination, path: (focus ? 'contested_only' : 'full') as Phase2Path, usage, ...(checkerOn(config) ? { claimChecks: loop.claimChecks } : {}) };
  if (!ex.ok) {
    notes.push(`extraction failed (${ex.error}); verdict aggregated from phase 1`);
    const defects = mergedUnion(judgements);
    return { ...common, defects, dissenting: dissent(defects, judgements), droppedRefs: 0, confidence: agreement(defects, judgements), degradedReason: notes.join('; ') };
  }
  // Settled findings stand; a discussed defect that only re-cites settled steps adds nothing.
  const settledSteps = new Set(settled.flatMap((d) => d.statement_refs));
  const discussed = ex.defects.filter((d) => !d.statement_refs.every((s) => settledSteps.has(s)));
  const defects = [...settled, ...discussed].sort(byFirstRef);
  // Settled groups count as full agreement next to the panel's confidence on the contested ones.
  const confidence = settled.length === 0 ? ex.confidence : (settled.length + ex.confidence * tri.contestedGroups) / (settled.length + tri.contestedGroups);
  return { ...common, defects, dissenting: ex.dissenting, droppedRefs: ex.droppedRefs, confidence, degradedReason: notes.length > 0 ? notes.join('; ') : null };
}

/** The grounding checker's section when deliberation should run it: grounding on, `checker` present and enabled. */
function checkerOn(config: JuryConfig): GroundingConfig | null {
  const g = config.grounding;
  return g && g.policy !== 'off' && g.checker?.enabled ? g : null;
}

/** The checker for one record, on the checker's own seat or the moderator's under the id `grounding`. */
function checkerFor(args: { gateway: ModelGateway; prompts: PromptSet; config: JuryConfig; input: TraceInput & { id: string }; judgements: readonly Judgement[] }, moderator: ParticipantConfig): ClaimChecker | undefined {
  const g = checkerOn(args.config);
  if (!g) return undefined;
  const seat = g.checker?.seat ? seatWithSeed(g.checker.seat) : { ...moderator, id: 'grounding' };
  return claimChecker({ grounding: g, gateway: args.gateway, recordId: args.input.id, prompts: args.prompts, input: args.input, judgements: args.judgements, seat });
}

/**
 * The outcomes that need no debate: adaptive triage skipping an empty or unanimous panel, and
 * fewer than two speakers. External seats' findings are openings like any juror's, but they
 * cannot speak (README, "External judges as jurors"): only model jurors that succeeded take turns.
 */
function withoutDebate(
  policy: ReturnType<typeof deliberationSettings>['adaptive'],
  tri: ReturnType<typeof triage>,
  judgements: readonly Judgement[],
  okCount: number,
  speakerCount: number,
): DeliberationOutcome | null {
  const quiet = { droppedRefs: 0, degradedReason: null, usage: [], transcript: [], rounds: 0, dissenting: [] };
  if (policy.enabled && policy.skip_when_empty && tri.path === 'empty') {
    return { ...quiet, defects: [], confidence: agreement([], judgements), termination: 'skipped_empty', path: 'skipped_empty' };
  }
  if (policy.enabled && policy.skip_when_unanimous && tri.path === 'unanimous') {
    return { ...quiet, defects: tri.settled, confidence: agreement(tri.settled, judgements), termination: 'skipped_unanimous', path: 'skipped_unanimous' };
  }
  if (speakerCount >= 2) return null;
  const defects = mergedUnion(judgements);
  const who = speakerCount === okCount ? `${okCount} succeeded in phase 1` : `${speakerCount} model juror(s) succeeded in phase 1 (external seats do not speak)`;
  return { ...quiet, defects, confidence: agreement(defects, judgements), termination: 'error', path: 'too_few_jurors', degradedReason: `deliberation needs at least 2 jurors, ${who}; verdict aggregated from phase 1` };
}
