import { describe, expect, it } from 'vitest';
import type { Defect } from '../../schemas/defect.js';
import { Verdict } from '../../schemas/verdict.js';
import { ladderSystems } from '../../src/eval/ladder.js';
import { metricsFromConfusion, recordConfusion } from '../../src/eval/metrics/step.js';
import { defectsWith, GROUNDED_RUNG_NAMES, pairedDeltas, passRungs, PASS_RUNG_NAMES } from '../../src/eval/passes.js';
import { groundConsensus } from '../../src/jury/grounding/index.js';
import { predictionFromDefects } from '../../src/eval/predictions.js';
import { DEFAULT_SCORE_OPTIONS } from '../../src/eval/score.js';
import type { StepGold } from '../../src/eval/types.js';

const d = (step: number, votes = 1): Defect => ({ statement_refs: [step], what_went_wrong: `w${step}`, impact: 'major', evidence: '', vote_count: votes, voters: [] });

function verdict(id: string, extra: Partial<Verdict>): Verdict {
  return Verdict.parse({
    record_id: id, mode: 'consolidation', n_steps: 6, defects: [], confidence: 1, dissenting_views: [], termination_reason: 'not_applicable', rounds: 0,
    phase1_judgements: [], transcript: [], jurors_total: 3, jurors_ok: 3, dropped_refs: 0, degraded: false, degraded_reason: null, error: null, usage: [], prompt_hash: 'p', config_hash: 'c', ...extra,
  });
}

// Consensus was steps 1, 2, 3; removal dropped 2; the arbiter rejected 3 and reinstated dissent on 5.
const v = verdict('r1', {
  defects: [d(1, 3), d(5)],
  dropped_negatives: [{ defect: d(2, 2), reason: 'not in the step' }],
  negative_adjudications: [
    { defect: d(3), origin: 'split_vote', ruling: 'rejected', rationale: '' },
    { defect: d(2, 2), origin: 'split_vote', ruling: 'upheld', rationale: '' },
    { defect: d(5), origin: 'dissent', ruling: 'upheld', rationale: '' },
    { defect: d(6), origin: 'dissent', ruling: 'rejected', rationale: '' },
  ],
});
const steps = (ds: Defect[]) => ds.map((x) => x.statement_refs[0]).sort();

describe('verification pass rungs', () => {
  it('reads back the consensus and each pass alone from one verdict', () => {
    expect(steps(defectsWith(v, 'none'))).toEqual([1, 2, 3]);
    expect(steps(defectsWith(v, 'removal'))).toEqual([1, 3]);
    expect(steps(defectsWith(v, 'arbiter'))).toEqual([1, 2, 5]);
  });

  it('the ladder gains the rungs only for verdicts that ran a pass, and only one rung for one pass', () => {
    expect(ladderSystems([verdict('r0', { defects: [d(1)] })]).some((s) => s.kind === 'pass')).toBe(false);
    expect(ladderSystems([v]).filter((s) => s.kind === 'pass').map((s) => s.name)).toEqual([PASS_RUNG_NAMES.none, PASS_RUNG_NAMES.removal, PASS_RUNG_NAMES.arbiter]);
    expect(passRungs([verdict('r2', { defects: [d(1)], dropped_negatives: [] })]).map((s) => s.name)).toEqual([PASS_RUNG_NAMES.none]);
  });

  it('paired deltas: point estimates are the differences of the pooled metrics, intervals are paired', () => {
    // 40 records of 6 steps, error at step 1; the base flags steps 1 and 2, the rung only step 1 on half the records.
    const golds: StepGold[] = Array.from({ length: 40 }, (_, i) => ({ record_id: `g${i}`, split: 's', n_steps: 6, error_steps: [1], first_error: 1, scope: 'all_steps', classification: null, raw_error_steps: [1] }));
    const pred = (flag: number[]) => (g: StepGold) => [g.record_id, predictionFromDefects(g.record_id, 6, flag.map((s) => d(s)), false)] as const;
    const base = { name: 'base', predictions: new Map(golds.map(pred([1, 2]))) };
    const rung = { name: 'rung', predictions: new Map(golds.map((g, i) => (i % 2 ? pred([1])(g) : pred([1, 2])(g)))) };
    const same = { name: 'same', predictions: base.predictions };
    const opts = { ...DEFAULT_SCORE_OPTIONS, resamples: 500 };
    const [r, s] = pairedDeltas(golds, base, [rung, same], opts);
    const pooled = (p: typeof base) => metricsFromConfusion(golds.map((g) => recordConfusion(g, p.predictions.get(g.record_id)!, opts)!).reduce((a, c) => ({ tp: a.tp + c.tp, fp: a.fp + c.fp, tn: a.tn + c.tn, fn: a.fn + c.fn })));
    expect(r!.precision.value).toBeCloseTo(pooled(rung).precision - pooled(base).precision, 12);
    expect(r!.recall.value).toBe(0);
    expect(r!.precision.lo!).toBeGreaterThan(0);
    expect(r!.precision.lo!).toBeLessThanOrEqual(r!.precision.value!);
    // The same system against itself: zero, with a zero-width interval (the resamples are shared).
    expect(s!.balanced_f1).toEqual({ value: 0, lo: 0, hi: 0 });
  });
});

