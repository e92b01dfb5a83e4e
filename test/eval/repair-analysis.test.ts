import { describe, expect, it } from 'vitest';
import { subgateRows } from '../../src/eval/repair/subgate.js';
import { corpusAccuracy } from '../../src/eval/repair/accuracy.js';
import { analyzeRepairs, DEFAULT_REPAIR_ANALYSIS } from '../../src/eval/repair/analyze.js';
import { compareConditions } from '../../src/eval/repair/compare.js';
import { repairOutcomes } from '../../src/eval/repair/outcomes.js';
import { transitionTable } from '../../src/eval/repair/transitions.js';
import { renderRepairMarkdown } from '../../src/eval/repair/render.js';
import { HAND_ORIGINALS, HAND_SEVERITY, handRows } from './repair-helpers.js';

/**
 * handRows(), worked out by hand (W wrong, R right, F retry failed, - no reference):
 *
 *   record problem  before  steps (attempt 1, attempt 2)  full
 *   r1     p1       W       R                             R   (a duplicate full row says W: ignored)
 *   r2     p1       W       W, R                          R
 *   r3     p2       R       W                             R
 *   r4     p2       R       R                             R
 *   r5     p3       W       W                             W
 *   r6     p3       R       F                             W
 *   r7     p4       -       -                             -
 */
describe('eval repair on a hand-checked corpus', () => {
  it('transitions per condition, first attempt', () => {
    const { outcomes, duplicates } = repairOutcomes(handRows(), 'first');
    expect(duplicates).toBe(1);
    const [steps, full] = transitionTable(outcomes);
    // steps: r1 fixed, r3 regressed, r4 right→right, r2 and r5 wrong→wrong; r6 failed, r7 no reference.
    expect(steps).toMatchObject({ condition: 'steps', retried: 7, failed: 1, no_reference: 1, scored: 5, fixed: 1, regressed: 1, right_right: 1, wrong_wrong: 2, net: 0 });
    expect(steps!.fix_rate.rate).toBeCloseTo(1 / 3, 12);
    expect(steps!.regression_rate.rate).toBeCloseTo(1 / 2, 12);
    expect(steps!.accuracy_before.rate).toBeCloseTo(2 / 5, 12);
    expect(steps!.accuracy_after.rate).toBeCloseTo(2 / 5, 12);
    // full: r1, r2 fixed; r3, r4 right→right; r5 wrong→wrong; r6 regressed.
    expect(full).toMatchObject({ condition: 'full', retried: 7, failed: 0, no_reference: 1, scored: 6, fixed: 2, regressed: 1, right_right: 2, wrong_wrong: 1, net: 1 });
    expect(full!.fix_rate.rate).toBeCloseTo(2 / 3, 12);
    expect(full!.regression_rate.rate).toBeCloseTo(1 / 3, 12);
    expect(full!.accuracy_after.rate).toBeCloseTo(4 / 6, 12);
    for (const t of [steps!, full!]) for (const r of [t.fix_rate, t.regression_rate]) expect(r.lo <= r.rate && r.rate <= r.hi).toBe(true);
  });

  it('any-of attempts: r2 fixed by its second steps attempt', () => {
    const [steps] = transitionTable(repairOutcomes(handRows(), 'any').outcomes);
    expect(steps).toMatchObject({ fixed: 2, wrong_wrong: 1, regressed: 1, right_right: 1, net: 1 });
  });

  it('corpus accuracy: unretried records keep their answers, failed retries too', () => {
    const { outcomes } = repairOutcomes(handRows(), 'first');
    const c = corpusAccuracy(HAND_ORIGINALS, outcomes, { resamples: 200, seed: 1 });
    // With a reference: r1-r6, r8, r9, r10 (r7, r11 have none). Right before: r3 r4 r6 r8 r10.
    expect(c).toMatchObject({ records: 9, problems: 5, no_reference: 2, conflicts: 1 });
    expect(c.before.value).toBeCloseTo(5 / 9, 12);
    const steps = c.gates.find((g) => g.condition === 'steps')!;
    const full = c.gates.find((g) => g.condition === 'full')!;
    // steps: +r1 −r3, r6 failed keeps R: 5/9; full: +r1 +r2 −r6: 6/9.
    expect(steps).toMatchObject({ gate: 'any_defect', retried: 5 });
    expect(steps.after.value).toBeCloseTo(5 / 9, 12);
    expect(steps.delta.value).toBeCloseTo(0, 12);
    expect(full.retried).toBe(6);
    expect(full.retried_share).toBeCloseTo(6 / 9, 12);
    expect(full.after.value).toBeCloseTo(6 / 9, 12);
    expect(full.delta.value).toBeCloseTo(1 / 9, 12);
    for (const e of [c.before, steps.after, full.after, full.delta]) expect(e.lo <= e.value && e.value <= e.hi).toBe(true);
  });

  it('paired full − steps on the records retried under both', () => {
    const [cmp] = compareConditions(repairOutcomes(handRows(), 'first').outcomes, 'full', 'steps', { resamples: 500, seed: 3 });
    // r1-r5 (r6's steps retry failed, r7 has no reference). Only full right: r2, r3; only steps: none.
    expect(cmp).toMatchObject({ gate: 'any_defect', a: 'full', b: 'steps', items: 5, units: 3, units_a_better: 2, units_b_better: 0, units_tied: 1 });
    expect(cmp!.mcnemar).toMatchObject({ onlyA: 2, onlyB: 0 });
    expect(cmp!.mcnemar.p).toBeCloseTo(0.5, 12); // 2 · P(X ≤ 0), X ~ Bin(2, ½)
    expect(cmp!.mcnemar.mid_p).toBeCloseTo(0.25, 12);
    expect(cmp!.accuracy_a).toBeCloseTo(4 / 5, 12);
    expect(cmp!.accuracy_b).toBeCloseTo(2 / 5, 12);
    expect(cmp!.accuracy_before).toBeCloseTo(2 / 5, 12);
    expect(cmp!.pooled_diff.value).toBeCloseTo(2 / 5, 12);
    // per problem: p1 1 − ½, p2 1 − ½, p3 0 − 0
    expect(cmp!.unit_mean_diff.value).toBeCloseTo(1 / 3, 12);
    // Every resample of three problems has a difference in [0, ½]; never below 0.
    expect(cmp!.pooled_diff.lo).toBeGreaterThanOrEqual(0);
    expect(cmp!.pooled_diff.hi).toBeLessThanOrEqual(0.5 + 1e-12);
  });

  it('the report: notes for the duplicate and the conflict, Markdown tables, seeded bootstrap', () => {
    const opts = { ...DEFAULT_REPAIR_ANALYSIS, resamples: 300, seed: 5 };
    const a = analyzeRepairs(handRows(), HAND_ORIGINALS, opts);
    expect(a.notes.join('\n')).toMatch(/1 repairs row\(s\) repeat/);
    expect(a.notes.join('\n')).toMatch(/1 record\(s\) have another original correctness/);
    expect(analyzeRepairs(handRows(), HAND_ORIGINALS, opts)).toEqual(a); // seeded: the same intervals again
    const md = renderRepairMarkdown(a);
    expect(md).toContain('## Transitions');
    expect(md).toMatch(/\| any_defect \| full +\| 7 +\| 6 +\| 2 +\| 1 +\| 2 +\| 1 +\| 1 +\|/);
    const without = analyzeRepairs(handRows(), null, opts);
    expect(without.corpus).toBeNull();
    expect(renderRepairMarkdown(without)).toContain('give --originals');
  });
});

