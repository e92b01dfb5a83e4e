import type { CascadeConfig, CascadeRule } from '../../schemas/config.js';
import type { Judgement } from '../../schemas/verdict.js';
import { agreement, mergedUnion } from './aggregate.js';

/**
 * The escalation rules of a cascade Phase 1, each a question about the judgements gathered so
 * far. Only successful judgements are compared; `failed` fires while fewer seats succeeded than
 * `start` asked for (a seat failed, or an external seat abstained on the record).
 */

/** Per successful seat, the steps it flagged (any severity) and the severity it gave each. */
function stepViews(ok: readonly Judgement[]): Array<Map<number, string>> {
  return ok.map((j) => {
    const m = new Map<number, string>();
    for (const d of j.defects) for (const s of d.statement_refs) m.set(s, d.impact);
    return m;
  });
}

/** A step one seat flags and another passes. */
function disagreeStep(ok: readonly Judgement[]): boolean {
  const views = stepViews(ok);
  const all = new Set(views.flatMap((v) => [...v.keys()]));
  return [...all].some((s) => views.some((v) => !v.has(s)));
}

/** A step two seats flag with different severities. */
function disagreeSeverity(ok: readonly Judgement[]): boolean {
  const views = stepViews(ok);
  const seen = new Map<number, string>();
  for (const v of views) {
    for (const [s, impact] of v) {
      const other = seen.get(s);
      if (other !== undefined && other !== impact) return true;
      seen.set(s, impact);
    }
  }
  return false;
}

/** A finding (defects citing the same steps) that fewer than all successful seats back. */
function contested(ok: readonly Judgement[]): boolean {
  return mergedUnion(ok).some((d) => (d.vote_count ?? 0) < ok.length);
}

type Check = (ok: readonly Judgement[], cfg: CascadeConfig) => boolean;

const CHECKS: Record<CascadeRule, Check> = {
  disagree_step: (ok) => disagreeStep(ok),
  disagree_severity: (ok) => disagreeSeverity(ok),
  fatal: (ok) => ok.some((j) => j.defects.some((d) => d.impact === 'fatal')),
  contested: (ok) => contested(ok),
  low_confidence: (ok, cfg) => ok.length > 0 && agreement(mergedUnion(ok), ok) < cfg.low_confidence_below,
  empty: (ok) => ok.length > 0 && ok.every((j) => j.defects.length === 0),
  any_finding: (ok) => ok.some((j) => j.defects.length > 0),
  // Fewer successful judgements than the start size asked for: seat a replacement.
  failed: (ok, cfg) => ok.length < cfg.start,
};

/** The configured rules that fire on `judgements` (every seat sat so far, successful or not), in the configured order. */
export function firedRules(judgements: readonly Judgement[], cfg: CascadeConfig): CascadeRule[] {
  const ok = judgements.filter((j) => j.ok);
  return cfg.rules.filter((r) => CHECKS[r](ok, cfg));
}
