import { z } from 'zod';
import { Impact } from './defect.js';
import { dictString, FilterDecision, int32, int64 } from './columns.js';

/**
 * Defect-guided repair (paper §6, App. N): one contract shared by the repair step, the
 * `reasoning-jury repair` commands and `eval repair`. A retry re-solves a flagged record with the
 * jury's findings in the prompt; `condition` says how much of them it saw.
 */

/** `steps`: only the cited step numbers (App. N.2 "anchors"); `full`: each finding in words. */
export const REPAIR_CONDITIONS = ['steps', 'full'] as const;
export const RepairCondition = z.enum(REPAIR_CONDITIONS);
export type RepairCondition = z.infer<typeof RepairCondition>;

/** Where the extracted answer came from: the `ANSWER:` marker, the documented fallback, or nowhere. */
export const ANSWER_SOURCES = ['marker', 'fallback', 'none'] as const;
export const AnswerSource = z.enum(ANSWER_SOURCES);
export type AnswerSource = z.infer<typeof AnswerSource>;

export const RepairRow = z
  .object({
    record_id: z.string().min(1).describe('The record that was retried; joins the other tables.'),
    problem_id: z.string().min(1).describe('The problem the record solves (mapped field, else the record id): the unit of the paired bootstrap, since several traces can answer one problem.'),
    condition: RepairCondition.describe('Feedback the retry saw: `steps` (cited step numbers only) or `full` (each non-neutral finding with its steps, severity and what went wrong).'),
    attempt: int32().positive().describe('Retry number for this record and condition, 1-based.'),
    gate: dictString().describe('The gate that selected the record for repair (`any_defect`, `fatal`, or a filter rule name).'),
    prompt_hash: dictString().describe('Hash of the retry prompt template and answer contract; equal hashes mean equal prompts.'),
    model: dictString().describe('Generator model that wrote the retry.'),
    retry_text: z.string().nullable().describe('The retry as the generator wrote it; null when the call failed.'),
    finish_reason: dictString().nullable().describe('Why the generator stopped (stop, length, ...); null when the call failed.'),
    extracted_answer: z.string().nullable().describe('The retry\'s final answer; null when none could be extracted.'),
    answer_source: AnswerSource.describe('`marker` (an explicit ANSWER: line), `fallback` (the documented fallback; never from a truncated tail) or `none`.'),
    reference_answer: z.string().nullable().describe('The record\'s reference answer (mapped field); null when it has none.'),
    original_answer: z.string().nullable().describe('The final answer of the original trace, extracted the same way; null when none.'),
    original_correct: z.boolean().nullable().describe('Original answer equals the reference; null without a reference.'),
    correct: z.boolean().nullable().describe('Retry answer equals the reference; null without a reference or answer-less retry with no reference.'),
    rejudged: z.boolean().describe('True when the retry was judged again by the same jury.'),
    new_n_defects: int32().nonnegative().nullable().describe('Consensus defects of the re-judged retry; null when it was not re-judged.'),
    new_max_impact: Impact.nullable().describe('Highest severity in the re-judged retry; null when it was not re-judged or has none.'),
    new_decision: FilterDecision.nullable().describe('Filter decision on the re-judged retry; null when it was not re-judged.'),
    tokens_in: int64().nonnegative().describe('Prompt tokens of the retry (and re-judging) calls.'),
    tokens_out: int64().nonnegative().describe('Completion tokens of those calls.'),
    cost_usd: z.number().nonnegative().nullable().describe('USD cost at the configured prices; null when a model has no price.'),
    error: z.string().nullable().describe('Why the retry has no text (e.g. the call failed for good); null otherwise.'),
  })
  .describe('One row per (record, condition, attempt) retried by defect-guided repair (App. N).');
export type RepairRow = z.infer<typeof RepairRow>;
