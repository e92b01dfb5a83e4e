import { z } from 'zod';

/**
 * `eval repair --originals <file>`: one JSONL line per corpus record with its original
 * correctness, so corpus accuracy (App. N, Table 14) also counts the records no gate retried
 * (the `repairs` table has rows only for retried records).
 */
export const OriginalOutcome = z
  .object({
    record_id: z.string().min(1).describe('The record id, as in the repairs table.'),
    problem_id: z.string().min(1).optional().describe('The problem it answers (the unit of the bootstrap); defaults to the record id.'),
    correct: z.boolean().nullable().describe('Original final answer equals the reference; null when the record has no reference (left out).'),
  })
  .describe('One corpus record as originally answered (input of `eval repair --originals`).');
export type OriginalOutcome = z.infer<typeof OriginalOutcome>;
