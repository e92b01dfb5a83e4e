import type { Defect } from '../../../schemas/defect.js';
import { type Match, matchQuote, type MatchOptions } from './match.js';
import { quotesOf } from './quotes.js';
import { tokens } from './normalize.js';

/** The trace's steps as token lists (index 0 = STEP-1), tokenised once per record. */
export type StepTokens = readonly (readonly string[])[];

export function stepTokens(steps: readonly string[]): StepTokens {
  return steps.map(tokens);
}

export interface QuoteHit {
  step: number;
  match: Match;
  /** the step is one the defect cites */
  cited: boolean;
}

const better = (a: Match, b: Match): boolean => a.edits < b.edits;

/**
 * Where one quote sits: a cited step first (the one the quote names, else any cited step), else
 * the other step with the fewest edits (the earliest on a tie); null when no step holds it.
 */
export function locateQuote(steps: StepTokens, quote: readonly string[], cited: readonly number[], opts: MatchOptions): QuoteHit | null {
  let best: QuoteHit | null = null;
  for (const s of cited) {
    const m = steps[s - 1] ? matchQuote(steps[s - 1]!, quote, opts) : null;
    if (m && (!best || better(m, best.match))) best = { step: s, match: m, cited: true };
  }
  if (best) return best;
  for (let s = 1; s <= steps.length; s++) {
    if (cited.includes(s)) continue;
    const m = matchQuote(steps[s - 1]!, quote, opts);
    if (m && (!best || better(m, best.match))) best = { step: s, match: m, cited: false };
  }
  return best;
}

export interface DefectGrounding {
  quotes: number;
  hits: QuoteHit[];
  status: 'grounded' | 'relocated' | 'ungrounded';
  /** the corrected statement_refs when relocated */
  refs: number[] | null;
  match: 'exact' | 'fuzzy' | 'none';
}

/**
 * One defect's grounding. Grounded: some quote sits in a cited step and none only elsewhere.
 * Relocated: some quote sits only in a step the defect does not cite; its refs become the steps
 * where its quotes were found (cited steps that hold a quote stay). Ungrounded: no quote found.
 */
export function groundDefect(d: Defect, steps: StepTokens, opts: MatchOptions): DefectGrounding {
  const quotes = quotesOf(d.evidence).map((q) => ({ ...q, tokens: tokens(q.text) })).filter((q) => q.tokens.length > 0);
  const hits: QuoteHit[] = [];
  for (const q of quotes) {
    const hit = locateQuote(steps, q.tokens, d.statement_refs, opts);
    if (hit) hits.push(hit);
  }
  const match = hits.length === 0 ? 'none' : hits.some((h) => h.match.kind === 'exact') ? 'exact' : 'fuzzy';
  if (hits.length === 0) return { quotes: quotes.length, hits, status: 'ungrounded', refs: null, match };
  if (hits.every((h) => h.cited)) return { quotes: quotes.length, hits, status: 'grounded', refs: null, match };
  const refs = [...new Set(hits.map((h) => h.step))].sort((a, b) => a - b);
  return { quotes: quotes.length, hits, status: 'relocated', refs, match };
}
