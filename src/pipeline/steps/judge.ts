import { judgeRecord, type JuryContext } from '../../jury/judge.js';
import type { PipelineStep } from '../envelope.js';

/** Phase 1 and Phase 2 on the segmented record (src/jury/judge.ts). */
export function judgeStep(jury: JuryContext): PipelineStep {
  return {
    name: 'judge',
    run: async (env) => ({ ...env, verdict: await judgeRecord(jury, env.input!) }),
  };
}
