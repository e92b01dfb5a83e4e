/**
 * Whose fault a failed attempt is (docs/config.md, "Endpoint faults"), and the errors that stop a
 * run because of an endpoint.
 *
 *   record    the server read this record's request and answered about it (4xx other than the
 *             ones below, a refused field, a reply that does not parse or is too large): the
 *             record's own failure, as a juror error or a degraded verdict.
 *   outage    the server could not be reached, did not answer in time, or answered 5xx: says
 *             nothing about the record. The health layer (./layers/health.ts) counts them per
 *             endpoint and pauses the run while the endpoint is down.
 *   hard      401, 403, 404: the key, its permission or the model name is wrong. Waiting cannot
 *             heal it, so the run stops at once (EndpointFaultError).
 */
import { isRejectedField } from './rejection.js';
import { ProviderError } from './types.js';
import { ReasoningJuryError } from '../util/errors.js';

export type OutageKind = 'connection' | 'timeout' | 'server_error';
/** `unknown_model`: 404, the model (or the API path of base_url) is not served there */
export type HardFaultKind = 'auth' | 'permission' | 'unknown_model';

/** The outage kind of an attempt's failure, or null when it is not an outage. */
export function outageKindOf(err: unknown): OutageKind | null {
  if (!(err instanceof ProviderError)) return null;
  if (err.reach) return err.reach;
  // The server read the request and refused a field of it (llama-cpp-python says so with a 500).
  if (isRejectedField(err)) return null;
  if (err.status !== undefined && err.status >= 500) return 'server_error';
  return null;
}

const HARD_STATUS: ReadonlyMap<number, HardFaultKind> = new Map([
  [401, 'auth'],
  [403, 'permission'],
  [404, 'unknown_model'],
]);

/** The fault waiting cannot heal that an attempt's failure shows, or null. */
export function hardFaultOf(err: unknown): HardFaultKind | null {
  if (!(err instanceof ProviderError) || err.reach || isRejectedField(err) || err.status === undefined) return null;
  return HARD_STATUS.get(err.status) ?? null;
}

const seconds = (ms: number) => (ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`);

/**
 * Something about an endpoint stops the run. Jury and pipeline code re-throw it instead of turning
 * it into a failed juror, a verdict with `error` or a dead letter: the record was never judged,
 * so it must stay uncommitted and be judged by the next run. The message is the run's one line.
 */
export abstract class EndpointStopError extends ReasoningJuryError {
  override get kind() {
    return 'endpoint' as const;
  }
  abstract readonly endpoint: string;
}

/** An endpoint stayed down longer than the run allows (or the run stopped while it was down). */
export class EndpointOutageError extends EndpointStopError {
  override name = 'EndpointOutageError';
  constructor(
    readonly endpoint: string,
    readonly downForMs: number,
    readonly maxOutageMs: number,
    readonly lastError: string | null,
    /** the run was asked to stop while the endpoint was down, before the limit */
    readonly stopping = false,
  ) {
    const why = stopping ? `stopped while endpoint "${endpoint}" was down (for ${seconds(downForMs)})` : `endpoint "${endpoint}" has been down (unreachable or failing every call) for ${seconds(downForMs)}, longer than the allowed outage of ${seconds(maxOutageMs)}`;
    super(
      `${why}${lastError ? ` (last error: ${lastError})` : ''}; the records waiting for it were not committed: ` +
        `${stopping ? 'run the same command again' : 'bring the model server back (or raise --max-outage) and run the same command again'} to judge them`,
    );
  }
}

/** `preflight`: the run's first call to a seat's model was refused; `unanswered`: every attempt of one call failed */
export type EndpointFaultKind = HardFaultKind | 'unanswered' | 'preflight';

/** A fault of an endpoint that waiting cannot heal: the run stops at once, naming what to fix. */
export class EndpointFaultError extends EndpointStopError {
  override name = 'EndpointFaultError';
  constructor(
    readonly endpoint: string,
    /** what is wrong with the endpoint (`kind` is the error's kind: endpoint, exit 3) */
    readonly fault: EndpointFaultKind,
    message: string,
  ) {
    super(message);
  }
}

/** Whether `err` stops the run because of an endpoint (the record meeting it stays unjudged). */
export function isEndpointOutage(err: unknown): err is EndpointStopError {
  return err instanceof EndpointStopError;
}
