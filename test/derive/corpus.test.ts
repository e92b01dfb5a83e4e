import { describe, expect, it } from 'vitest';
import { corpusRow, ruleOfReason } from '../../src/derive/corpus.js';
import type { DerivedRows } from '../../src/derive/rows.js';

const defect = (category: string | null, i: number) => ({
  record_id: 'r1', defect_id: `r1#d${i}`, statement_refs: [1], impact: 'major' as const, what_went_wrong: 'w', evidence: 'e',
  correct_value: null, vote_count: null, voters: [], category_id: category, leaf_id: null, taxonomy_status: null,
});

describe('corpus curation columns', () => {
  it('names the rule that fired, or none when the default decided', () => {
    expect(ruleOfReason('no rule matched')).toBeNull();
    expect(ruleOfReason('rule 2: a fatal defect at STEP-3')).toBe('rule 2');
    expect(ruleOfReason('drop-fatal: a fatal defect at STEP-3')).toBe('drop-fatal');
  });

  it('summarises defects: counts, flagged steps, top three categories by count then id', () => {
    const rows = {
      verdict: { n_steps: 4 },
      defects: ['b', 'a', 'c', 'b', null, 'd', 'a', 'b'].map(defect),
      steps: [1, 2, 3, 4].map((i) => ({ record_id: 'r1', step_index: i, max_impact: null, label: i % 2 === 0, defect_ids: [] })),
      decision: { record_id: 'r1', decision: 'drop', reason: 'rule 1: x', n_neutral: 0, n_minor: 1, n_major: 7, n_fatal: 0, fatal_step_rate: 0, flagged_step_rate: 0.5 },
    } as unknown as DerivedRows;
    const row = corpusRow(rows, { source: 'file', unit: 'in.jsonl', offset: 9 });
    expect(row).toEqual({
      record_id: 'r1', decision: 'drop', rule: 'rule 1', reason: 'rule 1: x', n_steps: 4, flagged_steps: 2,
      n_neutral: 0, n_minor: 1, n_major: 7, n_fatal: 0, fatal_step_rate: 0, top_categories: ['b', 'a', 'c'],
      source: 'file', source_unit: 'in.jsonl', source_offset: 9,
    });
  });
});