describe('the grounding rung', () => {
  // Phase 2's consensus: one defect grounded at step 2, one citing step 1 whose quote sits in step 3, one invented (step 4).
  const trace = ['We have 5 apples and buy 7 more.', 'That gives 5 + 7 = 13 apples.', 'So the answer is 13 apples.', 'Done.', 'Check: fine.', 'End.'];
  const consensus: Defect[] = [
    { ...d(2, 2), evidence: "[STEP-2] '5 + 7 = 13 apples'", impact: 'fatal' },
    { ...d(1), evidence: "[STEP-3] 'the answer is 13 apples'", impact: 'minor' },
    { ...d(4), evidence: "[STEP-4] 'we multiply the eleven crates by nine'", impact: 'major' },
  ];
  const grounded = groundConsensus({ policy: 'drop', max_edit_ratio: 0.2, min_fuzzy_tokens: 4, check_voters: false }, consensus, trace, []);
  const gv = (extra: Partial<Verdict> = {}) => verdict('g1', { defects: grounded.defects, grounding: grounded.outcome, ...extra });
  const impacts = (v: Verdict, r: Parameters<typeof defectsWith>[1]) => [...predictionFromDefects(v.record_id, v.n_steps, defectsWith(v, r), false).impacts].sort();

  it('reads the consensus before grounding back from its checks: a relocated defect at its cited step, a dropped one put back', () => {
    expect(grounded.defects.map((x) => x.statement_refs)).toEqual([[2], [3]]);
    expect(impacts(gv(), 'ungrounded')).toEqual([[1, 'minor'], [2, 'fatal'], [4, 'major']]);
    expect(impacts(gv(), 'none')).toEqual([[2, 'fatal'], [3, 'minor']]);
  });

  it('grounding alone is one rung before the final verdict; with both passes the rungs name grounding', () => {
    expect(passRungs([gv()]).map((s) => s.name)).toEqual([GROUNDED_RUNG_NAMES.ungrounded]);
    expect([...passRungs([gv()])[0]!.predictions.get('g1')!.impacts.keys()].sort()).toEqual([1, 2, 4]);
    const both = gv({ dropped_negatives: [{ defect: grounded.defects[1]!, reason: 'no' }], defects: [grounded.defects[0]!], negative_adjudications: [] });
    expect(passRungs([both]).map((s) => s.name)).toEqual([GROUNDED_RUNG_NAMES.ungrounded, GROUNDED_RUNG_NAMES.none, GROUNDED_RUNG_NAMES.removal, GROUNDED_RUNG_NAMES.arbiter]);
    expect(GROUNDED_RUNG_NAMES.ungrounded).toBe(PASS_RUNG_NAMES.none);
  });

  it('verdicts written before checks kept the severity give no grounding rung, and say nothing false', () => {
    const old = gv({ grounding: { ...grounded.outcome, checks: grounded.outcome.checks.map(({ impact: _, ...c }) => c) } });
    expect(passRungs([old])).toEqual([]);
    expect(passRungs([{ ...old, dropped_negatives: [] }]).map((s) => s.name)).toEqual([GROUNDED_RUNG_NAMES.none]);
  });
});
