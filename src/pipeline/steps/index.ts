/**
 * The stage's steps after intake, in order. A new capability (repair, external jurors) is one
 * new file here and one `then` in this chain; the chain's types check that each step comes
 * after the ones that give what it needs (../envelope.ts).
 */
import type { JuryConfig } from '../../../schemas/config.js';
import type { JuryContext } from '../../jury/judge.js';
import type { RowEnricher } from '../../taxonomy/enrich.js';
import { type Admitted, type Derived, StepChain } from '../envelope.js';
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

export function judgingSteps(deps: JudgingDeps): StepChain<Admitted, Derived> {
  const repair = repairOn(deps.config);
  return StepChain.from<Admitted>()
    .then(segmentStep(deps.config))
    .then(judgeStep(deps.jury))
    .then(deriveStep(deps.config))
    // Taxonomy fills columns of the derived defect rows, so it runs after derive.
    .thenIf(deps.enrich ? taxonomyStep(deps.enrich, deps.config.filter) : null)
    // Repair reads the final decision facts (taxonomy included), so it comes last.
    .thenIf(repair ? repairStep(deps.jury, repair) : null);
}

export { intake, intakeSettings } from '../record-mapping.js';
