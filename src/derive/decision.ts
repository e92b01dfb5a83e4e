import type { FilterPolicy, FilterRule } from '../../schemas/config.js';
import { IMPACT_RANK } from '../../schemas/defect.js';
import type { DecisionRow, StepRow } from '../../schemas/outputs.js';
import type { Verdict } from '../../schemas/verdict.js';

interface Facts {
  verdict: Verdict;
  fatalStepRate: number;
  flaggedStepRate: number;
}

/** Does the rule's single condition hold? Returns the reason text when it does. */
function matches(rule: FilterRule, f: Facts): string | null {
  const v = f.verdict;
  if (rule.error) return v.error !== null ? 'no verdict could be formed' : null;
  if (rule.degraded) return v.degraded ? `degraded: ${v.degraded_reason ?? 'unknown'}` : null;
  if (rule.min_impact) {
    const hit = v.defects.find((d) => IMPACT_RANK[d.impact] >= IMPACT_RANK[rule.min_impact!]);
    return hit ? `a ${hit.impact} defect at STEP-${hit.statement_refs.join(',')}` : null;
  }
  if (rule.fatal_step_rate_above !== undefined) return f.fatalStepRate > rule.fatal_step_rate_above ? `fatal step rate ${f.fatalStepRate.toFixed(3)} > ${rule.fatal_step_rate_above}` : null;
  if (rule.flagged_step_rate_above !== undefined) return f.flaggedStepRate > rule.flagged_step_rate_above ? `flagged step rate ${f.flaggedStepRate.toFixed(3)} > ${rule.flagged_step_rate_above}` : null;
  if (rule.confidence_below !== undefined) return v.confidence < rule.confidence_below ? `jury agreement ${v.confidence.toFixed(3)} < ${rule.confidence_below}` : null;
  if (rule.has_dissent) return v.dissenting_views.length > 0 ? `${v.dissenting_views.length} dissenting finding(s)` : null;
  return null;
}

/** keep | drop | review for one record: the first matching rule decides, else the default. */
export function decide(verdict: Verdict, steps: readonly StepRow[], policy: FilterPolicy): DecisionRow {
  const n = Math.max(1, steps.length);
  const fatalStepRate = steps.filter((s) => s.max_impact === 'fatal').length / n;
  const flaggedStepRate = steps.filter((s) => s.label).length / n;
  const counts = { neutral: 0, minor: 0, major: 0, fatal: 0 };
  for (const d of verdict.defects) counts[d.impact]++;
  let decision = policy.default;
  let reason = 'no rule matched';
  for (const [i, rule] of policy.rules.entries()) {
    const why = matches(rule, { verdict, fatalStepRate, flaggedStepRate });
    if (why !== null) {
      decision = rule.decision;
      reason = `${rule.name ?? `rule ${i + 1}`}: ${why}`;
      break;
    }
  }
  return {
    record_id: verdict.record_id,
    decision,
    reason,
    n_neutral: counts.neutral,
    n_minor: counts.minor,
    n_major: counts.major,
    n_fatal: counts.fatal,
    fatal_step_rate: steps.length ? fatalStepRate : 0,
    flagged_step_rate: steps.length ? flaggedStepRate : 0,
  };
}
