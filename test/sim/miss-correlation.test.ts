/**
 * The simulator's `miss_correlation` ρ (issue 16.3): 0 leaves every reply as it was; with ρ = 1
 * two jurors of equal recall flag exactly the same gold-error steps (they share one draw per
 * step); in between, misses coincide more often than independent jurors' would (1 − r)².
 */
import { describe, expect, it } from 'vitest';
import { phase1Task } from '../../src/sim/tasks.js';
import { BASE_MODEL, type ModelProfile } from '../../src/sim/profile.js';
import { createRng } from '../../src/util/prng.js';
import type { GoldEntry } from '../../src/sim/gold.js';

const N_STEPS = 20;
const steps = Array.from({ length: N_STEPS }, (_, i) => `step ${i + 1}`);
// Every step a gold error, so each record gives 20 recall draws.
const goldOf = (i: number): GoldEntry => ({ id: `r${i}`, n_steps: N_STEPS, error_steps: steps.map((_, s) => s + 1) });

function flagged(model: ModelProfile, juror: string, seed: number, gold: GoldEntry): Set<number> {
  const rng = createRng(['test-content', juror, seed, gold.id]);
  const out = phase1Task.run({ request: { model: juror, messages: [], seed }, modelName: juror, model, blocks: new Map(), steps, gold, rng });
  if (out.kind !== 'json') throw new Error('phase1 replies with JSON');
  const negs = out.value.negatives as Array<{ statement_refs: string[] }>;
  return new Set(negs.flatMap((n) => n.statement_refs.map((r) => Number(r.slice(5)))).filter((s) => s <= N_STEPS));
}

/** Share of (record, step) pairs both jurors miss, over 200 records. */
function bothMiss(rho: number | undefined): number {
  const model: ModelProfile = { ...BASE_MODEL, recall: 0.6, adjacent_rate: 0, ...(rho === undefined ? {} : { miss_correlation: rho }) };
  let both = 0;
  for (let i = 0; i < 200; i++) {
    const g = goldOf(i);
    const a = flagged(model, 'juror-a', 1, g);
    const b = flagged(model, 'juror-b', 2, g);
    for (let s = 1; s <= N_STEPS; s++) if (!a.has(s) && !b.has(s)) both++;
  }
  return both / (200 * N_STEPS);
}

describe('miss_correlation', () => {
  it('0 gives the replies of a profile without the knob', () => {
    const g = goldOf(7);
    const without = { ...BASE_MODEL, recall: 0.6 };
    for (const juror of ['juror-a', 'juror-b']) expect(flagged({ ...without, miss_correlation: 0 }, juror, 3, g)).toEqual(flagged(without, juror, 3, g));
  });

  it('1 makes jurors of equal recall flag the same gold-error steps', () => {
    const model = { ...BASE_MODEL, recall: 0.6, adjacent_rate: 0, miss_correlation: 1 };
    for (let i = 0; i < 20; i++) expect(flagged(model, 'juror-a', 1, goldOf(i))).toEqual(flagged(model, 'juror-b', 2, goldOf(i)));
  });

  it('joint misses grow with ρ: about (1 − r)² independent, 1 − r fully shared', () => {
    const independent = bothMiss(undefined);
    const half = bothMiss(0.5);
    const full = bothMiss(1);
    // 4,000 step pairs: a standard error near 0.008 on the independent share of 0.16.
    expect(Math.abs(independent - 0.16)).toBeLessThan(0.04);
    expect(Math.abs(full - 0.4)).toBeLessThan(0.04);
    // ρ = 0.5: both copy with 0.25, one with 0.5: 0.25·0.4 + 0.75·0.16 = 0.22.
    expect(Math.abs(half - 0.22)).toBeLessThan(0.04);
    expect(independent < half && half < full).toBe(true);
  });
});
