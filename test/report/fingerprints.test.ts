import { describe, expect, it } from 'vitest';
import { computeFingerprints, correctnessOf, type DefectIn, type TraceIn } from '../../src/report/fingerprints.js';
import { loadTaxonomy } from '../../src/taxonomy/schema.js';

const taxonomy = loadTaxonomy();
const meta = (o: Record<string, unknown>) => JSON.stringify(o);

const traces: TraceIn[] = [
  { key: 't1', n_steps: 5, error: null, meta: meta({ generator: 'A', final_answer_correct: true }) },
  { key: 't2', n_steps: 4, error: null, meta: meta({ generator: 'A', final_answer_correct: false }) },
  { key: 't3', n_steps: 9, error: 'too few jurors', meta: meta({ generator: 'A', final_answer_correct: false }) },
  { key: 't4', n_steps: 3, error: null, meta: meta({ generator: 'B' }) },
  { key: 't5', n_steps: 2, error: null, meta: null },
];
const defects: DefectIn[] = [
  { trace: 't2', statement_refs: [1, 2], impact: 'fatal', category_id: 'computation', leaf_id: 'computation.sign' },
  { trace: 't2', statement_refs: [2], impact: 'minor', category_id: 'computation', leaf_id: 'computation.numerical_calculation' },
  { trace: 't2', statement_refs: [2, 3], impact: 'major', category_id: 'logic', leaf_id: 'logic.false_math_fact' },
  { trace: 't2', statement_refs: [4], impact: 'neutral', category_id: null, leaf_id: null },
  { trace: 't1', statement_refs: [3, 3], impact: 'major', category_id: 'computation', leaf_id: 'computation.sign' },
  { trace: 't4', statement_refs: [1], impact: 'minor', category_id: 'mystery', leaf_id: 'mystery.leaf' },
  { trace: 'gone', statement_refs: [1], impact: 'fatal', category_id: null, leaf_id: null },
];

describe('fingerprints', () => {
  const r = computeFingerprints(traces, defects, { taxonomy, generatorKey: 'generator', correctKey: 'final_answer_correct' });
  const a = r.tables.fp_models.find((m) => m.generator === 'A')!;
  const steps = (g: string, cat: string) => Object.fromEntries(r.tables.fp_category_steps.filter((x) => x.generator === g && x.category_id === cat).map((x) => [x.severity, x.flagged_steps]));

  it('per generator: traces without a verdict are left out; each flagged step counts once at its highest severity', () => {
    expect(r.tables.fp_models.map((m) => m.generator)).toEqual(['(unknown)', 'A', 'B']);
    expect(a).toEqual({
      generator: 'A', traces: 2, traces_without_verdict: 1, steps: 9, defects: 5, fatal_defects: 1, unassigned_defects: 1,
      flagged_steps: 5, flagged_fatal: 2, flagged_major: 2, flagged_minor: 0, flagged_neutral: 1,
      traces_with_correctness: 2, correct_traces: 1,
    });
    expect(r.orphanDefects).toBe(1);
  });

  it('within a category a step counts once at its highest severity; across categories it counts in each', () => {
    expect(steps('A', 'computation')).toEqual({ fatal: 2, major: 1, minor: 0, neutral: 0 });
    expect(steps('A', 'logic')).toEqual({ fatal: 0, major: 2, minor: 0, neutral: 0 });
    expect(steps('A', 'unassigned')).toEqual({ fatal: 0, major: 0, minor: 0, neutral: 1 });
    expect(steps('A', 'geometry')).toEqual({ fatal: 0, major: 0, minor: 0, neutral: 0 }); // every category is listed
    expect(steps('B', 'unassigned')).toEqual({}); // pseudo categories only where they occur
  });

  it('leaves: defects and % of the generator\'s defects, sorted by count within category', () => {
    const leaves = r.tables.fp_leaves.filter((l) => l.generator === 'A');
    expect(leaves.map((l) => [l.leaf_id, l.defects, l.pct_of_defects, l.fatal_defects, l.flagged_steps, l.steps_fatal, l.steps_major, l.steps_minor])).toEqual([
      ['computation.sign', 2, 40, 1, 3, 2, 1, 0],
      ['computation.numerical_calculation', 1, 20, 0, 1, 0, 0, 1],
      ['logic.false_math_fact', 1, 20, 0, 2, 0, 2, 0],
      ['unassigned', 1, 20, 0, 1, 0, 0, 0],
    ]);
    expect(leaves[0]!.leaf_name).toBe('Sign error');
    expect(leaves[0]!.category_name).toBe('Computation & algebraic manipulation');
  });

  it('unknown leaf ids are kept under their own id and counted', () => {
    expect(r.unknownLeaves).toBe(1);
    expect(r.tables.fp_leaves.find((l) => l.generator === 'B')).toMatchObject({ leaf_id: 'mystery.leaf', leaf_name: 'mystery.leaf', category_id: 'mystery' });
    expect(steps('B', 'mystery')).toEqual({ fatal: 0, major: 0, minor: 1, neutral: 0 });
  });

  it('defects per trace split by final-answer correctness; unknown correctness is its own row', () => {
    expect(r.tables.fp_correctness.filter((c) => c.generator === 'A')).toEqual([
      { generator: 'A', final_answer_correct: true, traces: 1, defects: 1, fatal_defects: 0, defects_per_trace: 1, fatal_per_trace: 0 },
      { generator: 'A', final_answer_correct: false, traces: 1, defects: 4, fatal_defects: 1, defects_per_trace: 4, fatal_per_trace: 1 },
    ]);
    expect(r.tables.fp_correctness.filter((c) => c.generator === 'B')).toEqual([{ generator: 'B', final_answer_correct: null, traces: 1, defects: 1, fatal_defects: 0, defects_per_trace: 1, fatal_per_trace: 0 }]);
    expect(correctnessOf({ c: 'false' }, 'c')).toBe(false);
    expect(correctnessOf({ c: 1 }, 'c')).toBeNull();
  });
});
