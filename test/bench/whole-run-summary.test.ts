import { describe, expect, it } from 'vitest';
import { median } from '../../bench/common.js';
import { beyondShort, summary } from '../../bench/whole-run.js';

/** A measured run with just the fields the summary reads. */
const run = (cpuPerCall: number, wholeRate = 61) => ({ client: 'x', calls: 3200, wallS: 52, firstS: 0.4, tailS: 0.8, wholeRate, steadyRate: 63.9, cpuPerCall, cpuPerCallAfterFirst: null, maxInFlight: 32, maxPerSecond: 64, connections: 32 });

describe('whole-run summary', () => {
  it('takes the middle value, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('judges the ratio on the median of the per-round ratios, each CLI run against the bare run of its own round', () => {
    const rounds = [
      { cli: run(1.8, 61.0), bare: run(1.5) },
      { cli: run(3.0, 62.0), bare: run(2.0) },
      { cli: run(1.7, 60.5), bare: run(1.6) },
    ].map((r) => ({ ...r, rows: [r.cli, r.bare] }));
    const s = summary(rounds);
    expect(s.ratios.map((r) => r.toFixed(3))).toEqual(['1.200', '1.500', '1.063']);
    expect(s.ratio).toBeCloseTo(1.2, 10);
    // not the ratio of the medians (1.8 / 1.6 = 1.125): a slow minute moves both runs of a round
    expect(s.cliCpu).toBe(1.8);
    expect(s.bareCpu).toBe(1.6);
    expect(s.fraction).toBeCloseTo(61.0 / 64, 10);
  });

  it('gives no ratio for CLI-only rounds', () => {
    const cli = run(2);
    const s = summary([{ cli, rows: [cli] }]);
    expect(s.ratios).toEqual([]);
    expect(s.ratio).toBeNaN();
    expect(s.cliCpu).toBe(2);
  });

  it('splits each client\'s CPU into a short run and what a long run spends per call beyond it', () => {
    // CLI: 3,200 calls at 1.8 ms = 5,760 ms, of which a 32-call run costs 800 ms -> 4,960 / 3,168
    // bare: 3,200 calls at 1.5 ms = 4,800 ms, a 32-call run 300 ms -> 4,500 / 3,168
    expect(beyondShort(run(1.8), 800, 32)).toBeCloseTo(4960 / 3168, 10);
    const cli = run(1.8);
    const bare = run(1.5);
    const s = summary([{ cli, bare, rows: [cli, bare], short: { cliMs: 800, bareMs: 300, calls: 32 } }]);
    expect(s.ratio).toBeCloseTo(1.2, 10);
    expect(s.marginalRatio).toBeCloseTo(4960 / 4500, 10);
    expect(s.fixedCliMs).toBe(800);
    expect(s.fixedBareMs).toBe(300);
  });
});
