import { describe, expect, it } from 'vitest';
import { FilterPolicy } from '../../schemas/config.js';
import type { DefectRow, StepRow, VerdictRow } from '../../schemas/outputs.js';
import { decideRows, totalCost } from '../../src/derive/rows.js';

type V = Pick<VerdictRow, 'record_id' | 'error' | 'degraded' | 'degraded_reason' | 'confidence' | 'n_dissent'>;
const verdict = (over: Partial<V> = {}): VerdictRow => ({ record_id: 'r', error: null, degraded: false, degraded_reason: null, confidence: 1, n_dissent: 0, ...over }) as VerdictRow;
const defect = (i: number, over: Partial<DefectRow>): DefectRow => ({
  record_id: 'r', defect_id: `r#d${i}`, statement_refs: [i + 1], impact: 'minor', what_went_wrong: 'w', evidence: 'e', correct_value: null,
  vote_count: null, voters: [], category_id: null, leaf_id: null, taxonomy_status: null, ...over,
});
const steps = (n: number, flagged: number[] = []): StepRow[] => Array.from({ length: n }, (_, i) => ({ record_id: 'r', step_index: i + 1, max_impact: flagged.includes(i + 1) ? 'minor' : null, label: flagged.includes(i + 1), defect_ids: [] }));
const decideWith = (rules: unknown[], v: VerdictRow, d: DefectRow[], s: StepRow[] = steps(4)) => decideRows({ verdict: v, defects: d, steps: s }, FilterPolicy.parse({ rules, default: 'keep' }));

describe('filter rules over rows', () => {
  it('test taxonomy categories and leaves; unassigned defects match none', () => {
    const rules = [{ name: 'arith', category: ['computation'], decision: 'drop' }, { name: 'leafy', leaf: ['logic.faulty_inference'], decision: 'review' }];
    expect(decideWith(rules, verdict(), [defect(0, { category_id: 'computation', leaf_id: 'computation.misused_value' })])).toMatchObject({ decision: 'drop', reason: 'arith: a defect of category computation at STEP-1' });
    expect(decideWith(rules, verdict(), [defect(0, { category_id: 'logic', leaf_id: 'logic.faulty_inference' })])).toMatchObject({ decision: 'review', reason: 'leafy: a defect of leaf logic.faulty_inference at STEP-1' });
    expect(decideWith(rules, verdict(), [defect(0, { taxonomy_status: 'unassigned:omitted' })]).decision).toBe('keep');
  });

  it('test vote counts and dissent', () => {
    const rules = [{ name: 'weak', votes_below: 2, decision: 'review' }, { name: 'split', dissent_at_least: 2, decision: 'drop' }, { has_dissent: true, decision: 'review' }];
    expect(decideWith(rules, verdict(), [defect(0, { vote_count: 1 })]).reason).toBe('weak: a defect with 1 vote(s) < 2 at STEP-1');
    expect(decideWith(rules, verdict(), [defect(0, { vote_count: null })]).decision).toBe('keep'); // a mode without votes
    expect(decideWith(rules, verdict({ n_dissent: 3 }), []).reason).toBe('split: 3 dissenting finding(s) >= 2');
    expect(decideWith(rules, verdict({ n_dissent: 1 }), []).reason).toBe('rule 3: 1 dissenting finding(s)');
  });

  it('`all` holds only when every condition does, and names each reason', () => {
    const rules = [{ name: 'weak_arith', all: [{ category: ['computation'] }, { votes_below: 3 }, { flagged_step_rate_above: 0.3 }], decision: 'drop' }];
    const d = [defect(0, { category_id: 'computation', vote_count: 2 })];
    expect(decideWith(rules, verdict(), d, steps(4, [1, 2]))).toMatchObject({ decision: 'drop', reason: 'weak_arith: a defect of category computation at STEP-1 and a defect with 2 vote(s) < 3 at STEP-1 and flagged step rate 0.500 > 0.3' });
    expect(decideWith(rules, verdict(), d, steps(4, [1])).decision).toBe('keep'); // one of three fails
    expect(decideWith(rules, verdict(), [defect(0, { category_id: 'computation', vote_count: 3 })], steps(4, [1, 2])).decision).toBe('keep');
  });

  it('schema: one condition or `all`, never both, never none; each `all` item one condition; the old form stays valid', () => {
    expect(FilterPolicy.parse({ rules: [{ min_impact: 'fatal', decision: 'drop' }] }).rules[0]).toEqual({ min_impact: 'fatal', decision: 'drop' });
    expect(() => FilterPolicy.parse({ rules: [{ decision: 'drop', all: [] }] })).toThrow();
    expect(() => FilterPolicy.parse({ rules: [{ decision: 'drop', degraded: true, all: [{ error: true }] }] })).toThrow(/exactly one condition.*degraded, all/);
    expect(() => FilterPolicy.parse({ rules: [{ decision: 'drop', all: [{ error: true, degraded: true }] }] })).toThrow(/exactly one key, found error, degraded/);
    expect(() => FilterPolicy.parse({ rules: [{ decision: 'drop', all: [{ decision: 'keep' }] }] })).toThrow(/Unrecognized key/);
    expect(() => FilterPolicy.parse({ rules: [{ decision: 'drop', category: [] }] })).toThrow();
  });
});

describe('totalCost', () => {
  it('is null as soon as one call is unpriced, else the sum', () => {
    expect(totalCost([{ cost_usd: 0.25 }, { cost_usd: 0.5 }])).toBe(0.75);
    expect(totalCost([{ cost_usd: 0.25 }, { cost_usd: null }])).toBeNull();
    expect(totalCost([])).toBe(0);
  });
});
