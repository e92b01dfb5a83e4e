import { ExternalRecordMissing } from '../../jury/external/index.js';
import { judgeRecord, type JuryContext } from '../../jury/judge.js';
import { fail, type Judged, type Segmented, type Step } from '../envelope.js';

/**
 * Phase 1 and Phase 2 on the segmented record (src/jury/judge.ts). A record an external seat's
 * source lacks, under `on_missing: dead_letter`, leaves as a dead letter saying so.
 */
export function judgeStep(jury: JuryContext): Step<Segmented, Judged> {
  return {
    name: 'judge',
    run: async (env) => {
      try {
        return { ...env, verdict: await judgeRecord(jury, env.input) };
      } catch (err) {
        if (err instanceof ExternalRecordMissing) return fail(env, err.message, JSON.stringify(env.item.ok ? env.item.raw : null));
        throw err;
      }
    },
  };
}
