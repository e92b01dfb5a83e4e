import type { DeadLetterRow } from '../../schemas/outputs.js';
import { ReasoningJuryError } from '../util/errors.js';

/**
 * A record `judge` cannot judge (it does not map to a trace record, cannot be segmented, or a
 * step failed on it): kind `input`. `juryStream` emits such a record as a dead letter instead.
 */
export class RecordError extends ReasoningJuryError {
  override get kind() {
    return 'input' as const;
  }
  constructor(
    message: string,
    /** the row `run` would write to the dead_letters table */
    readonly deadLetter: DeadLetterRow,
  ) {
    super(message);
    this.name = 'RecordError';
  }
}
