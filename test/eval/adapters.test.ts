import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBenchmark } from '../../src/eval/adapters/index.js';
import { mrBenTextSteps } from '../../src/eval/adapters/mr-ben.js';
import { MISSING_DATA_MESSAGE, sharedDataDir } from '../../src/eval/data.js';
import { goldOf, stepLabels } from '../../src/eval/gold.js';
import { buildGoldIndex } from '../../src/sim/gold.js';

let dir: string;
const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rj-adapters-'));
  for (const d of ['delta', 'h2v', 'mrben', 'bbm', 'prm']) mkdirSync(join(dir, d));
  writeFileSync(
    join(dir, 'delta', 'deltabench.jsonl'),
    jsonl([
      { id: 'd1', question: 'Q1', task_l1: 'math', sections: [{ content: 's1' }, { content: 's2' }, { content: 's3' }, { content: 's4' }], reason_error_section_numbers: [3], reason_unuseful_section_numbers: [1, 9] },
      { id: 'd2', question: 'Q2', task_l1: 'code', sections: [{ section: 'a' }, { section: 'b' }], error_section_numbers: [], idea_error_section_numbers: ['2'] },
      { id: 'd3', question: 'Q3', sections: [] },
    ]),
  );
  writeFileSync(
    join(dir, 'h2v', 'hard2verify.jsonl'),
    jsonl([
      { unique_id: 'h1', question: 'Prove it', model_response_by_step: ['a', 'b', 'c', 'd'], human_labels: [1, 1, 0, 1], human_labels_first_error_idx: 2 },
      { unique_id: 'h2', question: 'Prove that', model_response_by_step: ['a', 'b'], human_labels: [1, 1], human_labels_first_error_idx: -1 },
      { unique_id: 'h3', question: 'Bad', model_response_by_step: ['a', 'b'], human_labels: [1] },
    ]),
  );
  writeFileSync(
    join(dir, 'mrben', 'physics.json'),
    JSON.stringify({
      u1: [
        {
          Question_UUID: 'u1',
          Question: 'Which orbit?',
          Options: 'A: x\nB: y',
          Model_Solution_Steps: ['Step 1: think', '', 'Step 2: compute', 'Choice A: no', 'Step 3: done', 'Solution: Choice_B'],
          Model_Solution_Correctness: 'incorrect',
          Model_Solution_First_Error_Step: '2',
        },
        { Question_UUID: 'u1', Question: 'Which orbit?', Model_Solution_Steps: ['Step 1: fine', 'Step 2: fine'], Model_Solution_Correctness: 'correct', Model_Solution_First_Error_Step: 'N/A' },
        { Question_UUID: 'u1', Question: 'Which orbit?', Model_Solution_Steps: ['Step 1: x'], Model_Solution_Correctness: 'incorrect', Model_Solution_First_Error_Step: 'N/A' },
      ],
    }),
  );
  writeFileSync(
    join(dir, 'mrben', 'coding.json'),
    JSON.stringify({
      c1: [{ Question_UUID: 'c1', Question: 'Write f', Model_Solution_Steps: 'def f(x):\n\n    y = x + 1\n    return y\n', Model_Solution_Correctness: 'incorrect', Model_Solution_First_Error_Step: '    y = x + 1' }],
    }),
  );
  writeFileSync(
    join(dir, 'bbm', 'word_sorting.jsonl'),
    jsonl([
      { input: 'sort a b', steps: ['s1', 's2', 's3'], answer: 'a b', target: 'a b', mistake_index: null },
      { input: 'sort c d', steps: ['s1', 's2'], answer: 'd c', target: 'c d', mistake_index: 1 },
    ]),
  );
  const prm = (idx: string, cls: string, errs: number[]) => ({ idx, classification: cls, original_question: `oq ${idx}`, modified_question: `mq ${idx}`, original_process: ['o1', 'o2'], modified_process: ['m1', 'm2', 'm3'], modified_steps: errs, error_steps: errs, reason: '' });
  writeFileSync(join(dir, 'prm', 'prm_redundency.jsonl'), jsonl([prm('p0', 'redundency', [2, 5]), prm('p1', 'redundency', [3])]));
  writeFileSync(join(dir, 'prm', 'prm_multi.jsonl'), jsonl([prm('p0', 'multi_solutions', []), prm('p0', 'multi_solutions', [])]));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('adapters keep the benchmarks own step boundaries and labels', () => {
  it('DeltaBench: sections are steps, gold = error ∪ unuseful sections, either field naming', () => {
    const b = loadBenchmark('deltabench', join(dir, 'delta'));
    expect(b.records.map((r) => r.id)).toEqual(['deltabench/d1', 'deltabench/d2']);
    expect(b.skipped).toHaveLength(1);
    const [d1, d2] = b.records;
    expect(d1!.steps).toEqual(['s1', 's2', 's3', 's4']);
    expect(d1!.gold!.error_steps).toEqual([1, 3]);
    expect(goldOf(d1!, b.scope).raw_error_steps).toEqual([1, 3, 9]); // the protocol sees the listed sections
    expect(d2!.gold!.error_steps).toEqual([2]);
    expect(d2!.meta.split).toBe('code');
  });

  it('Hard2Verify: every step after the first error counts as wrong; bad rows are skipped', () => {
    const b = loadBenchmark('hard2verify', join(dir, 'h2v'));
    expect(b.records.map((r) => r.gold)).toEqual([
      { error_steps: [3, 4], first_error_step: 3 },
      { error_steps: [], first_error_step: null },
    ]);
    expect(b.skipped[0]!.reason).toContain('1 labels for 2 steps');
    expect(stepLabels(goldOf(b.records[0]!, b.scope), false)).toEqual([0, 0, 1, 1]);
  });

  it('MR-Ben: "Step N" items are the steps; code lines for coding; inconsistent items are skipped', () => {
    expect(mrBenTextSteps(['Intro', 'Step 1: a', 'Choice A: x', 'Step 2: b', 'Solution: B'])).toEqual(['Intro\nStep 1: a\nChoice A: x', 'Step 2: b\nSolution: B']);
    expect(mrBenTextSteps(['Step 1: a', 'Step 3: b'])).toHaveProperty('error');
    const b = loadBenchmark('mr-ben', join(dir, 'mrben'));
    const byId = new Map(b.records.map((r) => [r.id, r]));
    const text = byId.get('mr-ben/physics/u1/0')!;
    expect(text.steps).toHaveLength(3);
    expect(text.steps![1]).toBe('Step 2: compute\nChoice A: no');
    expect(text.gold!.first_error_step).toBe(2);
    expect(text.problem).toContain('B: y');
    expect(byId.get('mr-ben/physics/u1/1')!.gold!.first_error_step).toBeNull();
    expect(b.skipped.map((s) => s.reason)).toEqual(['solution is marked incorrect but names no first error step']);
    const code = byId.get('mr-ben/coding/c1/0')!;
    expect(code.steps).toEqual(['def f(x):', '    y = x + 1', '    return y']);
    expect(code.gold!.first_error_step).toBe(2);
  });

  it('BIG-Bench Mistake: mistake_index is 0-based, null = clean', () => {
    const b = loadBenchmark('bigbench-mistake', join(dir, 'bbm'));
    expect(b.records.map((r) => [r.id, r.gold!.first_error_step, r.final_solution])).toEqual([
      ['bigbench-mistake/word_sorting/1', null, 'a b'],
      ['bigbench-mistake/word_sorting/2', 2, 'd c'],
    ]);
    expect(b.scope).toBe('first_error');
  });

  it('PRMBench: refs past the trace are no gold step, repeated keys keep the first, redundancy originals form the clean companion', () => {
    const b = loadBenchmark('prmbench', join(dir, 'prm'));
    expect(b.records.map((r) => r.id)).toEqual(['prmbench/multi_solutions_p0', 'prmbench/correct_p0', 'prmbench/redundency_p0', 'prmbench/correct_p1', 'prmbench/redundency_p1']);
    expect(b.skipped).toHaveLength(1);
    const red = b.records.find((r) => r.id === 'prmbench/redundency_p0')!;
    expect(red.gold!.error_steps).toEqual([2]);
    expect(goldOf(red, b.scope).raw_error_steps).toEqual([2, 5]);
    const companion = b.records.find((r) => r.id === 'prmbench/correct_p0')!;
    expect(companion.steps).toEqual(['o1', 'o2']);
    expect(goldOf(companion, b.scope).classification).toBe('correct');
    expect(loadBenchmark('prmbench', join(dir, 'prm'), { companion: false }).records).toHaveLength(3);
  });

  it('simulated jurors find the adapted gold again from the prompt', () => {
    const b = loadBenchmark('hard2verify', join(dir, 'h2v'));
    const index = buildGoldIndex(b.records, { mode: 'given' });
    expect(index.size).toBe(2);
    expect(index.skipped).toEqual([]);
  });
});

const shared = sharedDataDir();
describe.skipIf(!shared)(`adapters on the shared data${shared ? '' : ` (skipped: ${MISSING_DATA_MESSAGE})`}`, () => {
  it.each([
    ['processbench', 3400, 2221, 0],
    ['prmbench', 6969, 6035, 5],
    ['bigbench-mistake', 2186, 1708, 0],
    ['mr-ben', 4507, 2710, 27],
  ] as const)('%s: %i records, %i with gold errors, %i skipped', (name, records, erroneous, skipped) => {
    const b = loadBenchmark(name, join(shared!, name));
    expect(b.records).toHaveLength(records);
    expect(new Set(b.records.map((r) => r.id)).size).toBe(records);
    expect(b.records.filter((r) => goldOf(r, b.scope).error_steps.length > 0)).toHaveLength(erroneous);
    expect(b.skipped).toHaveLength(skipped);
    for (const r of b.records) {
      const g = goldOf(r, b.scope);
      expect(g.error_steps.every((s) => s >= 1 && s <= g.n_steps)).toBe(true);
    }
  });
});
