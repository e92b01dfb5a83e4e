/**
 * Binomial tools for outcomes counted per record: Wilson score intervals for a rate and the
 * exact McNemar test on paired binary outcomes. Pure functions, checked against scipy
 * (test/eval/repair-stats.test.ts).
 */

export interface RateInterval {
  /** successes / trials; NaN when there are no trials */
  rate: number;
  lo: number;
  hi: number;
}

/** Inverse of the standard normal CDF (Acklam's rational approximation, relative error < 1.2e-9: Wilson bounds within ~1e-9 of scipy's). */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new Error(`normalQuantile: p must be in (0, 1) (got ${p})`);
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q: number): number => (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  let x: number;
  if (p < 0.02425) x = tail(Math.sqrt(-2 * Math.log(p)));
  else if (p > 1 - 0.02425) x = -tail(Math.sqrt(-2 * Math.log(1 - p)));
  else {
    const q = p - 0.5;
    const r = q * q;
    x = ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) / (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1);
  }
  return x;
}

/** Wilson score interval for k successes in n trials at the given two-sided coverage (NaN bounds when n = 0). */
export function wilson(k: number, n: number, level = 0.95): RateInterval {
  if (!Number.isInteger(k) || !Number.isInteger(n) || k < 0 || n < 0 || k > n) throw new Error(`wilson: need whole 0 ≤ k ≤ n (got k=${k}, n=${n})`);
  if (n === 0) return { rate: NaN, lo: NaN, hi: NaN };
  const z = normalQuantile(1 - (1 - level) / 2);
  const p = k / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { rate: p, lo: Math.max(0, centre - half), hi: Math.min(1, centre + half) };
}

/** log of n choose k (exact sums of logs: n stays in the thousands here). */
function logChoose(n: number, k: number): number {
  let s = 0;
  const m = Math.min(k, n - k);
  for (let i = 1; i <= m; i++) s += Math.log(n - m + i) - Math.log(i);
  return s;
}

/** P(X = k) for X ~ Binomial(n, 1/2). */
export function halfBinomialPmf(k: number, n: number): number {
  if (k < 0 || k > n) return 0;
  return Math.exp(logChoose(n, k) - n * Math.LN2);
}

/** P(X ≤ k) for X ~ Binomial(n, 1/2), summed from the smaller tail. */
export function halfBinomialCdf(k: number, n: number): number {
  if (k < 0) return 0;
  if (k >= n) return 1;
  if (k > n / 2) return 1 - halfBinomialCdf(n - k - 1, n);
  let s = 0;
  for (let i = 0; i <= k; i++) s += halfBinomialPmf(i, n);
  return s;
}

export interface McNemar {
  /** discordant pairs: only the first system right / only the second right */
  onlyA: number;
  onlyB: number;
  /** exact two-sided p: min(1, 2 · P(X ≤ min(onlyA, onlyB))), X ~ Binomial(onlyA + onlyB, 1/2); 1 without discordant pairs */
  p: number;
  /** mid-p: 2 · P(X < k) + P(X = k) with k = min(onlyA, onlyB), i.e. the exact p minus P(X = k) before capping (Fagerland et al. 2013): less conservative */
  mid_p: number;
}

/**
 * Exact McNemar test: under "no difference" each discordant pair is equally likely to go either
 * way, so the smaller discordant count is Binomial(onlyA + onlyB, 1/2). The two-sided exact p is
 * what scipy.stats.binomtest(onlyA, onlyA + onlyB, 0.5) gives (the distribution is symmetric).
 */
export function mcnemarExact(onlyA: number, onlyB: number): McNemar {
  const n = onlyA + onlyB;
  if (n === 0) return { onlyA, onlyB, p: 1, mid_p: 1 };
  const k = Math.min(onlyA, onlyB);
  const p = Math.min(1, 2 * halfBinomialCdf(k, n));
  const mid = 2 * halfBinomialCdf(k, n) - halfBinomialPmf(k, n);
  return { onlyA, onlyB, p, mid_p: Math.min(1, mid) };
}
