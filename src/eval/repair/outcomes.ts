/**
 * From `repairs` rows to one outcome per (gate, condition, record): what the record's answer was
 * before the retry and after it. Pure; every table of `eval repair` starts here.
 *
 * Attempts (`attempt`, 1-based): `first` (default) takes the lowest attempt number present for
 * the record and condition, as the paper's single retry per condition; `any` counts the retry as
 * right when any attempt that produced text is right (pass@k over attempts).
 *
 * A retry whose call failed for good (`error` set or no `retry_text`) is not an outcome: it is
 * counted as `failed`, left out of the transitions, and the record keeps its original answer in
 * the corpus accuracy. Under `any` a record fails only when all its attempts failed. A retry that
 * ran but gave no answer is an outcome: wrong when the record has a reference (the paper scores
 * unparseable retries as incorrect).
 */
import { REPAIR_CONDITIONS, type RepairCondition, type RepairRow } from '../../../schemas/repair.js';

export const ATTEMPT_POLICIES = ['first', 'any'] as const;
export type AttemptPolicy = (typeof ATTEMPT_POLICIES)[number];

export interface RepairOutcome {
  record_id: string;
  problem_id: string;
  gate: string;
  condition: RepairCondition;
  /** original answer right / wrong; null when the record has no reference answer */
  before: boolean | null;
  /** retry right / wrong; null without a reference or when the retry failed */
  after: boolean | null;
  failed: boolean;
  /** attempts read for this record and condition (after removing duplicates) */
  attempts: number;
}

export interface Outcomes {
  outcomes: RepairOutcome[];
  /** rows whose (gate, condition, record, attempt) was already read: the first one read is kept */
  duplicates: number;
}

const hasReference = (r: RepairRow): boolean => r.reference_answer !== null || r.original_correct !== null || r.correct !== null;
const isFailed = (r: RepairRow): boolean => r.error !== null || r.retry_text === null;

function outcomeOf(rows: readonly RepairRow[], policy: AttemptPolicy): RepairOutcome {
  const sorted = [...rows].sort((x, y) => x.attempt - y.attempt);
  const head = sorted[0]!;
  const ref = sorted.some(hasReference);
  const before = ref ? sorted.find((r) => r.original_correct !== null)?.original_correct ?? false : null;
  const ran = (policy === 'first' ? [head] : sorted).filter((r) => !isFailed(r));
  const failed = ran.length === 0;
  const after = failed || !ref ? null : ran.some((r) => r.correct === true);
  return { record_id: head.record_id, problem_id: head.problem_id, gate: head.gate, condition: head.condition, before, after, failed, attempts: sorted.length };
}

/** Groups rows by (gate, condition, record), drops repeated attempts, and applies the attempt policy. */
export function repairOutcomes(rows: readonly RepairRow[], policy: AttemptPolicy = 'first'): Outcomes {
  const groups = new Map<string, Map<number, RepairRow>>();
  let duplicates = 0;
  for (const r of rows) {
    const key = JSON.stringify([r.gate, r.condition, r.record_id]);
    let byAttempt = groups.get(key);
    if (!byAttempt) groups.set(key, (byAttempt = new Map()));
    if (byAttempt.has(r.attempt)) duplicates++;
    else byAttempt.set(r.attempt, r);
  }
  return { outcomes: [...groups.values()].map((g) => outcomeOf([...g.values()], policy)), duplicates };
}

/** Gates and conditions in a stable order: gates as named, conditions as schemas/repair.ts lists them. */
export function cells(outcomes: readonly RepairOutcome[]): Array<{ gate: string; condition: RepairCondition }> {
  const seen = new Map<string, { gate: string; condition: RepairCondition }>();
  for (const o of outcomes) seen.set(JSON.stringify([o.gate, o.condition]), { gate: o.gate, condition: o.condition });
  const order = (c: RepairCondition): number => REPAIR_CONDITIONS.indexOf(c);
  return [...seen.values()].sort((x, y) => (x.gate < y.gate ? -1 : x.gate > y.gate ? 1 : order(x.condition) - order(y.condition)));
}
