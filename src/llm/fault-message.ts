/**
 * The one line a run stops with when an endpoint fault meets a call: which endpoint, which seat
 * and model, what the server said, and what to change. Keys never appear: `said` is the
 * provider's redacted message.
 */
import { EndpointFaultError, type HardFaultKind } from './outage.js';
import type { EndpointConfig, ParticipantConfig } from './types.js';

export interface FaultScene {
  endpoint: string;
  config: EndpointConfig;
  seat: ParticipantConfig;
  /** whether the variable named by api_key_env holds a value */
  keySet: boolean;
  /** what the server said (redacted) */
  said: string;
}

const AGAIN = 'nothing of the records it met was committed; run the same command again once fixed';

function keyFix(s: FaultScene): string {
  const setting = `endpoints.${s.endpoint}.api_key_env`;
  if (!s.config.api_key_env) return `the server wants an API key: put it in an environment variable and name that variable in ${setting}`;
  if (!s.keySet) return `${s.config.api_key_env} (named by ${setting}) is not set: export it with the key`;
  return `check the key in ${s.config.api_key_env} (named by ${setting})`;
}

function fixFor(kind: HardFaultKind, s: FaultScene): string {
  const who = `seat "${s.seat.id}" (model "${s.seat.model}")`;
  if (kind === 'auth') return `endpoint "${s.endpoint}" refused the API key (HTTP 401) for ${who}: ${keyFix(s)}`;
  if (kind === 'permission') return `endpoint "${s.endpoint}" denied ${who} access (HTTP 403): give the key access to "${s.seat.model}", or give the seat a model the key may use`;
  return `endpoint "${s.endpoint}" does not serve model "${s.seat.model}" of seat "${s.seat.id}" (HTTP 404): fix the seat's model (GET ${s.config.base_url ?? ''}/models lists what the server serves) or endpoints.${s.endpoint}.base_url`;
}

export function hardFault(kind: HardFaultKind, s: FaultScene): EndpointFaultError {
  return new EndpointFaultError(s.endpoint, kind, `${fixFor(kind, s)}; ${AGAIN}. Server said: ${s.said}`);
}

/** Every attempt of one call failed on the endpoint's side (resets, 5xx, timeouts) while others may have been answered. */
export function unansweredCall(s: FaultScene, recordId: string, attempts: number): EndpointFaultError {
  return new EndpointFaultError(
    s.endpoint,
    'unanswered',
    `endpoint "${s.endpoint}" failed all ${attempts} attempt(s) of seat "${s.seat.id}" (model "${s.seat.model}") for record "${recordId}" (last error: ${s.said}); ` +
      `the record was not committed: look at the server (its log for this request; a timeout: raise endpoints.${s.endpoint}.timeout_ms) and run the same command again`,
  );
}

/** The run's first call to a seat's model was refused for a reason that is not a fault above. */
export function preflightRefused(endpoint: string, seat: ParticipantConfig, said: string): EndpointFaultError {
  return new EndpointFaultError(endpoint, 'preflight', `preflight: endpoint "${endpoint}" refused a one-line structured request of seat "${seat.id}" (model "${seat.model}"): ${said}; nothing was judged: fix the setting it names and run the same command again (--no-preflight skips this check)`);
}
