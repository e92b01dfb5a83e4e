import { describe, expect, it } from 'vitest';
import { FilterPolicy } from '../../schemas/config.js';
import type { Defect } from '../../schemas/defect.js';
import { DecisionRow, DefectRow, StepRow, VerdictDetailRow, VerdictRow } from '../../schemas/outputs.js';
import type { Verdict } from '../../schemas/verdict.js';
import { decide } from '../../src/derive/decision.js';
import { criticalPathMs, deriveRows } from '../../src/derive/rows.js';
import { stepRows } from '../../src/derive/steps.js';

const d = (refs: number[], impact: Defect['impact']): Defect => ({ statement_refs: refs, what_went_wrong: 'w', impact, evidence: 'e' });

function verdict(over: Partial<Verdict> = {}): Verdict {
  return {
    record_id: 'r', mode: 'consolidation', n_steps: 5, defects: [], confidence: 1, dissenting_views: [], termination_reason: 'not_applicable', rounds: 0,
    phase1_judgements: [], transcript: [], jurors_total: 3, jurors_ok: 3, dropped_refs: 0, degraded: false, degraded_reason: null, error: null,
    usage: [], prompt_hash: 'p', config_hash: 'c', ...over,
  };
}
const policy = FilterPolicy.parse({});

describe('step labels', () => {
  it('takes the highest severity per step and labels at the threshold', () => {
    const rows = stepRows('r', 4, [d([1, 2], 'minor'), d([2], 'fatal'), d([4], 'neutral')], 'minor');
    expect(rows.map((r) => [r.max_impact, r.label])).toEqual([['minor', true], ['fatal', true], [null, false], ['neutral', false]]);
    expect(rows[1]!.defect_ids).toEqual(['r#d0', 'r#d1']);
    expect(stepRows('r', 4, [d([1], 'minor')], 'major')[0]!.label).toBe(false);
  });
});

describe('filter decisions', () => {
  it('default policy: no verdict -> review, fatal -> drop, degraded -> review, disagreement -> review, else keep', () => {
    const s = (v: Verdict) => decide(v, stepRows('r', v.n_steps, v.defects, 'minor'), policy);
    expect(s(verdict({ error: 'too few jurors', degraded: true })).decision).toBe('review');
    expect(s(verdict({ defects: [d([2], 'fatal')], degraded: true }))).toMatchObject({ decision: 'drop', reason: 'fatal_defect: a fatal defect at STEP-2', n_fatal: 1, fatal_step_rate: 0.2 });
    expect(s(verdict({ defects: [d([2], 'major')], degraded: true, degraded_reason: 'x' })).reason).toBe('degraded_verdict: degraded: x');
    expect(s(verdict({ defects: [d([2], 'major')], confidence: 0.2 })).decision).toBe('review');
    expect(s(verdict({ defects: [d([2], 'major')] }))).toMatchObject({ decision: 'keep', reason: 'no rule matched', n_major: 1, flagged_step_rate: 0.2 });
  });

  it('rate rules and rule order', () => {
    const p = FilterPolicy.parse({ rules: [{ fatal_step_rate_above: 0.3, decision: 'drop' }, { flagged_step_rate_above: 0.5, decision: 'review', name: 'busy' }, { has_dissent: true, decision: 'review' }], default: 'keep' });
    const v1 = verdict({ defects: [d([1, 2], 'fatal')] });
    expect(decide(v1, stepRows('r', 5, v1.defects, 'minor'), p)).toMatchObject({ decision: 'drop', reason: 'rule 1: fatal step rate 0.400 > 0.3' });
    const v2 = verdict({ defects: [d([1, 2, 3], 'minor')] });
    expect(decide(v2, stepRows('r', 5, v2.defects, 'minor'), p).reason).toBe('busy: flagged step rate 0.600 > 0.5');
    const v3 = verdict({ dissenting_views: ['x'] });
    expect(decide(v3, stepRows('r', 5, [], 'minor'), p).decision).toBe('review');
  });

  it('a rule must have exactly one condition', () => {
    expect(() => FilterPolicy.parse({ rules: [{ decision: 'drop' }] })).toThrow(/exactly one condition/);
    expect(() => FilterPolicy.parse({ rules: [{ decision: 'drop', degraded: true, min_impact: 'fatal' }] })).toThrow(/exactly one condition/);
  });
});

