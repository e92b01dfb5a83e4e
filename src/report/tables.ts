import { z } from 'zod';
import { Impact } from '../../schemas/defect.js';
import { dictString, int64 } from '../../schemas/outputs.js';

/**
 * The fingerprint tables `report` writes (<out>/fingerprints/<name>.parquet), one row per
 * generator and group. Like the shard tables, these zod schemas are the single definition of
 * the columns (Arrow types come from them, see src/pipeline/commit/arrow-schema.ts).
 */

/** The pseudo category/leaf for defects without a leaf, so totals still add up. */
export const UNASSIGNED = 'unassigned';

const count = () => int64().nonnegative();

/** One row per generator: how much was judged and flagged. */
export const ModelRow = z.object({
  generator: z.string(),
  traces: count(),
  /** records without a verdict (too few jurors): left out of every other number */
  traces_without_verdict: count(),
  steps: count(),
  defects: count(),
  fatal_defects: count(),
  unassigned_defects: count(),
  /** distinct (trace, step) pairs cited by any defect, each once at its highest severity */
  flagged_steps: count(),
  flagged_fatal: count(),
  flagged_major: count(),
  flagged_minor: count(),
  flagged_neutral: count(),
  /** traces whose meta says whether the final answer was right */
  traces_with_correctness: count(),
  correct_traces: count(),
});
export type ModelRow = z.infer<typeof ModelRow>;

/** Flagged steps per category and severity: a step counts once per category, at its highest severity. */
export const CategoryStepsRow = z.object({
  generator: z.string(),
  category_id: dictString(),
  category_name: z.string(),
  severity: Impact,
  flagged_steps: count(),
});
export type CategoryStepsRow = z.infer<typeof CategoryStepsRow>;

/** Populated leaves: defects (and % of the generator's defects), plus flagged steps by severity. */
export const LeafRow = z.object({
  generator: z.string(),
  category_id: dictString(),
  category_name: z.string(),
  leaf_id: dictString(),
  leaf_name: z.string(),
  defects: count(),
  pct_of_defects: z.number().min(0).max(100),
  fatal_defects: count(),
  flagged_steps: count(),
  steps_fatal: count(),
  steps_major: count(),
  steps_minor: count(),
  steps_neutral: count(),
});
export type LeafRow = z.infer<typeof LeafRow>;

/** Defects per trace by final-answer correctness (null = not known for those traces). */
export const CorrectnessRow = z.object({
  generator: z.string(),
  final_answer_correct: z.boolean().nullable(),
  traces: count(),
  defects: count(),
  fatal_defects: count(),
  defects_per_trace: z.number().nonnegative(),
  fatal_per_trace: z.number().nonnegative(),
});
export type CorrectnessRow = z.infer<typeof CorrectnessRow>;

export const FINGERPRINT_TABLES = {
  fp_models: ModelRow,
  fp_category_steps: CategoryStepsRow,
  fp_leaves: LeafRow,
  fp_correctness: CorrectnessRow,
} as const;
export type FingerprintTableName = keyof typeof FINGERPRINT_TABLES;

export interface Fingerprints {
  fp_models: ModelRow[];
  fp_category_steps: CategoryStepsRow[];
  fp_leaves: LeafRow[];
  fp_correctness: CorrectnessRow[];
}
