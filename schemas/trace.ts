import { z } from 'zod';

/** Where a record came from; travels with it to the shard and the commit manifest. */
export const SourcePosition = z.object({
  source: z.string(), // e.g. "file", "kafka", "s3"
  unit: z.string(), // file path / object key / topic+partition
  offset: z.int().nonnegative(), // row number or Kafka offset
});
export type SourcePosition = z.infer<typeof SourcePosition>;

/** Gold labels carried by benchmark records; all step numbers are 1-based. */
export const GoldLabels = z.object({
  error_steps: z.array(z.int().positive()).optional(),
  first_error_step: z.int().positive().nullable().optional(),
  final_answer_correct: z.boolean().optional(),
});
export type GoldLabels = z.infer<typeof GoldLabels>;

export const TraceRecord = z
  .object({
    id: z.string().min(1),
    problem: z.string(),
    trace: z.string().optional(),
    steps: z.array(z.string()).optional(),
    final_solution: z.string().optional(),
    meta: z.record(z.string(), z.unknown()).default({}),
    gold: GoldLabels.optional(),
    /** the reference (gold) final answer, when the mapping names one: what repair compares with */
    reference_answer: z.string().optional(),
    /** the problem this record answers, when the mapping names one (several traces may share it) */
    problem_id: z.string().optional(),
    /** per `step_scores` external seat id, the value its `field` held in the input row */
    scores: z.record(z.string(), z.unknown()).optional(),
  })
  .superRefine((r, ctx) => {
    const hasSteps = Array.isArray(r.steps) && r.steps.some((s) => s.trim().length > 0);
    const hasTrace = typeof r.trace === 'string' && r.trace.trim().length > 0;
    if (!hasSteps && !hasTrace) {
      ctx.addIssue({ code: 'custom', path: ['trace'], message: 'record has neither a non-empty trace nor non-empty steps' });
    }
  });
export type TraceRecord = z.infer<typeof TraceRecord>;

export const FieldMapping = z
  .object({
    id: z.string().default('id').describe('Path of the record id (a string; a number is turned into one). Required in every row.'),
    problem: z.string().default('problem').describe('Path of the problem statement. Required in every row.'),
    trace: z.string().default('trace').describe('Path of the reasoning trace text, segmented into steps per `segmentation.mode`.'),
    steps: z.string().default('steps').describe('Path of a list of steps, used as given and never re-segmented (an empty list counts as absent).'),
    final_solution: z.string().default('final_solution').describe('Path of the final answer (optional; a number is turned into a string).'),
    meta: z
      .union([z.array(z.string()), z.string()])
      .default('meta')
      .describe('Extra fields kept in the record\'s `meta` (and the shards\' `meta` column): a list of paths, each copied under its path, or one path to an object whose entries are copied.'),
    // Optional rather than defaulted so configs without them keep their config_hash.
    reference_answer: z.string().optional().describe('Path of the reference final answer (a number is turned into a string): what `repair` compares a retry\'s answer with. Absent: no reference, `correct` is null.'),
    problem_id: z.string().optional().describe('Path of a problem id shared by traces of one problem (the unit of `eval repair`\'s paired bootstrap). Absent: the record id.'),
    gold: z.string().default('gold').describe('Path of gold labels (`error_steps`, `first_error_step`, `final_answer_correct`; benchmarks and `eval`).'),
  })
  .describe('Where each record field lives in your rows: dotted paths into each input row (`data.question`); a column literally named `data.question` wins over the nested path. Only the fields you rename need listing.');
export type FieldMapping = z.infer<typeof FieldMapping>;