describe('eval repair edge cases', () => {
  it('no rows and no corpus: empty tables, undefined estimates without intervals', () => {
    const a = analyzeRepairs([], [], { ...DEFAULT_REPAIR_ANALYSIS, resamples: 50 });
    expect(a.transitions).toEqual([]);
    expect(a.comparisons).toEqual([]);
    expect(a.corpus).toMatchObject({ records: 0, problems: 0, gates: [] });
    expect([a.corpus!.before.value, a.corpus!.before.lo, a.corpus!.before.hi].every(Number.isNaN)).toBe(true);
    expect(renderRepairMarkdown(a)).toContain('No gate has records retried under both conditions');
  });

  it('a condition with no originally wrong record has an undefined fix rate, not 0', () => {
    const rows = handRows().filter((r) => r.original_correct === true);
    const [steps] = transitionTable(repairOutcomes(rows, 'first').outcomes);
    expect(steps!.fixed + steps!.wrong_wrong).toBe(0);
    expect(Number.isNaN(steps!.fix_rate.rate)).toBe(true);
    expect(steps!.regression_rate.rate).toBeCloseTo(1 / 2, 12); // r3 broke, r4 held; r6 failed
  });
});

describe('a stricter gate on the same retries (--subgate)', () => {
  it('fatal: r1, r3 and r6 under any_defect/fatal; the others keep their answers', () => {
    const rows = handRows();
    const extra = subgateRows(rows, HAND_SEVERITY, 'fatal');
    expect(new Set(extra.map((r) => r.record_id))).toEqual(new Set(['r1', 'r3', 'r6']));
    expect(new Set(extra.map((r) => r.gate))).toEqual(new Set(['any_defect/fatal']));
    const a = analyzeRepairs([...rows, ...extra], HAND_ORIGINALS, { ...DEFAULT_REPAIR_ANALYSIS, resamples: 100 });
    const t = a.transitions.filter((x) => x.gate === 'any_defect/fatal');
    // steps: r1 fixed, r3 regressed, r6 failed; full: r1 fixed, r3 right→right, r6 regressed.
    expect(t.map((x) => [x.condition, x.retried, x.fixed, x.regressed, x.right_right, x.failed])).toEqual([['steps', 3, 1, 1, 0, 1], ['full', 3, 1, 1, 1, 0]]);
    const full = a.corpus!.gates.find((g) => g.gate === 'any_defect/fatal' && g.condition === 'full')!;
    expect(full.retried).toBe(3);
    expect(full.after.value).toBeCloseTo(5 / 9, 12); // +r1 −r6
    // major and above adds r2.
    expect(new Set(subgateRows(rows, HAND_SEVERITY, 'major').map((r) => r.record_id))).toEqual(new Set(['r1', 'r2', 'r3', 'r6']));
  });
});
