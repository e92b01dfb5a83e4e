/**
 * What the gateway tells an observer about its traffic: one event per HTTP attempt and one per
 * logical call. The operational layer (src/ops) turns these into metrics; keeping the contract
 * here means the model layer knows nothing of Prometheus, and an observer that throws cannot
 * fail a call (the layers swallow it).
 */
import type { CallUsage } from '../../schemas/usage.js';
import { isRejectedField } from './rejection.js';
import { ProviderError } from './types.js';

/** Why an attempt failed, in words an operator filters on. */
export type AttemptErrorKind = 'rate_limited' | 'server_error' | 'client_error' | 'timeout' | 'connection' | 'aborted' | 'other';

export interface AttemptEvent {
  endpoint: string;
  model: string;
  /** from leaving the endpoint's queue to the reply or the failure */
  seconds: number;
  /** how long the attempt waited in the endpoint's queue (our limiter) before that */
  queueSeconds?: number;
  outcome: 'ok' | 'error';
  /** set when outcome is 'error' */
  errorKind?: AttemptErrorKind;
  /** the failure will be retried (another attempt follows after a backoff) */
  retried: boolean;
}

export interface CallEvent {
  endpoint: string;
  model: string;
  /** tokens, dollars, attempts and outcome, as the ledger and the verdict record them */
  usage: CallUsage;
  /** replayed from the response cache: no HTTP request, nothing paid this run */
  cached: boolean;
}

export interface GatewayObserver {
  onAttempt?(e: AttemptEvent): void;
  onCall?(e: CallEvent): void;
}

/** Classifies what an attempt threw (the redaction layer makes every failure a ProviderError). */
export function attemptErrorKind(err: unknown): AttemptErrorKind {
  if (!(err instanceof ProviderError)) return 'other';
  const status = err.status;
  if (isRejectedField(err)) return 'client_error';
  if (status === 429) return 'rate_limited';
  if (status !== undefined && status >= 500) return 'server_error';
  if (status === 408 || /^timeout\b/i.test(err.message)) return 'timeout';
  if (status !== undefined && status >= 400) return 'client_error';
  if (/^aborted\b/i.test(err.message)) return 'aborted';
  if (/^connection error\b|ECONNREFUSED|ECONNRESET|EPIPE|ENOTFOUND|EHOSTUNREACH|socket/i.test(err.message)) return 'connection';
  return 'other';
}

/** Calls `fn`, ignoring what it throws: a broken metrics sink must never break a model call. */
export function quietly(fn: () => void): void {
  try {
    fn();
  } catch {
    // observers are best effort
  }
}
