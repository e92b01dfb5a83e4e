import type { Defect } from '../../../schemas/defect.js';
import type { Judgement, VoterCorrection } from '../../../schemas/verdict.js';
import { groundDefect, type StepTokens } from './locate.js';
import { matchQuote, type MatchOptions } from './match.js';
import { quotesOf } from './quotes.js';
import { tokens } from './normalize.js';

/**
 * `voters` / `vote_count` of a consensus defect checked against Phase 1: a juror backs a defect
 * when one of its own findings cites a step the defect cites and describes it compatibly: one of
 * the finding's quotes occurs (normalised) in the defect's evidence or description, or at least
 * COMPATIBLE_OVERLAP of the content words (4+ letters) of the shorter description occur in the
 * other. With the trace given, a finding whose own quotes are nowhere in it backs nothing (an
 * invented finding merged into a real one does not count as a vote). The consensus lists are
 * replaced by the jurors that back the defect (the consensus's order, then added ones in seat
 * order); a list that differs only in order is no correction.
 */
export const COMPATIBLE_OVERLAP = 0.3;

const contentWords = (s: string): Set<string> => new Set(tokens(s).filter((t) => /^[a-z]{4,}$/.test(t)));

const EXACT: MatchOptions = { maxEditRatio: 0, minFuzzyTokens: Number.MAX_SAFE_INTEGER };

function compatible(finding: Defect, d: Defect): boolean {
  // Token runs, not strings: a quote cut mid-formula normalises differently alone than in context.
  const text = tokens(`${d.evidence} ${d.what_went_wrong}`);
  if (quotesOf(finding.evidence).some((q) => matchQuote(text, tokens(q.text), EXACT) !== null)) return true;
  const a = contentWords(finding.what_went_wrong);
  const b = contentWords(d.what_went_wrong);
  const small = a.size <= b.size ? a : b;
  const large = small === a ? b : a;
  if (small.size === 0) return false;
  let common = 0;
  for (const w of small) if (large.has(w)) common++;
  return common / small.size >= COMPATIBLE_OVERLAP;
}

export interface TraceCheck {
  steps: StepTokens;
  opts: MatchOptions;
}

/** The jurors whose Phase 1 findings back `d`, in seat order. */
export function backers(d: Defect, judgements: readonly Judgement[], trace?: TraceCheck): string[] {
  const refs = new Set(d.statement_refs);
  const real = (f: Defect) => !trace || groundDefect(f, trace.steps, trace.opts).status !== 'ungrounded';
  return judgements.filter((j) => j.ok && j.defects.some((f) => f.statement_refs.some((r) => refs.has(r)) && compatible(f, d) && real(f))).map((j) => j.juror_id);
}

/** Defects with corrected voters, and a record of each correction; defects without `voters` are left alone. */
export function checkVoters(defects: readonly Defect[], indices: readonly number[], judgements: readonly Judgement[], trace?: TraceCheck): { defects: Defect[]; corrections: VoterCorrection[] } {
  const corrections: VoterCorrection[] = [];
  const out = defects.map((d, k) => {
    if (d.voters === undefined) return d;
    const backing = backers(d, judgements, trace);
    // Order is not a vote: the consensus's own order is kept, added jurors follow in seat order.
    const after = [...d.voters.filter((v) => backing.includes(v)), ...backing.filter((v) => !d.voters!.includes(v))];
    const same = after.length === d.voters.length && d.vote_count === after.length;
    if (same) return d;
    corrections.push({ defect_index: indices[k]!, voters_before: d.voters.join(','), voters_after: after.join(','), vote_count_before: d.vote_count ?? null, vote_count_after: after.length });
    return { ...d, voters: after, vote_count: after.length };
  });
  return { defects: out, corrections };
}
