import type { JuryConfig } from '../../../schemas/config.js';
import { fail } from '../envelope.js';
import { prepareRecord } from '../prepare.js';
import type { PipelineStep } from '../step.js';

/** Cuts the record into the steps the jury reads; an unsegmentable record is a dead letter. */
export function segmentStep(config: Pick<JuryConfig, 'segmentation'>): PipelineStep {
  return {
    name: 'segment',
    run(env) {
      const prepared = prepareRecord(env.record!, config);
      if (prepared.ok) return { ...env, input: prepared.input };
      return fail(env, prepared.error, JSON.stringify(env.item.ok ? env.item.raw : null));
    },
  };
}
