import type { Impact } from '../../schemas/defect.js';
import type { RepairCondition, RepairRow } from '../../schemas/repair.js';

/**
 * A repairs row with the given outcome. `before`/`after`: true right, false wrong, null no
 * reference; `after: 'failed'` is a retry whose call failed for good.
 */
export function repairRow(record_id: string, problem_id: string, condition: RepairCondition, before: boolean | null, after: boolean | null | 'failed', extra: Partial<RepairRow> = {}): RepairRow {
  const failed = after === 'failed';
  const ref = before !== null;
  return {
    record_id,
    problem_id,
    condition,
    attempt: 1,
    gate: 'any_defect',
    prompt_hash: `hash-${condition}`,
    model: 'gen-model',
    retry_text: failed ? null : `retry of ${record_id}\nANSWER: ${after === true ? 42 : 7}`,
    finish_reason: failed ? null : 'stop',
    extracted_answer: failed ? null : after === true ? '42' : '7',
    answer_source: failed ? 'none' : 'marker',
    reference_answer: ref ? '42' : null,
    original_answer: ref ? (before ? '42' : '7') : '7',
    original_correct: before,
    correct: failed || !ref ? null : after,
    rejudged: false,
    new_n_defects: null,
    new_max_impact: null,
    new_decision: null,
    tokens_in: 100,
    tokens_out: 50,
    cost_usd: 0.001,
    error: failed ? 'generator failed for good: HTTP 400' : null,
    ...extra,
  };
}

/**
 * The hand-checked corpus of test/eval/repair-analysis.test.ts (and the CLI test): gate
 * any_defect, five problems. Expected numbers are worked out in the comments there.
 */
export function handRows(): RepairRow[] {
  return [
    repairRow('r1', 'p1', 'steps', false, true),
    repairRow('r1', 'p1', 'full', false, true),
    repairRow('r1', 'p1', 'full', false, false, { prompt_hash: 'a duplicate of r1 full attempt 1, read second' }),
    repairRow('r2', 'p1', 'steps', false, false),
    repairRow('r2', 'p1', 'steps', false, true, { attempt: 2 }),
    repairRow('r2', 'p1', 'full', false, true),
    repairRow('r3', 'p2', 'steps', true, false),
    repairRow('r3', 'p2', 'full', true, true),
    repairRow('r4', 'p2', 'steps', true, true),
    repairRow('r4', 'p2', 'full', true, true),
    repairRow('r5', 'p3', 'steps', false, false),
    repairRow('r5', 'p3', 'full', false, false),
    repairRow('r6', 'p3', 'steps', true, 'failed'),
    repairRow('r6', 'p3', 'full', true, false),
    repairRow('r7', 'p4', 'steps', null, null),
    repairRow('r7', 'p4', 'full', null, null),
  ];
}

/** The corpus around handRows: r8-r10 never retried, r11 without a reference, r5 conflicting. */
export const HAND_ORIGINALS = [
  ...['r1', 'r2', 'r3', 'r4', 'r6', 'r7'].map((id) => ({ record_id: id, correct: null as boolean | null })),
  { record_id: 'r5', problem_id: 'p3', correct: true },
  { record_id: 'r8', problem_id: 'p4', correct: true },
  { record_id: 'r9', problem_id: 'p5', correct: false },
  { record_id: 'r10', problem_id: 'p5', correct: true },
  { record_id: 'r11', problem_id: 'p5', correct: null },
];

/** Highest verdict severity of the hand records (r7 has no verdict). */
export const HAND_SEVERITY = new Map<string, Impact | null>([['r1', 'fatal'], ['r2', 'major'], ['r3', 'fatal'], ['r4', null], ['r5', 'minor'], ['r6', 'fatal']]);
