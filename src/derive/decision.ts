import type { FilterCondition, FilterPolicy, FilterRule } from '../../schemas/config.js';
import { IMPACT_RANK, type Impact } from '../../schemas/defect.js';
import type { DecisionRow, DefectRow, StepRow, VerdictRow } from '../../schemas/outputs.js';
import type { Verdict } from '../../schemas/verdict.js';

/** One consensus defect as the rules see it. */
export interface DefectFacts {
  impact: Impact;
  statement_refs: readonly number[];
  vote_count: number | null;
  category_id: string | null;
  leaf_id: string | null;
}

/**
 * Everything a filter rule may test. It is built from a verdict (the stream) or from committed
 * rows (`reasoning-jury decide`); both go through `decideFacts`, so a re-decision cannot drift
 * from what a run with the same policy decides.
 */
export interface DecisionFacts {
  record_id: string;
  error: boolean;
  degraded: boolean;
  degraded_reason: string | null;
  confidence: number;
  n_dissent: number;
  defects: readonly DefectFacts[];
  steps: readonly Pick<StepRow, 'max_impact' | 'label'>[];
}

interface Rates {
  fatalStepRate: number;
  flaggedStepRate: number;
}

function defectsMatch(f: DecisionFacts, c: FilterCondition): string | null {
  if (c.min_impact) {
    const hit = f.defects.find((d) => IMPACT_RANK[d.impact] >= IMPACT_RANK[c.min_impact!]);
    return hit ? `a ${hit.impact} defect at STEP-${hit.statement_refs.join(',')}` : null;
  }
  if (c.category) {
    const hit = f.defects.find((d) => d.category_id !== null && c.category!.includes(d.category_id));
    return hit ? `a defect of category ${hit.category_id} at STEP-${hit.statement_refs.join(',')}` : null;
  }
  if (c.leaf) {
    const hit = f.defects.find((d) => d.leaf_id !== null && c.leaf!.includes(d.leaf_id));
    return hit ? `a defect of leaf ${hit.leaf_id} at STEP-${hit.statement_refs.join(',')}` : null;
  }
  if (c.votes_below !== undefined) {
    const hit = f.defects.find((d) => d.vote_count !== null && d.vote_count < c.votes_below!);
    return hit ? `a defect with ${hit.vote_count} vote(s) < ${c.votes_below} at STEP-${hit.statement_refs.join(',')}` : null;
  }
  return null;
}

/** Does one condition hold? Returns the reason text when it does. */
function holds(c: FilterCondition, f: DecisionFacts, r: Rates): string | null {
  if (c.error) return f.error ? 'no verdict could be formed' : null;
  if (c.degraded) return f.degraded ? `degraded: ${f.degraded_reason ?? 'unknown'}` : null;
  if (c.fatal_step_rate_above !== undefined) return r.fatalStepRate > c.fatal_step_rate_above ? `fatal step rate ${r.fatalStepRate.toFixed(3)} > ${c.fatal_step_rate_above}` : null;
  if (c.flagged_step_rate_above !== undefined) return r.flaggedStepRate > c.flagged_step_rate_above ? `flagged step rate ${r.flaggedStepRate.toFixed(3)} > ${c.flagged_step_rate_above}` : null;
  if (c.confidence_below !== undefined) return f.confidence < c.confidence_below ? `jury agreement ${f.confidence.toFixed(3)} < ${c.confidence_below}` : null;
  if (c.has_dissent) return f.n_dissent > 0 ? `${f.n_dissent} dissenting finding(s)` : null;
  if (c.dissent_at_least !== undefined) return f.n_dissent >= c.dissent_at_least ? `${f.n_dissent} dissenting finding(s) >= ${c.dissent_at_least}` : null;
  return defectsMatch(f, c);
}

/** A rule holds when its one condition does, or (`all`) when every listed one does. */
function matches(rule: FilterRule, f: DecisionFacts, r: Rates): string | null {
  if (!rule.all) return holds(rule, f, r);
  const why: string[] = [];
  for (const c of rule.all) {
    const w = holds(c, f, r);
    if (w === null) return null;
    why.push(w);
  }
  return why.join(' and ');
}

/** keep | drop | review for one record: the first matching rule decides, else the default. */
export function decideFacts(f: DecisionFacts, policy: FilterPolicy): DecisionRow {
  const n = Math.max(1, f.steps.length);
  const fatalStepRate = f.steps.filter((s) => s.max_impact === 'fatal').length / n;
  const flaggedStepRate = f.steps.filter((s) => s.label).length / n;
  const counts = { neutral: 0, minor: 0, major: 0, fatal: 0 };
  for (const d of f.defects) counts[d.impact]++;
  let decision = policy.default;
  let reason = 'no rule matched';
  for (const [i, rule] of policy.rules.entries()) {
    const why = matches(rule, f, { fatalStepRate, flaggedStepRate });
    if (why !== null) {
      decision = rule.decision;
      reason = `${rule.name ?? `rule ${i + 1}`}: ${why}`;
      break;
    }
  }
  return {
    record_id: f.record_id,
    decision,
    reason,
    n_neutral: counts.neutral,
    n_minor: counts.minor,
    n_major: counts.major,
    n_fatal: counts.fatal,
    fatal_step_rate: f.steps.length ? fatalStepRate : 0,
    flagged_step_rate: f.steps.length ? flaggedStepRate : 0,
  };
}

/** The facts of committed rows: a verdict row, its defect rows (in defect order) and step rows. */
export function factsOfRows(verdict: Pick<VerdictRow, 'record_id' | 'error' | 'degraded' | 'degraded_reason' | 'confidence' | 'n_dissent'>, defects: readonly DefectRow[], steps: readonly Pick<StepRow, 'max_impact' | 'label'>[]): DecisionFacts {
  return {
    record_id: verdict.record_id,
    error: verdict.error !== null,
    degraded: verdict.degraded,
    degraded_reason: verdict.degraded_reason,
    confidence: verdict.confidence,
    n_dissent: verdict.n_dissent,
    defects,
    steps,
  };
}

/** Decision for a verdict before its rows exist (no taxonomy labels yet). */
export function decide(verdict: Verdict, steps: readonly StepRow[], policy: FilterPolicy): DecisionRow {
  const defects = verdict.defects.map((d) => ({ impact: d.impact, statement_refs: d.statement_refs, vote_count: d.vote_count ?? null, category_id: null, leaf_id: null }));
  return decideFacts({ record_id: verdict.record_id, error: verdict.error !== null, degraded: verdict.degraded, degraded_reason: verdict.degraded_reason, confidence: verdict.confidence, n_dissent: verdict.dissenting_views.length, defects, steps }, policy);
}
