import { createRng } from '../../util/prng.js';

/**
 * A metric family computed from per-record contributions. `compute(null)` is the point
 * estimate; `compute(w)` weighs record i by w[i] (its multiplicity in a bootstrap resample), so
 * the same arithmetic gives the estimate and every resample.
 */
export interface Aggregator<K extends string> {
  readonly n: number;
  readonly keys: readonly K[];
  compute(weights: Uint32Array | null): Record<K, number>;
}

export interface Interval {
  lo: number;
  hi: number;
}

export interface BootstrapOptions {
  resamples?: number;
  seed?: number | string;
  /** coverage, 0.95 by default */
  level?: number;
}

/** Linear-interpolation percentile of sorted finite values (NaN when there are none). */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  const pos = (n - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(n - 1, lo + 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/**
 * Percentile bootstrap over records (the paper: 10,000 record-level resamples, 95 %). Records
 * are drawn with replacement, so the steps of one record move together. Every aggregator sees
 * the same resamples (they must share one record index space), which makes intervals of systems
 * scored on the same records paired and costs one draw per resample. Seeded: the same inputs and
 * seed give the same intervals. Resamples where a metric is undefined (NaN) are left out of its
 * percentiles.
 */
export function bootstrapMany(aggs: ReadonlyArray<Aggregator<string>>, opts: BootstrapOptions = {}): Array<Record<string, Interval>> {
  const B = opts.resamples ?? 10_000;
  const level = opts.level ?? 0.95;
  const n = aggs[0]?.n ?? 0;
  if (aggs.some((a) => a.n !== n)) throw new Error('bootstrap: aggregators must cover the same records');
  const rng = createRng(['eval-bootstrap', opts.seed ?? 0, n]);
  const values = aggs.map((a) => Object.fromEntries(a.keys.map((k) => [k, new Float64Array(B)])) as Record<string, Float64Array>);
  const w = new Uint32Array(n);
  for (let b = 0; b < B && n > 0; b++) {
    w.fill(0);
    for (let i = 0; i < n; i++) w[Math.floor(rng.next() * n)]! += 1;
    aggs.forEach((a, j) => {
      const r = a.compute(w);
      for (const k of a.keys) values[j]![k]![b] = r[k]!;
    });
  }
  return aggs.map((a, j) => {
    const out: Record<string, Interval> = {};
    for (const k of a.keys) {
      const finite = Float64Array.from(values[j]![k]!.filter((x) => Number.isFinite(x))).sort();
      out[k] = { lo: percentile(finite, (1 - level) / 2), hi: percentile(finite, 1 - (1 - level) / 2) };
    }
    return out;
  });
}

export function bootstrap<K extends string>(agg: Aggregator<K>, opts: BootstrapOptions = {}): Record<K, Interval> {
  return bootstrapMany([agg as Aggregator<string>], opts)[0] as Record<K, Interval>;
}

/** Weighted sum of a per-record column: w null = every record once. */
export function wsum(col: ArrayLike<number>, w: Uint32Array | null): number {
  let s = 0;
  if (w === null) for (let i = 0; i < col.length; i++) s += col[i]!;
  else for (let i = 0; i < col.length; i++) s += col[i]! * w[i]!;
  return s;
}

/** The difference of one metric between two aggregators over the same records, with its paired interval. */
export interface PairedDifference {
  /** indices into the aggregators given */
  a: number;
  b: number;
  /** a − b on the full data; NaN where either is undefined */
  diff: number;
  lo: number;
  hi: number;
}

/**
 * Row-level paired bootstrap of `key`'s difference between aggregators: each resample draws the
 * records once and scores every aggregator on that same draw, so the interval of a − b reflects
 * that both systems judged the same records. It draws exactly the resamples bootstrapMany draws
 * for the same seed and record count, so it agrees with the intervals printed next to it.
 */
export function pairedBootstrapDifferences(aggs: ReadonlyArray<Aggregator<string>>, key: string, pairs: ReadonlyArray<readonly [number, number]>, opts: BootstrapOptions = {}): PairedDifference[] {
  const B = opts.resamples ?? 10_000;
  const level = opts.level ?? 0.95;
  const n = aggs[0]?.n ?? 0;
  if (aggs.some((a) => a.n !== n)) throw new Error('paired bootstrap: aggregators must cover the same records');
  const rng = createRng(['eval-bootstrap', opts.seed ?? 0, n]);
  const values = aggs.map(() => new Float64Array(B));
  const w = new Uint32Array(n);
  for (let b = 0; b < B && n > 0; b++) {
    w.fill(0);
    for (let i = 0; i < n; i++) w[Math.floor(rng.next() * n)]! += 1;
    aggs.forEach((a, j) => (values[j]![b] = a.compute(w)[key]!));
  }
  const point = aggs.map((a) => a.compute(null)[key]!);
  return pairs.map(([a, b]) => {
    const d = Float64Array.from(values[a]!, (x, i) => x - values[b]![i]!)
      .filter((x) => Number.isFinite(x))
      .sort();
    return { a, b, diff: point[a]! - point[b]!, lo: percentile(d, (1 - level) / 2), hi: percentile(d, 1 - (1 - level) / 2) };
  });
}
