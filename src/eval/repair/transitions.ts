/**
 * Table 13 of the paper: what a retry did to the records it re-solved, per gate and condition.
 * Only retried records with a reference answer and a retry that ran count; the rates carry
 * Wilson score intervals (../metrics/binomial.ts).
 */
import type { RepairCondition } from '../../../schemas/repair.js';
import { type RateInterval, wilson } from '../metrics/binomial.js';
import { cells, type RepairOutcome } from './outcomes.js';

export interface Transitions {
  gate: string;
  condition: RepairCondition;
  /** records retried under this gate and condition */
  retried: number;
  /** of those: retry failed for good / no reference answer (both left out below) */
  failed: number;
  no_reference: number;
  /** retried records with a reference and a retry that ran */
  scored: number;
  /** wrong → right */
  fixed: number;
  /** right → wrong */
  regressed: number;
  right_right: number;
  wrong_wrong: number;
  /** fixed − regressed */
  net: number;
  /** fixed / originally wrong */
  fix_rate: RateInterval;
  /** regressed / originally right */
  regression_rate: RateInterval;
  /** accuracy of the scored records before and after the retry */
  accuracy_before: RateInterval;
  accuracy_after: RateInterval;
}

export function transitionsOf(outcomes: readonly RepairOutcome[], gate: string, condition: RepairCondition, level = 0.95): Transitions {
  const mine = outcomes.filter((o) => o.gate === gate && o.condition === condition);
  let failed = 0, noRef = 0, fixed = 0, regressed = 0, rr = 0, ww = 0;
  for (const o of mine) {
    if (o.failed) failed++;
    else if (o.before === null || o.after === null) noRef++;
    else if (o.before) o.after ? rr++ : regressed++;
    else o.after ? fixed++ : ww++;
  }
  const scored = fixed + regressed + rr + ww;
  return {
    gate,
    condition,
    retried: mine.length,
    failed,
    no_reference: noRef,
    scored,
    fixed,
    regressed,
    right_right: rr,
    wrong_wrong: ww,
    net: fixed - regressed,
    fix_rate: wilson(fixed, fixed + ww, level),
    regression_rate: wilson(regressed, regressed + rr, level),
    accuracy_before: wilson(regressed + rr, scored, level),
    accuracy_after: wilson(fixed + rr, scored, level),
  };
}

/** One row per gate and condition found in the outcomes. */
export function transitionTable(outcomes: readonly RepairOutcome[], level = 0.95): Transitions[] {
  return cells(outcomes).map((c) => transitionsOf(outcomes, c.gate, c.condition, level));
}
