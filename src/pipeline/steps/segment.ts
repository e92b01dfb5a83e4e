/**
 * Segmentation: a validated record becomes what the jury reads, its steps per the configured
 * segmentation, with the step cap applied so one enormous trace becomes a dead letter rather
 * than a huge prompt. `prepareRecord` is also what `judge` and `eval` use on single records.
 */
import type { JuryConfig } from '../../../schemas/config.js';
import type { TraceRecord } from '../../../schemas/trace.js';
import type { JudgeInput } from '../../jury/judge.js';
import { segmentRecord, SegmentationError, stepCapReason } from '../../segment/index.js';
import { type Admitted, fail, type Segmented, type Step } from '../envelope.js';

export type Prepared = { ok: true; input: JudgeInput } | { ok: false; error: string };

export function prepareRecord(record: TraceRecord, config: Pick<JuryConfig, 'segmentation'>): Prepared {
  let steps;
  try {
    steps = segmentRecord(record, config.segmentation.mode);
  } catch (err) {
    if (err instanceof SegmentationError) return { ok: false, error: `segmentation: ${err.message}` };
    throw err;
  }
  const overCap = stepCapReason(steps.length, config.segmentation.max_steps);
  if (overCap !== null) return { ok: false, error: overCap };
  return { ok: true, input: { id: record.id, problem: record.problem, steps, final_solution: record.final_solution, ...(record.scores ? { scores: record.scores } : {}) } };
}

/** Cuts the record into the steps the jury reads; an unsegmentable record is a dead letter. */
export function segmentStep(config: Pick<JuryConfig, 'segmentation'>): Step<Admitted, Segmented> {
  return {
    name: 'segment',
    run(env) {
      const prepared = prepareRecord(env.record, config);
      if (prepared.ok) return { ...env, input: prepared.input };
      return fail(env, prepared.error, JSON.stringify(env.item.ok ? env.item.raw : null));
    },
  };
}
