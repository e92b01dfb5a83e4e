import { describe, expect, it } from 'vitest';
import type { CallUsage } from '../../schemas/usage.js';
import { costOf, Ledger, unpricedModels } from '../../src/llm/ledger.js';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';

const prices = { big: { input_per_mtok: 3, output_per_mtok: 15 }, small: { input_per_mtok: 0.5, output_per_mtok: 1.5 } };

function u(over: Partial<CallUsage>): CallUsage {
  return { phase: 'phase1', participant: 'j1', model: 'big', endpoint: 'e', tokens_in: 0, tokens_out: 0, cost_usd: 0, latency_ms: 1, attempts: 1, outcome: 'ok', ...over };
}

describe('costOf', () => {
  it('follows the price table per million tokens', () => {
    expect(costOf(prices, 'big', 1_000_000, 0)).toBe(3);
    expect(costOf(prices, 'big', 2000, 1000)).toBeCloseTo((2000 * 3 + 1000 * 15) / 1e6, 12);
    // Unpriced: unknown (null), not free (issue 13).
    expect(costOf(prices, 'unknown', 5000, 5000)).toBeNull();
    expect(costOf(prices, 'toString', 5000, 5000)).toBeNull(); // not fooled by Object.prototype
  });
});

describe('Ledger', () => {
  it('sums calls overall and by phase, model, participant; flags unpriced models', () => {
    const l = new Ledger(prices);
    const calls: Array<[CallUsage, string, boolean]> = [
      [u({ tokens_in: 1000, tokens_out: 200, cost_usd: l.costOf('big', 1000, 200), attempts: 2 }), 'r1', false],
      [u({ participant: 'j2', model: 'small', tokens_in: 4000, tokens_out: 100, cost_usd: l.costOf('small', 4000, 100) }), 'r1', false],
      [u({ phase: 'consolidation', participant: 'consolidator', tokens_in: 3000, tokens_out: 900, cost_usd: l.costOf('big', 3000, 900) }), 'r1', true],
      [u({ participant: 'j3', model: 'mystery', tokens_in: 50, tokens_out: 50, cost_usd: l.costOf('mystery', 50, 50), outcome: 'error', attempts: 5 }), 'r2', false],
    ];
    for (const [usage, rec, cached] of calls) l.record(usage, rec, cached);
    const s = l.summary();
    const sum = (f: (c: CallUsage) => number | null) => calls.reduce((a, [c]) => a + (f(c) ?? 0), 0);
    expect(s.total.calls).toBe(4);
    expect(s.total.ok).toBe(3);
    expect(s.total.errors).toBe(1);
    expect(s.total.tokens_in).toBe(sum((c) => c.tokens_in));
    expect(s.total.tokens_out).toBe(sum((c) => c.tokens_out));
    expect(s.total.cost_usd).toBeCloseTo(sum((c) => c.cost_usd), 12);
    expect(s.total.cost_usd).toBeCloseTo((1000 * 3 + 200 * 15 + 4000 * 0.5 + 100 * 1.5 + 3000 * 3 + 900 * 15) / 1e6, 12);
    expect(calls[3]![0].cost_usd).toBeNull();
    expect(s.total.unpriced_calls).toBe(1);
    expect(s.total.spent_usd).toBeCloseTo(s.total.cost_usd - calls[2]![0].cost_usd!, 12);
    expect(s.total.attempts).toBe(2 + 1 + 5); // cached call made no attempt this run
    expect(s.calls_made).toBe(3);
    expect(s.calls_cached).toBe(1);
    expect(Object.keys(s.by_phase)).toEqual(['consolidation', 'phase1']);
    expect(s.by_phase.phase1!.calls).toBe(3);
    expect(s.by_model.big!.calls).toBe(2);
    expect(s.by_model.small!.cost_usd).toBeCloseTo(calls[1]![0].cost_usd!, 12);
    expect(s.by_participant.consolidator!.cached).toBe(1);
    expect(s.records).toBe(2);
    expect(s.cost_per_record_mean).toBeCloseTo(s.total.cost_usd / 2, 12);
    expect(s.unpriced_models).toEqual(['mystery']);
  });

  it('is empty and safe with no calls', () => {
    const s = new Ledger().summary();
    expect(s.total.calls).toBe(0);
    expect(s.cost_per_record_mean).toBe(0);
  });
});

describe('unpricedModels', () => {
  it('names the repair generator\'s model when it has no price, and only while repair is on', () => {
    const repair = { generator: { id: 'gen', endpoint: 'sim', model: 'sim-generator' } };
    expect(unpricedModels(parseConfig({ ...defaultConfigInput(), repair }))).toEqual(['sim-generator']);
    expect(unpricedModels(parseConfig({ ...defaultConfigInput(), repair: { ...repair, enabled: false } }))).toEqual([]);
  });
});
