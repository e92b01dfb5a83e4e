import { ReasoningJuryError } from '../util/errors.js';
/** A prompt the simulator recognised but cannot read (HTTP 400); its own module so task files need not import tasks.ts. */
export class TaskInputError extends ReasoningJuryError {
  override get kind() {
    return 'internal' as const;
  }
}
