/**
 * `estimate` with a cascade Phase 1 (issue 16.5): without a pilot every seat is projected on
 * every record (an upper bound, the same Phase 1 calls as `strategy: all`); with a pilot's
 * Phase 1 calls per record, seats past the start ones are projected on the share it implies.
 */
import { describe, expect, it } from 'vitest';
import type { JuryConfigInput } from '../../schemas/config.js';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { defaultProfile } from '../../src/compose/estimate-profile.js';
import { projectModes, seatShares } from '../../src/compose/estimate.js';
import { loadPromptSet } from '../../src/prompts/templates.js';
import { segmentRecord } from '../../src/segment/index.js';

const base = defaultConfigInput();
const cascade = (start: number): JuryConfigInput => ({ ...base, phase1: { strategy: 'cascade', cascade: { start, add: 'all', rules: ['any_finding'] } } });
const sample = [{ problem: 'p', steps: segmentRecord({ trace: 'One.\n\nTwo.\n\nThree.' }) }];

describe('estimate with a cascade', () => {
  it('no pilot: every seat on every record, as strategy all', () => {
    const profile = defaultProfile(3, 12, 8);
    expect(seatShares(parseConfig(cascade(1)), profile)).toEqual([1, 1, 1]);
    const all = projectModes(parseConfig(base), loadPromptSet(), sample, 100, profile);
    const cas = projectModes(parseConfig(cascade(1)), loadPromptSet(), sample, 100, profile);
    expect(cas).toEqual(all);
  });

  it('a pilot of 1.6 Phase 1 calls per record with one start seat: the other two judge 30 % of the records', () => {
    const profile = { ...defaultProfile(3, 12, 8), phase1_calls: 1.6 };
    const shares = seatShares(parseConfig(cascade(1)), profile);
    expect(shares[0]).toBe(1);
    expect(shares[1]).toBeCloseTo(0.3, 10);
    expect(shares[2]).toBeCloseTo(0.3, 10);
    // strategy all ignores the pilot's count
    expect(seatShares(parseConfig(base), profile)).toEqual([1, 1, 1]);
    const union = projectModes(parseConfig({ ...cascade(1), mode: 'union' }), loadPromptSet(), sample, 100, profile).find((m) => m.mode === 'union')!;
    expect(union.calls).toBe(160);
  });
});
