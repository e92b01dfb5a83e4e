/**
 * Per-endpoint admission control: at most `max_concurrency` requests in flight and at most
 * `requests_per_second` request starts. Each HTTP attempt passes through the limiter on its own,
 * so a call waiting out a backoff does not hold a slot.
 */
import PQueue from 'p-queue';
import type { EndpointConfig } from './types.js';

export interface RateWindow {
  intervalCap: number;
  interval: number;
}

/**
 * p-queue counts whole starts per window, so a rate like 0.5/s or 2.5/s becomes "intervalCap
 * starts per interval ms". Windows are about 250 ms: at most a quarter of a second's starts go
 * out together, and a window is long enough that one start held back by a late reply or a busy
 * event loop can still be made up inside it (with ~50 ms windows, the whole-run benchmark lost
 * about 1 % of the rate to that; docs/benchmarks.md). The interval is rounded up so the real rate
 * never exceeds the configured one, and among caps that keep the window under ~500 ms the first
 * whose interval is a whole number of ms is taken, so common rates (64/s -> 16 per 250 ms) lose
 * nothing to rounding.
 */
export function rateWindow(requestsPerSecond: number): RateWindow {
  if (!(requestsPerSecond > 0) || !Number.isFinite(requestsPerSecond)) throw new Error(`requests_per_second must be a positive number, got ${requestsPerSecond}`);
  const base = Math.max(1, Math.floor(requestsPerSecond / 4));
  for (let cap = base; cap <= 2 * base; cap++) {
    const ms = (cap * 1000) / requestsPerSecond;
    if (Math.abs(ms - Math.round(ms)) < 1e-9) return { intervalCap: cap, interval: Math.round(ms) };
  }
  return { intervalCap: base, interval: Math.ceil((base * 1000) / requestsPerSecond) };
}

export interface Limiter {
  /** Runs `task` when a slot (and rate budget) is free; rejects if `signal` aborts while queued. */
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  readonly inFlight: number;
  readonly queued: number;
  /** Drops queued tasks (they never start) and waits for running ones. */
  close(): Promise<void>;
}

export function createLimiter(endpoint: Pick<EndpointConfig, 'max_concurrency' | 'requests_per_second'>): Limiter {
  const rate = endpoint.requests_per_second === undefined ? undefined : rateWindow(endpoint.requests_per_second);
  // strict = sliding window: no burst of 2x the cap across a window boundary.
  const queue = new PQueue({ concurrency: Math.max(1, endpoint.max_concurrency), ...(rate ? { ...rate, strict: true } : {}) });
  return {
    run: <T>(task: () => Promise<T>, signal?: AbortSignal) => queue.add(task, signal ? { signal } : {}) as Promise<T>,
    get inFlight() {
      return queue.pending;
    },
    get queued() {
      return queue.size;
    },
    async close() {
      queue.clear();
      await queue.onIdle();
    },
  };
}
