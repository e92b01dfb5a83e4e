import type { Defect } from '../../../schemas/defect.js';
import type { Judgement } from '../../../schemas/verdict.js';
import { mergedUnion } from '../aggregate.js';

export type ContestSource = 'split_vote' | 'dissent';

/** What the arbiter is asked about: findings, why each is contested, and where it came from. */
export interface Contested {
  defects: Defect[];
  sources: ContestSource[];
  /** for split votes: the finding's index in the consensus; -1 for dissent */
  consensusIndex: number[];
  contest: string[];
}

/**
 * Contested findings of one verdict: consensus defects backed by fewer jurors than succeeded
 * (split votes, the consolidator's own additions with none), then dissenting Phase 1 findings
 * (no step of theirs reached the verdict; same-step findings merged). Capped at `max`.
 */
export function contestedFindings(consensus: readonly Defect[], judgements: readonly Judgement[], opts: { dissent: boolean; max: number }): Contested {
  const ok = judgements.filter((j) => j.ok).length;
  const out: Contested = { defects: [], sources: [], consensusIndex: [], contest: [] };
  const add = (d: Defect, source: ContestSource, index: number, why: string): void => {
    if (out.defects.length >= opts.max) return;
    out.defects.push(d);
    out.sources.push(source);
    out.consensusIndex.push(index);
    out.contest.push(why);
  };
  consensus.forEach((d, i) => {
    if (d.vote_count === undefined || d.vote_count >= ok) return;
    const who = d.voters?.length ? ` (${d.voters.join(', ')})` : '';
    add(d, 'split_vote', i, `in the verdict, backed by ${d.vote_count} of ${ok} auditors${who}`);
  });
  if (!opts.dissent) return out;
  const covered = new Set(consensus.flatMap((d) => d.statement_refs));
  for (const d of mergedUnion(judgements)) {
    if (d.statement_refs.some((s) => covered.has(s))) continue;
    add(d, 'dissent', -1, `left out of the verdict, raised by ${d.vote_count} of ${ok} auditors (${(d.voters ?? []).join(', ')})`);
  }
  return out;
}
