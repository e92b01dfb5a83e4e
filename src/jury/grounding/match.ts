/**
 * Where a quote sits in a step, as token sequences (./normalize.ts). Exact: the quote's tokens
 * are a contiguous run of the step's. Fuzzy: the step has a run within `maxEdits` token edits
 * (insertions, deletions, substitutions) of the quote, found with Sellers' approximate
 * substring algorithm; `maxEdits` is `floor(maxEditRatio * quote tokens)` and fuzzy matching is
 * tried only for quotes of at least `minFuzzyTokens` tokens (a short quote must match exactly:
 * one edit in three tokens is another statement).
 */

export interface MatchOptions {
  maxEditRatio: number;
  minFuzzyTokens: number;
}

export type Match = { kind: 'exact'; edits: 0 } | { kind: 'fuzzy'; edits: number };

function containsRun(hay: readonly string[], needle: readonly string[]): boolean {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let k = 0; k < needle.length; k++) if (hay[i + k] !== needle[k]) continue outer;
    return true;
  }
  return false;
}

/** Fewest token edits that turn `needle` into some contiguous run of `hay` (Sellers, O(n*m)). */
export function approximateEdits(hay: readonly string[], needle: readonly string[]): number {
  const m = needle.length;
  // col[i]: edits for needle[0..i) ending at the current hay position; a run may start anywhere.
  let col = Array.from({ length: m + 1 }, (_, i) => i);
  let best = col[m]!;
  for (const h of hay) {
    const next = [0];
    for (let i = 1; i <= m; i++) next.push(Math.min(col[i - 1]! + (needle[i - 1] === h ? 0 : 1), col[i]! + 1, next[i - 1]! + 1));
    col = next;
    if (col[m]! < best) best = col[m]!;
  }
  return best;
}

/** How `quote` matches `step` (both token lists), or null when it does not. */
export function matchQuote(step: readonly string[], quote: readonly string[], opts: MatchOptions): Match | null {
  if (quote.length === 0) return null;
  if (containsRun(step, quote)) return { kind: 'exact', edits: 0 };
  if (quote.length < opts.minFuzzyTokens) return null;
  const allowed = Math.floor(opts.maxEditRatio * quote.length);
  if (allowed === 0) return null;
  const edits = approximateEdits(step, quote);
  return edits <= allowed ? { kind: 'fuzzy', edits } : null;
}
