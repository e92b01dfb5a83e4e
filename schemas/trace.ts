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
  })
  .superRefine((r, ctx) => {
    const hasSteps = Array.isArray(r.steps) && r.steps.some((s) => s.trim().length > 0);
    const hasTrace = typeof r.trace === 'string' && r.trace.trim().length > 0;
    if (!hasSteps && !hasTrace) {
      ctx.addIssue({ code: 'custom', path: ['trace'], message: 'record has neither a non-empty trace nor non-empty steps' });
    }
  });
export type TraceRecord = z.infer<typeof TraceRecord>;

/**
 * Where each TraceRecord field lives in the user's own rows. Values are dotted paths into the
 * source object ("data.question"). `meta` lists extra columns copied into record.meta.
 */
export const FieldMapping = z.object({
  id: z.string().default('id'),
  problem: z.string().default('problem'),
  trace: z.string().default('trace'),
  steps: z.string().default('steps'),
  final_solution: z.string().default('final_solution'),
  meta: z.union([z.array(z.string()), z.string()]).default('meta'),
  gold: z.string().default('gold'),
});
export type FieldMapping = z.infer<typeof FieldMapping>;
