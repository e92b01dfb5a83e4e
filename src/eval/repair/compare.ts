/**
 * App. N.3's matched comparison of two feedback conditions under one gate: the records retried
 * under both, with a reference answer and a retry that ran under each. The exact McNemar test
 * and the problem-level paired bootstrap come from ../metrics/paired.ts (the same code compares
 * two ladder systems); the accuracy before the retry on the same records is given alongside.
 */
import type { RepairCondition } from '../../../schemas/repair.js';
import type { BootstrapOptions } from '../metrics/bootstrap.js';
import { type PairedBinary, type PairedItem, pairedBinary } from '../metrics/paired.js';
import type { RepairOutcome } from './outcomes.js';

export interface ConditionComparison extends PairedBinary {
  gate: string;
  a: RepairCondition;
  b: RepairCondition;
  /** accuracy of the original answers of the paired records */
  accuracy_before: number;
}

/** Paired items of one gate: record retried under a and b, both with an outcome. */
export function pairedItems(outcomes: readonly RepairOutcome[], gate: string, a: RepairCondition, b: RepairCondition): Array<PairedItem & { before: boolean }> {
  const under = (c: RepairCondition): Map<string, RepairOutcome> => new Map(outcomes.filter((o) => o.gate === gate && o.condition === c && o.after !== null && o.before !== null).map((o) => [o.record_id, o]));
  const ofA = under(a);
  const ofB = under(b);
  const items: Array<PairedItem & { before: boolean }> = [];
  for (const [id, oa] of ofA) {
    const ob = ofB.get(id);
    if (ob) items.push({ unit: oa.problem_id, a: oa.after!, b: ob.after!, before: oa.before! });
  }
  return items;
}

/** Every gate that has rows under both conditions; gates with only one of them are left out. */
export function compareConditions(outcomes: readonly RepairOutcome[], a: RepairCondition, b: RepairCondition, opts: BootstrapOptions = {}): ConditionComparison[] {
  const gates = [...new Set(outcomes.map((o) => o.gate))].sort();
  return gates.flatMap((gate) => {
    const items = pairedItems(outcomes, gate, a, b);
    if (items.length === 0) return [];
    return [{ gate, a, b, accuracy_before: items.filter((i) => i.before).length / items.length, ...pairedBinary(items, opts) }];
  });
}
