import type { ArbiterConfig, JuryConfig, ParticipantConfig, RemovalPassConfig } from '../../../schemas/config.js';
import type { Defect } from '../../../schemas/defect.js';
import type { CallUsage } from '../../../schemas/usage.js';
import type { DroppedNegative, Judgement, NegativeAdjudication } from '../../../schemas/verdict.js';
import type { ModelGateway } from '../../llm/types.js';
import type { TraceInput } from '../../prompts/build.js';
import type { PromptSet } from '../../prompts/templates.js';
import { modelJurors, seatWithSeed } from '../seats.js';
import { arbiterPass, type Rulings } from './arbiter.js';
import { type Contested, contestedFindings } from './contested.js';
import { removalPass, type Removals } from './removal.js';

export { contestedFindings } from './contested.js';

/** What the verification passes did to one verdict's defects. */
export interface PassesOutcome {
  defects: Defect[];
  /** absent: the removal pass is off or failed */
  dropped?: DroppedNegative[];
  /** absent: the arbiter is off or failed */
  adjudications?: NegativeAdjudication[];
  /** one line per failed pass (the verdict keeps what Phase 2 gave) */
  failures: string[];
  usage: CallUsage[];
}

const defaultSeats = new WeakMap<ParticipantConfig, Map<string, ParticipantConfig>>();

/** The pass's own seat, else the consolidator's (moderator's, first juror's) under the pass's id. */
export function passSeat(config: JuryConfig, own: ParticipantConfig | undefined, id: string): ParticipantConfig {
  if (own) return seatWithSeed(own);
  // External seats make no calls, so only a model seat can stand in.
  const base = config.consolidator ?? config.moderator ?? modelJurors(config)[0];
  if (!base) throw new Error(`the ${id} pass needs a seat: give it one, or a consolidator, moderator or model juror`);
  let byId = defaultSeats.get(base);
  if (!byId) defaultSeats.set(base, (byId = new Map()));
  let seat = byId.get(id);
  if (!seat) byId.set(id, (seat = seatWithSeed({ ...base, id })));
  return seat;
}

/** The enabled passes of a config; null when none is on. */
export function enabledPasses(config: Pick<JuryConfig, 'removal_pass' | 'arbiter'>): { removal: RemovalPassConfig | null; arbiter: ArbiterConfig | null } | null {
  const removal = config.removal_pass?.enabled ? config.removal_pass : null;
  const arbiter = config.arbiter?.enabled ? config.arbiter : null;
  return removal || arbiter ? { removal, arbiter } : null;
}

const byFirstRef = (a: Defect, b: Defect): number => (a.statement_refs[0] ?? 0) - (b.statement_refs[0] ?? 0);

/**
 * Consensus minus what the removal pass dropped and the arbiter rejected, plus the dissenting
 * findings the arbiter upheld. Both passes saw the same consensus, so either's removal counts.
 */
export function applyPasses(consensus: readonly Defect[], removals: Removals | null, contested: Contested, rulings: Rulings | null): Pick<PassesOutcome, 'defects' | 'dropped' | 'adjudications'> {
  const gone = new Set(removals?.keys() ?? []);
  const joined: Defect[] = [];
  const adjudications: NegativeAdjudication[] = [];
  for (const [i, r] of rulings ?? []) {
    const source = contested.sources[i]!;
    const defect = contested.defects[i]!;
    adjudications.push({ defect, origin: source, ruling: r.ruling, rationale: r.rationale });
    if (source === 'split_vote' && r.ruling === 'rejected') gone.add(contested.consensusIndex[i]!);
    if (source === 'dissent' && r.ruling === 'upheld') joined.push(defect);
  }
  const defects = [...consensus.filter((_, i) => !gone.has(i)), ...joined].sort(byFirstRef);
  return {
    defects,
    ...(removals ? { dropped: [...removals].sort((a, b) => a[0] - b[0]).map(([i, reason]) => ({ defect: consensus[i]!, reason })) } : {}),
    ...(rulings ? { adjudications } : {}),
  };
}

/** Run the enabled passes side by side over Phase 2's consensus; null when none is enabled. */
export async function runPasses(args: { config: JuryConfig; gateway: ModelGateway; prompts: PromptSet; recordId: string; input: TraceInput; consensus: Defect[]; judgements: readonly Judgement[] }): Promise<PassesOutcome | null> {
  const on = enabledPasses(args.config);
  if (!on) return null;
  const common = { gateway: args.gateway, recordId: args.recordId, prompts: args.prompts, input: args.input };
  const contested = on.arbiter ? contestedFindings(args.consensus, args.judgements, { dissent: on.arbiter.dissent, max: on.arbiter.max_findings }) : contestedFindings([], [], { dissent: false, max: 0 });
  const [rem, arb] = await Promise.all([
    on.removal ? removalPass({ ...common, seat: passSeat(args.config, on.removal.seat, 'removal'), defects: args.consensus, max: on.removal.max_findings }) : null,
    on.arbiter ? arbiterPass({ ...common, seat: passSeat(args.config, on.arbiter.seat, 'arbiter'), contested }) : null,
  ]);
  const failures = [rem && !rem.ok ? `removal pass failed (${rem.error}); consensus defects kept unreviewed` : null, arb && !arb.ok ? `evidence arbiter failed (${arb.error}); contested defects left as Phase 2 decided` : null].filter((f): f is string => f !== null);
  const applied = applyPasses(args.consensus, rem?.ok ? rem.value : null, contested, arb?.ok ? arb.value : null);
  return { ...applied, failures, usage: [...(rem?.usage ?? []), ...(arb?.usage ?? [])] };
}
