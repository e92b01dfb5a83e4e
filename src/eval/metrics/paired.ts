/**
 * Paired comparison of two systems scored on the same items, one binary outcome per item each
 * (a retry right or wrong under two feedback conditions; a record judged right or wrong by two
 * ladder systems). Items may be grouped into units (problems) that are resampled whole, because
 * items of one unit are not independent (App. N.3: 64 traces per problem).
 *
 * The interval comes from pairedBootstrapDifferences (./bootstrap.ts), the same function the
 * ladder's row-level Balanced F1 differences use (src/eval/paired-ladder.ts): one aggregator per
 * system over the units, both scored on every draw. With one item per unit it is the row-level
 * paired bootstrap.
 */
import { type Aggregator, type BootstrapOptions, pairedBootstrapDifferences } from './bootstrap.js';
import { type McNemar, mcnemarExact } from './binomial.js';

export interface PairedItem {
  /** the resampling unit (problem id); an item's own id for a row-level bootstrap */
  unit: string;
  a: boolean;
  b: boolean;
}

export interface Estimate {
  value: number;
  lo: number;
  hi: number;
}

export interface PairedBinary {
  items: number;
  units: number;
  accuracy_a: number;
  accuracy_b: number;
  mcnemar: McNemar;
  /** accuracy of a − accuracy of b over all items (each item weighs the same), units resampled */
  pooled_diff: Estimate;
  /** mean over units of (a − b accuracy within the unit): each unit weighs the same (the paper's problem-level +4.1 pp) */
  unit_mean_diff: Estimate;
  /** units where a's accuracy is higher / lower / equal */
  units_a_better: number;
  units_b_better: number;
  units_tied: number;
}

interface UnitCounts {
  n: Float64Array;
  k: Float64Array;
}

const KEYS = ['pooled', 'unit_mean'] as const;

/** Accuracy of one system over units: pooled (Σ w·k / Σ w·n) and unit mean (Σ w·k/n / Σ w). */
function accuracyAggregator(c: UnitCounts): Aggregator<(typeof KEYS)[number]> {
  return {
    n: c.n.length,
    keys: KEYS,
    compute(w) {
      let k = 0, n = 0, mean = 0, units = 0;
      for (let i = 0; i < c.n.length; i++) {
        const wi = w === null ? 1 : w[i]!;
        if (wi === 0) continue;
        k += wi * c.k[i]!;
        n += wi * c.n[i]!;
        mean += (wi * c.k[i]!) / c.n[i]!;
        units += wi;
      }
      return { pooled: n === 0 ? NaN : k / n, unit_mean: units === 0 ? NaN : mean / units };
    },
  };
}

function unitCounts(items: readonly PairedItem[]): { units: string[]; a: UnitCounts; b: UnitCounts } {
  // Units in sorted order, so the same items read in another order draw the same resamples.
  const index = new Map([...new Set(items.map((it) => it.unit))].sort().map((u, i) => [u, i] as const));
  const m = index.size;
  const a = { n: new Float64Array(m), k: new Float64Array(m) };
  const b = { n: new Float64Array(m), k: new Float64Array(m) };
  for (const it of items) {
    const i = index.get(it.unit)!;
    a.n[i]! += 1;
    b.n[i]! += 1;
    if (it.a) a.k[i]! += 1;
    if (it.b) b.k[i]! += 1;
  }
  return { units: [...index.keys()], a, b };
}

/**
 * Exact McNemar on the discordant items and a unit-level paired percentile bootstrap (seeded,
 * `resamples` draws of the units with replacement, every item of a drawn unit kept) of the
 * accuracy difference a − b, pooled and as a mean over units.
 */
export function pairedBinary(items: readonly PairedItem[], opts: BootstrapOptions = {}): PairedBinary {
  const { units, a, b } = unitCounts(items);
  const aggs = [accuracyAggregator(a), accuracyAggregator(b)] as Aggregator<string>[];
  const diff = (key: (typeof KEYS)[number]): Estimate => {
    const [d] = pairedBootstrapDifferences(aggs, key, [[0, 1]], opts);
    return { value: d!.diff, lo: d!.lo, hi: d!.hi };
  };
  let onlyA = 0, onlyB = 0, better = 0, worse = 0;
  for (const it of items) {
    if (it.a && !it.b) onlyA++;
    if (it.b && !it.a) onlyB++;
  }
  for (let i = 0; i < units.length; i++) {
    if (a.k[i]! > b.k[i]!) better++;
    else if (a.k[i]! < b.k[i]!) worse++;
  }
  const point = (c: UnitCounts): number => accuracyAggregator(c).compute(null).pooled;
  return {
    items: items.length,
    units: units.length,
    accuracy_a: point(a),
    accuracy_b: point(b),
    mcnemar: mcnemarExact(onlyA, onlyB),
    pooled_diff: diff('pooled'),
    unit_mean_diff: diff('unit_mean'),
    units_a_better: better,
    units_b_better: worse,
    units_tied: units.length - better - worse,
  };
}
