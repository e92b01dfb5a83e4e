/**
 * The dry run's projection (`reasoning-jury estimate`): the real Phase 1 and consolidation
 * prompts of sampled records, built by the code that builds them for real calls, counted with
 * the model layer's token estimate (src/llm/tokens.ts); reply sizes and deliberation turns from
 * a ReplyProfile (./estimate-profile.ts). Sums over the sample are scaled to the whole input.
 * No model is called.
 */
import type { JuryConfig } from '../../schemas/config.js';
import type { JuryMode } from '../../schemas/verdict.js';
import { activeJurors, activeSeats } from '../jury/seats.js';
import { costOf, type PriceTable } from '../llm/ledger.js';
import { takesBatches } from '../llm/providers/batch/index.js';
import { estimatePromptTokens } from '../llm/tokens.js';
import { consolidationMessages, phase1Messages, type TraceInput } from '../prompts/build.js';
import type { PromptSet } from '../prompts/templates.js';
import type { ReplyProfile } from './estimate-profile.js';

export interface ModeProjection {
  mode: JuryMode;
  calls: number;
  tokens_in: number;
  tokens_out: number;
  /** null when some call's model has no price */
  cost_usd: number | null;
  /**
   * The same calls in batch mode (docs/batch.md): batched endpoints' calls at their models' batch
   * rates, the rest online; null when some model has no price or the mode cannot run batched (deliberation).
   */
  batch_cost_usd: number | null;
}

/** One call of the projection: its seat's model and its sizes (fractional counts are expectations). */
interface Call {
  model: string;
  endpoint: string;
  n: number;
  tin: number;
  tout: number;
}

/** The modes this config can run: single, union, majority always; consolidation / deliberation with their seat. */
export function runnableModes(config: Pick<JuryConfig, 'consolidator' | 'moderator'>): JuryMode[] {
  return ['single', 'union', 'majority', ...(config.consolidator ? ['consolidation' as const] : []), ...(config.moderator ? ['deliberation' as const] : [])];
}

/**
 * Per model juror, the share of records it judges: 1 for all; in a cascade 1 for the model seats
 * among the first `start` seats and, for the rest, the escalation share a pilot's Phase 1 calls
 * per record imply (`--calibrate`, a pilot run with the same cascade), else 1: an upper bound.
 */
export function seatShares(config: JuryConfig, profile: Pick<ReplyProfile, 'phase1_calls'>): number[] {
  const jurors = activeJurors(config);
  const c = config.phase1;
  if (c?.strategy !== 'cascade') return jurors.map(() => 1);
  const first = new Set(activeSeats(config).slice(0, c.cascade.start).map((s) => s.id));
  const starting = jurors.filter((j) => first.has(j.id)).length;
  const later = jurors.length - starting;
  const measured = profile.phase1_calls;
  const share = measured === undefined || later === 0 ? 1 : Math.min(1, Math.max(0, (measured - starting) / later));
  return jurors.map((j) => (first.has(j.id) ? 1 : share));
}

/** The calls one record costs in `mode`. */
function recordCalls(mode: JuryMode, config: JuryConfig, set: PromptSet, input: TraceInput, profile: ReplyProfile): Call[] {
  const jurors = activeJurors(config);
  const p1in = estimatePromptTokens(phase1Messages(set, input, config.propagation));
  if (mode === 'single') return jurors.slice(0, 1).map((s) => ({ model: s.model, endpoint: s.endpoint, n: 1, tin: p1in, tout: profile.phase1_out }));
  const shares = seatShares(config, profile);
  const calls = jurors.map((s, i) => ({ model: s.model, endpoint: s.endpoint, n: shares[i]!, tin: p1in, tout: profile.phase1_out }));
  const seated = shares.reduce((a, b) => a + b, 0);
  if (mode === 'consolidation') {
    // The real prompt with an empty panel, plus the panel: every seated juror's projected reply.
    const empty = consolidationMessages(set, input, config.propagation, jurors.map((j) => ({ juror_id: j.id, defects: [] })));
    calls.push({ model: config.consolidator!.model, endpoint: config.consolidator!.endpoint, n: 1, tin: estimatePromptTokens(empty) + seated * profile.phase1_out, tout: profile.consolidation_out });
  }
  if (mode === 'deliberation') {
    const d = profile.deliberation;
    const moderator = config.moderator!.model;
    const tin = (s: typeof d.juror_turn) => (s.trace ? p1in : 0) + s.extra_in;
    // Turns go round the panel: each juror's model takes an equal share.
    for (const j of jurors) calls.push({ model: j.model, endpoint: j.endpoint, n: d.juror_turn.calls / jurors.length, tin: tin(d.juror_turn), tout: d.juror_turn.out });
    calls.push({ model: moderator, endpoint: config.moderator!.endpoint, n: d.moderator.calls, tin: tin(d.moderator), tout: d.moderator.out });
    calls.push({ model: moderator, endpoint: config.moderator!.endpoint, n: d.extraction.calls, tin: tin(d.extraction), tout: d.extraction.out });
  }
  return calls;
}

/**
 * Every runnable mode's projection for `total` records, from `sample` (records as the jury reads
 * them). Scaling is by record count: the sample's mean per record times `total`.
 */
export function projectModes(config: JuryConfig, set: PromptSet, sample: readonly TraceInput[], total: number, profile: ReplyProfile): ModeProjection[] {
  const prices: PriceTable = config.prices;
  const batched = (endpoint: string) => Object.hasOwn(config.endpoints, endpoint) && takesBatches(config.endpoints[endpoint]!);
  const scale = sample.length ? total / sample.length : 0;
  return runnableModes(config).map((mode) => {
    let calls = 0;
    let tin = 0;
    let tout = 0;
    let usd: number | null = 0;
    let batchUsd: number | null = mode === 'deliberation' ? null : 0;
    const add = (sum: number | null, cost: number | null) => (sum === null || cost === null ? null : sum + cost);
    for (const input of sample) {
      for (const c of recordCalls(mode, config, set, input, profile)) {
        calls += c.n;
        tin += c.n * c.tin;
        tout += c.n * c.tout;
        usd = add(usd, costOf(prices, c.model, c.n * c.tin, c.n * c.tout));
        batchUsd = add(batchUsd, costOf(prices, c.model, c.n * c.tin, c.n * c.tout, batched(c.endpoint)));
      }
    }
    const scaled = (x: number | null) => (x === null ? null : x * scale);
    return { mode, calls: Math.round(calls * scale), tokens_in: Math.round(tin * scale), tokens_out: Math.round(tout * scale), cost_usd: scaled(usd), batch_cost_usd: scaled(batchUsd) };
  });
}
