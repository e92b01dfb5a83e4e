/**
 * The errors a caller's own mistake or a stopped run turns into, shared by the CLI and the
 * library entry points (src/api/index.ts): their kinds decide the exit code (src/util/errors.ts).
 */
import { parseDuration } from '../util/duration.js';
import { ReasoningJuryError } from '../util/errors.js';

/** A user-facing failure: printed as one line on stderr, exit code 2, no stack trace. */
export class UsageError extends ReasoningJuryError {
  override get kind() {
    return 'usage' as const;
  }
}

/** A run that stopped for a reason outside it (an endpoint down too long): one line, exit 3 (README, "Endpoint outages"). */
export class RunStoppedError extends ReasoningJuryError {
  override get kind() {
    return 'endpoint' as const;
  }
}

/** A duration flag ("90s", "15m", "2h", "500ms"; a bare number is seconds), at least 1 ms. */
export function parseDurationFlag(text: string, flag: string): number {
  const ms = parseDuration(text);
  if (ms === null || !(ms >= 1)) throw new UsageError(`${flag} must be a duration such as 90s, 30m or 2h (got "${text}")`);
  return ms;
}
