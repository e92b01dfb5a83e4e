import { describe, expect, it } from 'vitest';
import type { Defect } from '../../schemas/defect.js';
import type { Judgement } from '../../schemas/verdict.js';
import { agreement, dissent, majorityDefects, mergedUnion, unionDefects } from '../../src/jury/aggregate.js';
import { normalizeDefects } from '../../src/jury/normalize.js';

const d = (refs: number[], impact: Defect['impact'] = 'major', what = `flaw at ${refs.join(',')}`): Defect => ({ statement_refs: refs, what_went_wrong: what, impact, evidence: 'e' });
const j = (id: string, defects: Defect[], ok = true): Judgement => ({ juror_id: id, model: 'm', ok, defects, dropped_refs: 0 });

describe('normalizeDefects', () => {
  it('parses step ids, drops and counts out-of-range refs, drops ungrounded defects', () => {
    const n = normalizeDefects(
      [
        { statement_refs: ['STEP-2', '[STEP-1]', 'step 2', 7, 'STEP-9'], what_went_wrong: 'w', impact: 'major', evidence: 'e' },
        { statement_refs: ['STEP-0', 'nonsense'], what_went_wrong: 'w2', impact: 'minor', evidence: '' },
        { statement_refs: [3], what_went_wrong: 'w3', impact: 'fatal', evidence: 'e', correct_value: null },
      ],
      3,
    );
    expect(n.defects.map((x) => x.statement_refs)).toEqual([[1, 2], [3]]);
    expect(n.droppedRefs).toBe(4); // 7, STEP-9, STEP-0, nonsense
    expect(n.droppedDefects).toBe(1);
    expect(n.defects[1]).not.toHaveProperty('correct_value');
  });
});

describe('union', () => {
  it('is the bag of all successful jurors defects, attributed', () => {
    const u = unionDefects([j('a', [d([3])]), j('b', [d([1]), d([3])]), j('c', [d([5])], false)]);
    expect(u.map((x) => [x.statement_refs, x.voters])).toEqual([
      [[1], ['b']],
      [[3], ['a']],
      [[3], ['b']],
    ]);
  });
});

describe('majority (strictly more than half of the jurors that succeeded)', () => {
  it('3 jurors: a step needs 2 citations', () => {
    const m = majorityDefects([j('a', [d([2, 3])]), j('b', [d([3], 'fatal', 'specific fatal claim')]), j('c', [d([5])])]);
    expect(m.defects).toHaveLength(1);
    expect(m.defects[0]!.statement_refs).toEqual([3]);
    expect(m.defects[0]!.impact).toBe('fatal');
    expect(m.defects[0]!.voters).toEqual(['a', 'b']);
    expect(m.rejected.map((x) => x.statement_refs)).toEqual([[5]]);
  });

  it('threshold is computed from succeeded jurors: with one of three failed, 2 of 2 are needed', () => {
    const js = [j('a', [d([4])]), j('b', [d([6])]), j('c', [d([4]), d([6])], false)];
    expect(majorityDefects(js).defects).toHaveLength(0);
    const js2 = [j('a', [d([4])]), j('b', [d([4])]), j('c', [], false)];
    expect(majorityDefects(js2).defects[0]!.statement_refs).toEqual([4]);
  });

  it('4 jurors: 2 of 4 is not a majority, 3 is', () => {
    const two = [j('a', [d([1])]), j('b', [d([1])]), j('c', []), j('d', [])];
    expect(majorityDefects(two).defects).toHaveLength(0);
    const three = [j('a', [d([1])]), j('b', [d([1])]), j('c', [d([1])]), j('d', [])];
    expect(majorityDefects(three).defects).toHaveLength(1);
  });
});

describe('mergedUnion fallback, agreement and dissent', () => {
  it('merges defects citing the same steps and keeps the strongest description', () => {
    const m = mergedUnion([j('a', [d([2], 'minor', 'short')]), j('b', [d([2], 'major', 'a much longer and more specific description')]), j('c', [d([4])])]);
    expect(m).toHaveLength(2);
    expect(m[0]).toMatchObject({ statement_refs: [2], impact: 'major', vote_count: 2, voters: ['a', 'b'] });
  });

  it('agreement is the mean backing share, or the share of jurors that found nothing', () => {
    const js = [j('a', []), j('b', []), j('c', [d([1])])];
    expect(agreement([], js)).toBeCloseTo(2 / 3);
    expect(agreement([{ ...d([1]), vote_count: 3 }, { ...d([2]), vote_count: 0 }], js)).toBeCloseTo(0.5);
    expect(agreement([], [j('a', [], false)])).toBe(0);
  });

  it('dissent lists phase 1 defects whose steps did not make the verdict', () => {
    const out = dissent([d([2])], [j('a', [d([2]), d([7], 'minor', 'odd claim')])]);
    expect(out).toEqual(['a (minor, STEP-7): odd claim']);
  });
});
