import { describe, expect, it } from 'vitest';
import { JudgementOutput, parseStepRef } from '../../schemas/defect.js';
import { parseStructured } from '../../src/llm/json.js';
import { refsCheckedFor, refsProblem } from '../../src/jury/step-refs.js';

const finding = (refs: unknown[]) => ({ statement_refs: refs, what_went_wrong: 'wrong', impact: 'fatal', evidence: '' });
const reply = (...refs: unknown[][]) => JSON.stringify({ negatives: refs.map(finding) });

describe('step refs that do not point into the trace', () => {
  it('are named with the trace size', () => {
    expect(refsProblem(['STEP-1', 5], 5)).toBeNull();
    expect(refsProblem([999, 'STEP-2'], 5)).toBe('999 is not a step of this trace: it has 5 steps, STEP-1 to STEP-5');
    expect(refsProblem([-1, 'banana'], 5)).toBe('-1, "banana" are not a step of this trace: it has 5 steps, STEP-1 to STEP-5');
    expect(refsProblem([], 5)).toMatch(/cites no step/);
  });

  it('numbered from 0: not shifted, the reason says how steps are numbered', () => {
    expect(refsProblem([0, 3], 5)).toMatch(/^0 is not a step of this trace: .*numbered from 1, not from 0/);
    expect(refsProblem(['STEP-0'], 5)).toMatch(/numbered from 1, not from 0/);
    expect(refsProblem(['STEP-10'], 5)).not.toMatch(/from 0/);
  });

  it('a bare "-1" is not read as STEP-1', () => {
    expect(parseStepRef('-1')).toBeNull();
    expect(parseStepRef('STEP-1')).toBe(1);
    expect(parseStepRef('step_2')).toBe(2);
    expect(parseStepRef('[STEP-3]')).toBe(3);
  });

  it('make the reply fail its schema (so it is re-asked) instead of being dropped', () => {
    const schema = refsCheckedFor(JudgementOutput, (v) => v.negatives, 'negatives', 4);
    expect(parseStructured(reply(['STEP-2'], [4]), schema).ok).toBe(true);
    const bad = parseStructured(reply(['STEP-2'], [0, -1, 999]), schema);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error).toMatch(/0, -1, 999 are not a step of this trace: it has 4 steps[\s\S]*negatives\[1\]\.statement_refs/);
    // the unrefined schema still takes it: the check is per trace
    expect(parseStructured(reply([999]), JudgementOutput).ok).toBe(true);
  });

  it('one refined schema per step count, so per-schema caches keep working', () => {
    const a = refsCheckedFor(JudgementOutput, (v) => v.negatives, 'negatives', 7);
    expect(refsCheckedFor(JudgementOutput, (v) => v.negatives, 'negatives', 7)).toBe(a);
    expect(refsCheckedFor(JudgementOutput, (v) => v.negatives, 'negatives', 8)).not.toBe(a);
  });
});
