/**
 * Token and dollar ledger. Aggregates incrementally (no per-call list) so a long streaming run
 * does not grow memory with every call; only the set of record ids is kept, for cost per record.
 */
import type { JuryConfig, PriceConfig } from '../../schemas/config.js';
import type { CallUsage } from '../../schemas/usage.js';
import { RecentMap } from '../util/recent.js';

export type PriceTable = Record<string, PriceConfig>;

/** The share of the online price a batched call pays when the model has no batch rate of its own. */
export const DEFAULT_BATCH_DISCOUNT = 0.5;

/** USD per million tokens in and out of `p`, online or through a batch (its batch rate, else the discounted online one). */
export function ratesOf(p: PriceConfig, batch: boolean): { input: number; output: number } {
  if (!batch) return { input: p.input_per_mtok, output: p.output_per_mtok };
  const discount = p.batch_discount ?? DEFAULT_BATCH_DISCOUNT;
  return { input: p.batch_input_per_mtok ?? p.input_per_mtok * discount, output: p.batch_output_per_mtok ?? p.output_per_mtok * discount };
}

/**
 * Dollars for one call; null for a model missing from the table: its cost is unknown, not 0.
 * `batch`: the call went through a Batch API and pays the model's batch rate.
 */
export function costOf(prices: PriceTable, model: string, tokensIn: number, tokensOut: number, batch = false): number | null {
  const p = Object.hasOwn(prices, model) ? prices[model] : undefined;
  if (!p) return null;
  const r = ratesOf(p, batch);
  return (tokensIn * r.input + tokensOut * r.output) / 1_000_000;
}

/** Models of the config's seats with no entry under `prices`, sorted: their calls' cost is unknown. */
type SeatsOf = Pick<JuryConfig, 'jurors' | 'consolidator' | 'moderator' | 'taxonomy' | 'prices'> & Partial<Pick<JuryConfig, 'removal_pass' | 'arbiter' | 'repair'>>;

/** The models the config's seats call, sorted (the repair generator's when repair is on). */
export function callingModels(config: SeatsOf): string[] {
  // External jurors make no call, so they have no price to miss.
  const generator = config.repair?.enabled ? config.repair.generator : undefined;
  const seats = [...config.jurors.filter((j) => j.kind !== 'external'), config.consolidator, config.moderator, config.taxonomy?.assigner, config.taxonomy?.inducer, config.removal_pass?.seat, config.arbiter?.seat, generator];
  return [...new Set(seats.filter((s) => s !== undefined).map((s) => s.model))].sort();
}

export function unpricedModels(config: SeatsOf): string[] {
  return callingModels(config).filter((m) => !Object.hasOwn(config.prices, m));
}

export interface Totals {
  /** logical calls (after retries and re-asks), cached ones included */
  calls: number;
  ok: number;
  errors: number;
  /** calls served from the response cache (no HTTP request this run) */
  cached: number;
  /** HTTP attempts made this run (cached calls add none) */
  attempts: number;
  tokens_in: number;
  tokens_out: number;
  /** as recorded in CallUsage, cached calls included (what the verdicts say); priced calls only */
  cost_usd: number;
  /** calls whose model has no price: their cost is unknown and left out of cost_usd / spent_usd */
  unpriced_calls: number;
  /** only calls that went to the network this run (what this run paid) */
  spent_usd: number;
}

export interface LedgerSummary {
  total: Totals;
  by_phase: Record<string, Totals>;
  by_model: Record<string, Totals>;
  by_participant: Record<string, Totals>;
  by_endpoint: Record<string, Totals>;
  records: number;
  /** mean cost_usd per distinct record_id (0 when there are none) */
  cost_per_record_mean: number;
  /** logical calls that hit the network vs. were replayed from the cache */
  calls_made: number;
  calls_cached: number;
  /** models that were called but have no price: their calls' cost_usd is null, left out of the totals */
  unpriced_models: string[];
}

function emptyTotals(): Totals {
  return { calls: 0, ok: 0, errors: 0, cached: 0, attempts: 0, tokens_in: 0, tokens_out: 0, cost_usd: 0, unpriced_calls: 0, spent_usd: 0 };
}

function add(t: Totals, u: CallUsage, cached: boolean): void {
  t.calls += 1;
  if (u.outcome === 'ok') t.ok += 1;
  else t.errors += 1;
  if (cached) t.cached += 1;
  else {
    t.attempts += u.attempts;
    t.spent_usd += u.cost_usd ?? 0;
  }
  t.tokens_in += u.tokens_in;
  t.tokens_out += u.tokens_out;
  if (u.cost_usd === null) t.unpriced_calls += 1;
  else t.cost_usd += u.cost_usd;
}

function bump(map: Map<string, Totals>, key: string, u: CallUsage, cached: boolean): void {
  let t = map.get(key);
  if (!t) map.set(key, (t = emptyTotals()));
  add(t, u, cached);
}

export class Ledger {
  private readonly total = emptyTotals();
  private readonly phases = new Map<string, Totals>();
  private readonly models = new Map<string, Totals>();
  private readonly participants = new Map<string, Totals>();
  private readonly endpoints = new Map<string, Totals>();
  // Distinct records: a count plus a bounded recent set (a record's calls come close together).
  private readonly recentRecords = new RecentMap<true>(10_000);
  private recordCount = 0;
  private readonly unpriced = new Set<string>();

  constructor(private readonly prices: PriceTable = {}) {}

  costOf(model: string, tokensIn: number, tokensOut: number, batch = false): number | null {
    return costOf(this.prices, model, tokensIn, tokensOut, batch);
  }

  isPriced(model: string): boolean {
    return Object.hasOwn(this.prices, model);
  }

  /** Count one logical call. The gateway calls this for every call it finishes, ok or not. */
  record(usage: CallUsage, recordId: string, cached: boolean): void {
    add(this.total, usage, cached);
    bump(this.phases, usage.phase, usage, cached);
    bump(this.models, usage.model, usage, cached);
    bump(this.participants, usage.participant, usage, cached);
    bump(this.endpoints, usage.endpoint, usage, cached);
    if (!this.recentRecords.has(recordId)) {
      this.recentRecords.set(recordId, true);
      this.recordCount += 1;
    }
    if (!this.isPriced(usage.model)) this.unpriced.add(usage.model);
  }

  summary(): LedgerSummary {
    const copy = (m: Map<string, Totals>) => Object.fromEntries([...m].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, { ...v }]));
    return {
      total: { ...this.total },
      by_phase: copy(this.phases),
      by_model: copy(this.models),
      by_participant: copy(this.participants),
      by_endpoint: copy(this.endpoints),
      records: this.recordCount,
      cost_per_record_mean: this.recordCount === 0 ? 0 : this.total.cost_usd / this.recordCount,
      calls_made: this.total.calls - this.total.cached,
      calls_cached: this.total.cached,
      unpriced_models: [...this.unpriced].sort(),
    };
  }
}
