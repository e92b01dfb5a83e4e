import { describe, expect, it } from 'vitest';
import { createLimiter, rateWindow } from '../../src/llm/limits.js';

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('rateWindow', () => {
  it('handles fractional and high rates without exceeding them', () => {
    expect(rateWindow(0.5)).toEqual({ intervalCap: 1, interval: 2000 });
    expect(rateWindow(2.5)).toEqual({ intervalCap: 1, interval: 400 });
    expect(rateWindow(3)).toEqual({ intervalCap: 1, interval: 334 });
    expect(rateWindow(100)).toEqual({ intervalCap: 25, interval: 250 });
    // Whole-ms windows where one exists, so the configured rate is reached, not 0.3 % under it.
    expect(rateWindow(64)).toEqual({ intervalCap: 16, interval: 250 });
    expect(rateWindow(10)).toEqual({ intervalCap: 2, interval: 200 });
    for (const rps of [0.1, 0.5, 1, 2.5, 3, 7.7, 19, 33.3, 64, 100, 1234]) {
      const w = rateWindow(rps);
      expect(Number.isInteger(w.intervalCap) && Number.isInteger(w.interval)).toBe(true);
      expect((w.intervalCap * 1000) / w.interval).toBeLessThanOrEqual(rps + 1e-9);
      expect((w.intervalCap * 1000) / w.interval).toBeGreaterThan(rps * 0.99);
      // At most about a quarter of a second's starts (never more than half) go out together.
      if (rps >= 4) expect(w.intervalCap).toBeLessThanOrEqual(rps / 2);
      else expect(w.intervalCap).toBe(1);
    }
    expect(() => rateWindow(0)).toThrow();
  });
});

describe('createLimiter', () => {
  it('never runs more than max_concurrency tasks at once', async () => {
    const lim = createLimiter({ max_concurrency: 3 });
    let running = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 12 }, () =>
        lim.run(async () => {
          running++;
          peak = Math.max(peak, running);
          await wait(15);
          running--;
        }),
      ),
    );
    expect(peak).toBe(3);
  });

  it('holds starts to the rate, window by window', async () => {
    const lim = createLimiter({ max_concurrency: 10, requests_per_second: 12.5 }); // 3 starts per 240 ms
    const starts: number[] = [];
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 7 }, () => lim.run(async () => void starts.push(performance.now() - t0))));
    starts.sort((a, b) => a - b);
    // The i-th start may not come before its window, floor(i / 3) x 240 ms after the limiter was
    // first asked. Measured from t0, not from the previous start: on a busy machine a start that
    // ran late made the next gap look short though no start was early.
    for (let i = 1; i < starts.length; i++) expect(starts[i]!).toBeGreaterThanOrEqual(Math.floor(i / 3) * 240 - 5);
    // and no window lets more than its 3 through
    for (let i = 3; i < starts.length; i++) expect(starts[i]! - starts[i - 3]!).toBeGreaterThanOrEqual(240 - 5);
  });

  it('drops a queued task when its signal aborts', async () => {
    const lim = createLimiter({ max_concurrency: 1 });
    const blocker = lim.run(() => wait(50));
    const ctl = new AbortController();
    let ran = false;
    const queued = lim.run(async () => void (ran = true), ctl.signal);
    ctl.abort(new Error('cancelled'));
    await expect(queued).rejects.toThrow();
    await blocker;
    expect(ran).toBe(false);
  });
});