describe('shard rows', () => {
  it('are valid against the shard schemas and sum usage', () => {
    const u = (phase: 'phase1' | 'consolidation', latency: number) => ({ phase, participant: 'x', model: 'm', endpoint: 'e', tokens_in: 10, tokens_out: 2, cost_usd: 0.5, latency_ms: latency, attempts: 1, outcome: 'ok' as const });
    const v = verdict({ defects: [d([3], 'major')], usage: [u('phase1', 100), u('phase1', 300), u('phase1', 200), u('consolidation', 50)] });
    expect(criticalPathMs(v)).toBe(350);
    const rows = deriveRows(v, { source: 'file', unit: 'a.jsonl', offset: 7 }, { generator: 'g' }, { severity_threshold: 'minor', filter: policy });
    VerdictRow.parse(rows.verdict);
    rows.defects.forEach((r) => DefectRow.parse(r));
    rows.steps.forEach((r) => StepRow.parse(r));
    DecisionRow.parse(rows.decision);
    expect(rows.verdict).toMatchObject({ tokens_in: 40, tokens_out: 8, cost_usd: 2, latency_ms: 350, max_impact: 'major', n_defects: 1, source_offset: 7, meta: '{"generator":"g"}' });
    expect(rows.defects[0]).toMatchObject({ defect_id: 'r#d0', voters: [], vote_count: null, leaf_id: null });
    expect(rows.steps).toHaveLength(5);
  });
});

describe('verdict_details rows', () => {
  const judged = verdict({
    mode: 'deliberation',
    termination_reason: 'universal_agreement',
    rounds: 2,
    dissenting_views: ['jury-1 (minor, STEP-4): off by one'],
    phase1_judgements: [
      { juror_id: 'j0', model: 'm-a', ok: true, defects: [d([2], 'major'), { ...d([4], 'minor'), correct_value: '7' }], dropped_refs: 1 },
      { juror_id: 'j1', model: 'm-b', ok: false, defects: [], dropped_refs: 0, error: 'timeout' },
    ],
    transcript: [
      { turn: 0, round: 1, speaker: 'j0', instruction: 'defend STEP-2', message: 'STEP-2 divides by zero' },
      { turn: 1, round: 2, speaker: 'j2', message: 'agreed' },
    ],
  });
  const at = { source: 'file', unit: 'a.jsonl', offset: 0 };

  it('carries Phase 1, the transcript and the termination facts of the verdict', () => {
    const rows = deriveRows(judged, at, {}, { severity_threshold: 'minor', filter: policy });
    const detail = VerdictDetailRow.parse(rows.detail);
    expect(detail).toMatchObject({ mode: 'deliberation', termination_reason: 'universal_agreement', rounds: 2, turns: 2, last_speaker: 'j2', dissenting_views: judged.dissenting_views });
    expect(detail.phase1).toEqual([
      { seat_id: 'j0', model: 'm-a', status: 'ok', error: null, dropped_refs: 1, defects: [
        { statement_refs: [2], impact: 'major', what_went_wrong: 'w', evidence: 'e', correct_value: null },
        { statement_refs: [4], impact: 'minor', what_went_wrong: 'w', evidence: 'e', correct_value: '7' },
      ] },
      { seat_id: 'j1', model: 'm-b', status: 'failed', error: 'timeout', dropped_refs: 0, defects: [] },
    ]);
    expect(detail.transcript).toEqual([
      { turn: 0, round: 1, speaker: 'j0', instruction: 'defend STEP-2', content: 'STEP-2 divides by zero' },
      { turn: 1, round: 2, speaker: 'j2', instruction: null, content: 'agreed' },
    ]);
  });

  it('auto: deliberation only; on: every mode; off: never', () => {
    const of = (over: Partial<Verdict>, setting?: 'auto' | 'on' | 'off') =>
      deriveRows({ ...judged, ...over }, at, {}, { severity_threshold: 'minor', filter: policy, ...(setting ? { verdict_details: setting } : {}) }).detail;
    expect(of({})).toBeDefined();
    expect(of({}, 'off')).toBeUndefined();
    expect(of({ mode: 'majority' })).toBeUndefined();
    expect(of({ mode: 'majority' }, 'auto')).toBeUndefined();
    expect(of({ mode: 'single' }, 'on')).toMatchObject({ mode: 'single' });
  });
});
