// The stall detector the long tests rely on must fail when nothing moves, and only then.
import { describe, expect, it } from 'vitest';
import { runCli } from './cli.js';
import { guardProgress, StallError, waitForProgress } from './progress.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('waiting on progress', () => {
  it('waitForProgress keeps waiting while the value moves, then returns when done', async () => {
    let n = 0;
    const t0 = Date.now();
    // Longer in total than the stall window, but never still for a whole window.
    await waitForProgress(() => ({ done: ++n >= 12, progress: n }), { stallMs: 150, pollMs: 30 });
    expect(n).toBe(12);
    expect(Date.now() - t0).toBeGreaterThan(150);
  });

  it('waitForProgress fails with a StallError when the value stops moving', async () => {
    let n = 0;
    const wait = waitForProgress(() => ({ done: false, progress: Math.min(++n, 3) }), { stallMs: 150, pollMs: 20, what: 'the counter' });
    await expect(wait).rejects.toBeInstanceOf(StallError);
    await expect(wait).rejects.toThrow(/the counter: no progress for 150 ms \(still at 3\)/);
  });

  it('guardProgress passes the result through, and rejects when the probe stalls first', async () => {
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 20);
    try {
      await expect(guardProgress(sleep(300).then(() => 'done'), () => ticks, { stallMs: 120, pollMs: 20 })).resolves.toBe('done');
    } finally {
      clearInterval(ticking);
    }
    await expect(guardProgress(sleep(2_000), () => 'still', { stallMs: 120, pollMs: 20, what: 'sleeping' })).rejects.toThrow(/sleeping: no progress/);
  });

  it('runCli kills a child that goes quiet and says why', async () => {
    // `simulate` serves until stopped and prints once: after that, nothing moves.
    const r = await runCli(['simulate', '--port', '0'], { stallMs: 1_500, pollMs: 100 });
    expect(r.code).toBeNull();
    expect(r.stalled).toMatch(/reasoning-jury simulate --port: no progress for 1500 ms/);
    expect(r.stderr).toContain('[test] killed:');
  });
});
