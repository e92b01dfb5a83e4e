/**
 * What counts as an endpoint outage, and the error that ends a run when one lasts too long.
 *
 * An outage failure says nothing about the record being judged: the server could not be reached,
 * did not answer in time, or answered 5xx. The health layer (./layers/health.ts) counts them per
 * endpoint; everything else (4xx, a refusal, a reply that does not parse) is the record's own.
 */
import { isRejectedField } from './rejection.js';
import { ProviderError } from './types.js';

export type OutageKind = 'connection' | 'timeout' | 'server_error';

/** The outage kind of an attempt's failure, or null when the failure is the record's own. */
export function outageKindOf(err: unknown): OutageKind | null {
  if (!(err instanceof ProviderError)) return null;
  if (err.reach) return err.reach;
  // The server read the request and refused a field of it (llama-cpp-python says so with a 500).
  if (isRejectedField(err)) return null;
  if (err.status !== undefined && err.status >= 500) return 'server_error';
  return null;
}

const seconds = (ms: number) => (ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`);

/**
 * An endpoint stayed down longer than the run allows. Jury and pipeline code re-throw it instead
 * of turning it into a failed juror, a verdict with `error` or a dead letter: the record was
 * never judged, so it must stay uncommitted and be judged by the next run.
 */
export class EndpointOutageError extends Error {
  override name = 'EndpointOutageError';
  constructor(
    readonly endpoint: string,
    readonly downForMs: number,
    readonly maxOutageMs: number,
    readonly lastError: string | null,
    /** the run was asked to stop while the endpoint was down, before the limit */
    readonly stopping = false,
  ) {
    const why = stopping ? `stopped while endpoint "${endpoint}" was unreachable (for ${seconds(downForMs)})` : `endpoint "${endpoint}" has been unreachable for ${seconds(downForMs)}, longer than the allowed outage of ${seconds(maxOutageMs)}`;
    super(
      `${why}${lastError ? ` (last error: ${lastError})` : ''}; the records waiting for it were not committed: ` +
        `${stopping ? 'run the same command again' : 'bring the model server back (or raise --max-outage) and run the same command again'} to judge them`,
    );
  }
}

export function isEndpointOutage(err: unknown): err is EndpointOutageError {
  return err instanceof EndpointOutageError;
}
