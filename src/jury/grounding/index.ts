import type { GroundingConfig } from '../../../schemas/config.js';
import type { Defect } from '../../../schemas/defect.js';
import type { GroundingCheck, GroundingOutcome, Judgement } from '../../../schemas/verdict.js';
import { groundDefect, stepTokens } from './locate.js';
import type { MatchOptions } from './match.js';
import { checkVoters } from './voters.js';

export { normalise, tokens } from './normalize.js';
export { matchQuote, approximateEdits, type MatchOptions } from './match.js';
export { quotedSpans, quotesOf, type Quote } from './quotes.js';
export { groundDefect, locateQuote, stepTokens, type StepTokens } from './locate.js';
export { backers, checkVoters } from './voters.js';

/** The grounding section of a config when it does anything; null when absent or `policy: off`. */
export function groundingOn(config: { grounding?: GroundingConfig | undefined }): GroundingConfig | null {
  return config.grounding && config.grounding.policy !== 'off' ? config.grounding : null;
}

export function matchOptions(g: Pick<GroundingConfig, 'max_edit_ratio' | 'min_fuzzy_tokens'>): MatchOptions {
  return { maxEditRatio: g.max_edit_ratio, minFuzzyTokens: g.min_fuzzy_tokens };
}

export interface GroundingResult {
  defects: Defect[];
  outcome: GroundingOutcome;
  /** set under `flag` when some defect is ungrounded: the verdict is marked degraded with it */
  flag: string | null;
}

/**
 * Deterministic grounding of the consensus (no model call): each defect's quotes are looked up
 * in the trace (./locate.ts); a relocated defect gets corrected refs, an ungrounded one is kept,
 * flagged or dropped by the policy; then the kept defects' voters are checked (./voters.ts).
 */
export function groundConsensus(g: GroundingConfig, consensus: readonly Defect[], steps: readonly string[], judgements: readonly Judgement[]): GroundingResult {
  const tokenised = stepTokens(steps);
  const opts = matchOptions(g);
  const checks: GroundingCheck[] = [];
  const kept: Defect[] = [];
  const indices: number[] = [];
  consensus.forEach((d, i) => {
    const r = groundDefect(d, tokenised, opts);
    const ungrounded = r.status === 'ungrounded';
    const outcome = !ungrounded || g.policy === 'keep' ? 'kept' : g.policy === 'flag' ? 'flagged' : 'dropped';
    checks.push({ defect_index: i, cited_refs: d.statement_refs.join(','), evidence: d.evidence, status: r.status, outcome, quotes: r.quotes, quotes_found: r.hits.length, best_match: r.match, corrected_refs: r.refs ? r.refs.join(',') : null, impact: d.impact });
    if (outcome === 'dropped') return;
    kept.push(r.refs ? { ...d, statement_refs: r.refs } : d);
    indices.push(i);
  });
  const voted = g.check_voters ? checkVoters(kept, indices, judgements, { steps: tokenised, opts }) : { defects: kept, corrections: [] };
  const flagged = checks.filter((c) => c.outcome === 'flagged').length;
  return {
    defects: voted.defects,
    outcome: { policy: g.policy, checks, voter_corrections: voted.corrections },
    flag: flagged > 0 ? `grounding: ${flagged} of ${consensus.length} defects have no evidence quote found in the trace` : null,
  };
}
