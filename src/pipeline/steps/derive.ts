import type { JuryConfig } from '../../../schemas/config.js';
import { deriveRows } from '../../derive/rows.js';
import type { Derived, Judged, Step } from '../envelope.js';

/** The verdict becomes the rows of the verdicts, defects, steps and decisions tables (and verdict_details when asked). */
export function deriveStep(config: Pick<JuryConfig, 'severity_threshold' | 'filter' | 'verdict_details'>): Step<Judged, Derived> {
  return {
    name: 'derive',
    run: (env) => ({ ...env, rows: deriveRows(env.verdict, env.position, env.record.meta, config) }),
  };
}
