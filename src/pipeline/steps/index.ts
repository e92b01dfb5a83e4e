/**
 * The stage's steps after intake, in order. A new capability (repair, external jurors) is one
 * new file here and one line in this list.
 */
import type { JuryConfig } from '../../../schemas/config.js';
import type { JuryContext } from '../../jury/judge.js';
import type { RowEnricher } from '../../taxonomy/enrich.js';
import type { PipelineStep } from '../envelope.js';
import { deriveStep } from './derive.js';
import { judgeStep } from './judge.js';
import { repairOn, repairStep } from './repair.js';
import { segmentStep } from './segment.js';
import { taxonomyStep } from './taxonomy.js';

export interface JudgingDeps {
  config: JuryConfig;
  jury: JuryContext;
  /** taxonomy assignment, when the config turns it on (src/taxonomy/stream.ts) */
  enrich?: RowEnricher | undefined;
}

export function judgingSteps(deps: JudgingDeps): PipelineStep[] {
  return [
    segmentStep(deps.config),
    judgeStep(deps.jury),
    deriveStep(deps.config),
    // Taxonomy fills columns of the derived defect rows, so it runs after derive.
    ...(deps.enrich ? [taxonomyStep(deps.enrich, deps.config.filter)] : []),
    // Repair reads the final decision facts (taxonomy included), so it comes last.
    ...(repairOn(deps.config) ? [repairStep(deps.jury, repairOn(deps.config)!)] : []),
  ];
}

export { intake, intakeSettings } from '../record-mapping.js';
