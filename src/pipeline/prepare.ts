import type { JuryConfig } from '../../schemas/config.js';
import type { TraceRecord } from '../../schemas/trace.js';
import type { JudgeInput } from '../jury/judge.js';
import { segmentRecord, SegmentationError, stepCapReason } from '../segment/index.js';

export type Prepared = { ok: true; input: JudgeInput } | { ok: false; error: string };

/**
 * A validated record -> what the jury reads: steps per the configured segmentation, with the
 * step cap applied so one enormous trace becomes a dead letter rather than a huge prompt.
 */
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
  return { ok: true, input: { id: record.id, problem: record.problem, steps, final_solution: record.final_solution } };
}
