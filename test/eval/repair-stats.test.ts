import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mcnemarExact, wilson } from '../../src/eval/metrics/binomial.js';
import { type PairedItem, pairedBinary } from '../../src/eval/metrics/paired.js';
import { createRng } from '../../src/util/prng.js';
import { pyenvPython } from '../helpers/run-setup.js';

/**
 * The statistics of `eval repair` against independent computations in the test venv
 * (test/py/repair_stats.py): exact McNemar and mid-p from scipy.stats, Wilson intervals from
 * scipy's binomtest, and the problem-level paired bootstrap recomputed with numpy from the raw
 * items on the same resampling indices.
 */
const python = pyenvPython();
const SCRIPT = join(process.cwd(), 'test/py/repair_stats.py');

function independent(req: unknown): Record<string, unknown> {
  return JSON.parse(execFileSync(python!, [SCRIPT], { input: JSON.stringify(req), encoding: 'utf8', maxBuffer: 64 << 20 })) as Record<string, unknown>;
}

/** The unit draws bootstrapMany / pairedBootstrapDifferences make for `units` units and a seed (src/eval/metrics/bootstrap.ts). */
function drawnIndices(units: number, seed: number, resamples: number): number[][] {
  const rng = createRng(['eval-bootstrap', seed, units]);
  return Array.from({ length: resamples }, () => Array.from({ length: units }, () => Math.floor(rng.next() * units)));
}

/** Items over problems of unequal size, b's accuracy lower by a problem-dependent amount (seeded). */
function items(seed: string): PairedItem[] {
  const rng = createRng([seed]);
  const out: PairedItem[] = [];
  for (let p = 0; p < 29; p++) {
    const size = rng.int(3, 40);
    const base = rng.next();
    for (let i = 0; i < size; i++) out.push({ unit: `prob-${String(p).padStart(2, '0')}`, a: rng.chance(Math.min(1, base + 0.1)), b: rng.chance(base) });
  }
  return out;
}

describe.skipIf(!python)('repair statistics agree with scipy and numpy', () => {
  it('exact McNemar p and mid-p equal scipy.stats within 1e-12', () => {
    const cases: Array<[number, number]> = [[78, 34], [34, 78], [0, 0], [5, 5], [0, 7], [13, 2], [100, 130], [1, 0], [600, 540], [2, 0]];
    const want = independent({ mcnemar: cases }).mcnemar as Array<{ p: number; mid_p: number }>;
    cases.forEach(([a, b], i) => {
      const got = mcnemarExact(a, b);
      expect(Math.abs(got.p - want[i]!.p), `p ${a}/${b}`).toBeLessThanOrEqual(1e-12 * Math.max(1, want[i]!.p) + 1e-300);
      expect(Math.abs(got.mid_p - want[i]!.mid_p), `mid-p ${a}/${b}`).toBeLessThanOrEqual(1e-12 * Math.max(1, want[i]!.mid_p) + 1e-300);
    });
    // App. N.3: 78 vs 34 discordant traces give p = 4e-5.
    expect(mcnemarExact(78, 34).p.toExponential(0)).toBe('4e-5');
  });

  it('Wilson intervals equal scipy binomtest(..).proportion_ci(method="wilson") within 1e-8', () => {
    const cases: Array<[number, number, number]> = [[181, 372, 0.95], [18, 505, 0.95], [0, 10, 0.95], [10, 10, 0.95], [1, 3, 0.9], [668, 877, 0.99], [3, 2000, 0.995]];
    const want = independent({ wilson: cases }).wilson as Array<{ lo: number; hi: number }>;
    cases.forEach(([k, n, level], i) => {
      const got = wilson(k, n, level);
      expect(Math.abs(got.lo - want[i]!.lo), `lo ${k}/${n}`).toBeLessThanOrEqual(1e-8);
      expect(Math.abs(got.hi - want[i]!.hi), `hi ${k}/${n}`).toBeLessThanOrEqual(1e-8);
    });
  });

  it('the problem-level paired bootstrap equals numpy on the same resampling indices (1e-12)', () => {
    const its = items('repair-stats-items');
    const units = [...new Set(its.map((i) => i.unit))].sort();
    const B = 2000;
    const seed = 17;
    const got = pairedBinary(its, { resamples: B, seed, level: 0.95 });
    const want = independent({ bootstrap: { items: its, units, indices: drawnIndices(units.length, seed, B), level: 0.95 } }).bootstrap as Record<'pooled' | 'unit_mean', { value: number; lo: number; hi: number }>;
    for (const [mine, theirs] of [[got.pooled_diff, want.pooled], [got.unit_mean_diff, want.unit_mean]] as const) {
      expect(Math.abs(mine.value - theirs.value)).toBeLessThanOrEqual(1e-12);
      expect(Math.abs(mine.lo - theirs.lo)).toBeLessThanOrEqual(1e-12);
      expect(Math.abs(mine.hi - theirs.hi)).toBeLessThanOrEqual(1e-12);
    }
    expect(got.units).toBe(29);
    // Items listed in another order draw the same problems: the same interval.
    expect(pairedBinary([...its].reverse(), { resamples: B, seed, level: 0.95 }).pooled_diff).toEqual(got.pooled_diff);
  });
});
