/**
 * Retry layer: runs an attempt again after a retryable ProviderError, with the endpoint's backoff
 * policy (src/llm/retry.ts). It turns an Attempt into a TurnModel; each attempt learns whether
 * its failure would be retried, so the audit line can say `retryable_error` or `error`.
 */
import type { Attempt, TurnModel } from '../model.js';
import { willRetry, withRetry, type RetryPolicy, type SleepFn } from '../retry.js';

export interface RetryLayerOptions {
  random?: () => number;
  sleep?: SleepFn;
}

export function retryLayer(policy: RetryPolicy, opts: RetryLayerOptions = {}): (next: Attempt) => TurnModel {
  const seams = { ...(opts.random ? { random: opts.random } : {}), ...(opts.sleep ? { sleep: opts.sleep } : {}) };
  return (next) => (req, t) =>
    withRetry((retry) => next(req, { ...t, willRetry: (err) => willRetry(err, retry, policy, t.signal) }), policy, { signal: t.signal, ...seams });
}
