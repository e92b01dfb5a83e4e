import { describe, expect, it } from 'vitest';
import { backoffDelay, RETRY_AFTER_CEILING_MS, realSleep, withRetry, type RetryPolicy } from '../../src/llm/retry.js';
import { ProviderError } from '../../src/llm/types.js';

const policy: RetryPolicy = { maxRetries: 4, baseMs: 100, maxMs: 1000 };

describe('backoffDelay', () => {
  it('is full jitter over an exponentially growing, capped window', () => {
    const top = () => 0.999999;
    expect([1, 2, 3, 4, 5, 6].map((r) => backoffDelay(r, policy, top))).toEqual([99, 199, 399, 799, 999, 999]);
    expect(backoffDelay(3, policy, () => 0)).toBe(0);
    expect(backoffDelay(3, policy, () => 0.5)).toBe(200);
  });

  it('never waits less than retry-after, and clamps absurd values', () => {
    expect(backoffDelay(1, policy, () => 0, 2500)).toBe(2500);
    expect(backoffDelay(5, policy, () => 0.999999, 10)).toBe(999); // jitter already longer
    expect(backoffDelay(1, policy, () => 0, 3_600_000)).toBe(RETRY_AFTER_CEILING_MS);
  });
});

function scripted(outcomes: Array<Error | string>) {
  let i = 0;
  const calls: number[] = [];
  const fn = async (retry: number) => {
    calls.push(retry);
    const o = outcomes[i++];
    if (o instanceof Error) throw o;
    return o as string;
  };
  return { fn, calls };
}

describe('withRetry', () => {
  it('retries retryable errors and returns the first success', async () => {
    const { fn, calls } = scripted([new ProviderError('500', true, 500), new ProviderError('429', true, 429), 'done']);
    const sleeps: number[] = [];
    const out = await withRetry(fn, policy, { random: () => 0.5, sleep: async (ms) => void sleeps.push(ms) });
    expect(out).toBe('done');
    expect(calls).toEqual([0, 1, 2]);
    expect(sleeps).toEqual([50, 100]);
  });

  it('honours retryAfterMs from the error', async () => {
    const { fn } = scripted([new ProviderError('429', true, 429, 7000), 'done']);
    const sleeps: number[] = [];
    await withRetry(fn, policy, { random: () => 0, sleep: async (ms) => void sleeps.push(ms) });
    expect(sleeps).toEqual([7000]);
  });

  it('stops after maxRetries and rethrows the last error', async () => {
    const errs = [1, 2, 3].map((n) => new ProviderError(`e${n}`, true, 503));
    const { fn, calls } = scripted(errs);
    await expect(withRetry(fn, { ...policy, maxRetries: 2 }, { sleep: async () => undefined })).rejects.toBe(errs[2]);
    expect(calls).toEqual([0, 1, 2]);
  });

  it('does not retry non-retryable errors or foreign errors', async () => {
    const a = scripted([new ProviderError('401', false, 401), 'x']);
    await expect(withRetry(a.fn, policy, { sleep: async () => undefined })).rejects.toThrow('401');
    expect(a.calls).toEqual([0]);
    const b = scripted([new TypeError('bug'), 'x']);
    await expect(withRetry(b.fn, policy, { sleep: async () => undefined })).rejects.toThrow('bug');
    expect(b.calls).toEqual([0]);
  });

  it('is abortable while sleeping', async () => {
    const ctl = new AbortController();
    const { fn, calls } = scripted([new ProviderError('503', true, 503), 'x']);
    const p = withRetry(fn, { ...policy, baseMs: 60_000, maxMs: 60_000 }, { signal: ctl.signal, random: () => 1 });
    setTimeout(() => ctl.abort(new Error('stop now')), 20);
    const t = performance.now();
    await expect(p).rejects.toThrow('stop now');
    expect(performance.now() - t).toBeLessThan(5000);
    expect(calls).toEqual([0]);
  });

  it('realSleep rejects at once on an aborted signal', async () => {
    await expect(realSleep(10_000, AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
  });
});
