/**
 * Retry with exponential backoff and full jitter (delay = random * min(cap, base * 2^n)).
 * Full jitter spreads a burst of throttled jurors so they do not retry in lockstep.
 * Randomness and sleeping are injectable so tests can check delays without waiting.
 */
import { ProviderError } from './types.js';

export interface RetryPolicy {
  /** retries after the first attempt; 0 = a single attempt */
  maxRetries: number;
  baseMs: number;
  maxMs: number;
}

export type SleepFn = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface RetryOptions {
  signal?: AbortSignal;
  random?: () => number;
  sleep?: SleepFn;
  /** told before each wait; `retry` is 1 for the first retry */
  onRetry?: (info: { retry: number; delayMs: number; error: ProviderError }) => void;
}

/**
 * Server-requested waits longer than this are clamped: a Retry-After of an hour would stall the
 * stage, and the Phase 1 wall-clock ceiling decides what to do with a juror that slow anyway.
 */
export const RETRY_AFTER_CEILING_MS = 120_000;

/** Delay before retry number `retry` (1-based). */
export function backoffDelay(retry: number, policy: RetryPolicy, random: () => number = Math.random, retryAfterMs?: number): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, retry - 1));
  const jittered = Math.floor(clamp01(random()) * exp);
  if (retryAfterMs === undefined || !Number.isFinite(retryAfterMs) || retryAfterMs < 0) return jittered;
  // The server knows when it will have capacity: never retry sooner than it asked.
  return Math.max(jittered, Math.min(Math.ceil(retryAfterMs), Math.max(policy.maxMs, RETRY_AFTER_CEILING_MS)));
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(Math.max(x, 0), 1) : 0;
}

/** setTimeout-based sleep that rejects with the signal's reason when aborted. */
export const realSleep: SleepFn = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export function abortReason(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  if (r instanceof Error) return r;
  const e = new Error(typeof r === 'string' ? r : 'aborted');
  e.name = 'AbortError';
  return e;
}

/**
 * Runs `fn(retry)` (retry = 0 for the first attempt) until it succeeds, throws a non-retryable
 * error, or retries run out. Only ProviderError with `retryable` is retried.
 */
export async function withRetry<T>(fn: (retry: number) => Promise<T>, policy: RetryPolicy, opts: RetryOptions = {}): Promise<T> {
  const random = opts.random ?? Math.random;
  const sleep = opts.sleep ?? realSleep;
  for (let retry = 0; ; retry++) {
    if (opts.signal?.aborted) throw abortReason(opts.signal);
    try {
      return await fn(retry);
    } catch (err) {
      if (!(err instanceof ProviderError) || !err.retryable || retry >= policy.maxRetries || opts.signal?.aborted) throw err;
      const delayMs = backoffDelay(retry + 1, policy, random, err.retryAfterMs);
      opts.onRetry?.({ retry: retry + 1, delayMs, error: err });
      await sleep(delayMs, opts.signal);
    }
  }
}

/** Whether `fn` will be retried after this error at retry index `retry` (used to label audit lines). */
export function willRetry(err: unknown, retry: number, policy: RetryPolicy, signal?: AbortSignal): boolean {
  return err instanceof ProviderError && err.retryable && retry < policy.maxRetries && !signal?.aborted;
}
