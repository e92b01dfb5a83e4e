import type { Defect } from '../../../schemas/defect.js';
import type { Judgement, VoterCorrection } from '../../../schemas/verdict.js';
import { quotesOf } from './quotes.js';
import { normalise, tokens } from './normalize.js';

/**
 * `voters` / `vote_count` of a consensus defect checked against Phase 1: a juror backs a defect
 * when one of its own findings cites a step the defect cites and describes it compatibly: one of
 * the finding's quotes occurs (normalised) in the defect's evidence or description, or at least
 * COMPATIBLE_OVERLAP of the content words (4+ letters) of the shorter description occur in the
 * other. The consensus lists are replaced by the jurors that back the defect, in seat order.
 */
export const COMPATIBLE_OVERLAP = 0.3;

const contentWords = (s: string): Set<string> => new Set(tokens(s).filter((t) => /^[a-z]{4,}$/.test(t)));

function compatible(finding: Defect, d: Defect): boolean {
  const text = ` ${normalise(`${d.evidence} ${d.what_went_wrong}`)} `;
  if (quotesOf(finding.evidence).some((q) => normalise(q.text).length > 0 && text.includes(normalise(q.text)))) return true;
  const a = contentWords(finding.what_went_wrong);
  const b = contentWords(d.what_went_wrong);
  const small = a.size <= b.size ? a : b;
  const large = small === a ? b : a;
  if (small.size === 0) return false;
  let common = 0;
  for (const w of small) if (large.has(w)) common++;
  return common / small.size >= COMPATIBLE_OVERLAP;
}

/** The jurors whose Phase 1 findings back `d`, in seat order. */
export function backers(d: Defect, judgements: readonly Judgement[]): string[] {
  const refs = new Set(d.statement_refs);
  return judgements.filter((j) => j.ok && j.defects.some((f) => f.statement_refs.some((r) => refs.has(r)) && compatible(f, d))).map((j) => j.juror_id);
}

/** Defects with corrected voters, and a record of each correction; defects without `voters` are left alone. */
export function checkVoters(defects: readonly Defect[], indices: readonly number[], judgements: readonly Judgement[]): { defects: Defect[]; corrections: VoterCorrection[] } {
  const corrections: VoterCorrection[] = [];
  const out = defects.map((d, k) => {
    if (d.voters === undefined) return d;
    const after = backers(d, judgements);
    const same = after.length === d.voters.length && after.every((v, i) => v === d.voters![i]) && d.vote_count === after.length;
    if (same) return d;
    corrections.push({ defect_index: indices[k]!, voters_before: d.voters.join(','), voters_after: after.join(','), vote_count_before: d.vote_count ?? null, vote_count_after: after.length });
    return { ...d, voters: after, vote_count: after.length };
  });
  return { defects: out, corrections };
}
