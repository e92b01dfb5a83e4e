import { describe, expect, it } from 'vitest';
import type { Defect } from '../../schemas/defect.js';
import type { CallUsage } from '../../schemas/usage.js';
import type { Judgement, Verdict } from '../../schemas/verdict.js';
import { costTable } from '../../src/eval/cost.js';
import { knockout, type Phase2Runner, uniqueGoldCatches } from '../../src/eval/knockout.js';
import { ladderSystems } from '../../src/eval/ladder.js';
import { flaggedSteps } from '../../src/eval/predictions.js';
import { defect, gold } from './helpers.js';

const usage = (participant: string, phase: CallUsage['phase'], tokens: number, cost: number): CallUsage => ({
  phase,
  participant,
  model: `m-${participant}`,
  endpoint: 'e',
  tokens_in: tokens,
  tokens_out: tokens / 10,
  cost_usd: cost,
  latency_ms: 1,
  attempts: 1,
  outcome: 'ok',
});

function judgement(id: string, steps: number[] | null): Judgement {
  return { juror_id: id, model: `m-${id}`, ok: steps !== null, defects: steps ? steps.map((s) => defect([s])) : [], dropped_refs: 0 };
}

function verdict(id: string, n: number, js: Judgement[], final: Defect[]): Verdict {
  return {
    record_id: id,
    mode: 'consolidation',
    n_steps: n,
    defects: final,
    confidence: 1,
    dissenting_views: [],
    termination_reason: 'not_applicable',
    rounds: 0,
    phase1_judgements: js,
    transcript: [],
    jurors_total: js.length,
    jurors_ok: js.filter((j) => j.ok).length,
    dropped_refs: 0,
    degraded: false,
    degraded_reason: null,
    error: null,
    usage: [...js.map((j) => usage(j.juror_id, 'phase1', 1000, 0.01)), usage('consolidator', 'consolidation', 3000, 0.05)],
    prompt_hash: 'p',
    config_hash: 'c',
  };
}

// Gold: r1 errs at 2 and 4, r2 at 1; a catches everything, b catches 2 and 1, c catches 4 only.
const golds = new Map([
  ['r1', gold('r1', 5, { error_steps: [2, 4] }, 'all_steps')],
  ['r2', gold('r2', 3, { error_steps: [1] }, 'all_steps')],
]);
const verdicts = [
  verdict('r1', 5, [judgement('a', [2, 4, 5]), judgement('b', [2]), judgement('c', [4, 3])], [defect([2]), defect([4])]),
  verdict('r2', 3, [judgement('a', [1]), judgement('b', [1, 3]), judgement('c', null)], [defect([1])]),
];

describe('aggregation ladder over fixed Phase 1 judgements', () => {
  it('solo, union, majority and the final verdict', () => {
    const systems = new Map(ladderSystems(verdicts).map((s) => [s.name, s]));
    expect([...systems.keys()]).toEqual(['solo a', 'solo b', 'solo c', 'union', 'majority', 'jury (consolidation)']);
    const steps = (name: string, id: string) => [...flaggedSteps(systems.get(name)!.predictions.get(id)!, 'minor')].sort();
    expect(steps('union', 'r1')).toEqual([2, 3, 4, 5]);
    expect(steps('majority', 'r1')).toEqual([2, 4]); // two of three
    expect(steps('majority', 'r2')).toEqual([1]); // two of the two that succeeded
    expect(systems.get('solo c')!.predictions.get('r2')!.failed).toBe(true);
    expect(steps('jury (consolidation)', 'r1')).toEqual([2, 4]);
  });

  it('unique gold catches count steps no other current juror caught', () => {
    expect(uniqueGoldCatches(verdicts, golds, ['a', 'b', 'c'], { threshold: 'minor', propagate: false })).toEqual({ a: 0, b: 0, c: 0 });
    expect(uniqueGoldCatches(verdicts, golds, ['a', 'b'], { threshold: 'minor', propagate: false })).toEqual({ a: 1, b: 0 });
    expect(uniqueGoldCatches(verdicts, golds, ['b', 'c'], { threshold: 'minor', propagate: false })).toEqual({ b: 2, c: 1 });
  });

  it('knockout drops the fewest unique catches (later seat on ties) and re-runs only Phase 2', async () => {
    const seen: string[][] = [];
    const runner: Phase2Runner = {
      label: 'consolidation by stub',
      async run(_v, js) {
        seen.push(js.map((j) => j.juror_id));
        return { defects: js.filter((j) => j.ok).flatMap((j) => j.defects), failed: false, usage: [usage('consolidator', 'consolidation', 2000, 0.02)] };
      },
    };
    const full = ladderSystems(verdicts).find((s) => s.kind === 'final')!;
    const rounds = await knockout(verdicts, golds, ['a', 'b', 'c'], { threshold: 'minor', propagate: false, runner, full });
    expect(rounds.map((r) => [r.size, r.dropped, r.jurors])).toEqual([
      [3, null, ['a', 'b', 'c']],
      [2, 'c', ['a', 'b']], // all tie at 0: the later seat goes
    ]);
    expect(seen).toEqual([
      ['a', 'b'],
      ['a', 'b'],
    ]); // Phase 2 re-run for the two-juror jury only, with its Phase 1 judgements
    expect(rounds[1]!.systems.map((s) => s.name)).toEqual(['union (2 jurors)', 'majority (2 jurors)', 'consolidation by stub (2 jurors)']);
    const rerun = rounds[1]!.systems[2]!;
    expect(rerun.usage.get('r1')!.map((u) => u.participant)).toEqual(['a', 'b', 'consolidator']);
  });

  it('cost table: calls, tokens and dollars per record with ratios to a chosen single judge', () => {
    const systems = ladderSystems(verdicts);
    const rows = new Map(costTable(systems, ['r1', 'r2'], 'solo a').map((r) => [r.system, r]));
    expect(rows.get('solo a')).toMatchObject({ calls: 2, tokens_in: 2000, tokens_out: 200, cost_usd: 0.02, cost_per_record: 0.01 });
    const jury = rows.get('jury (consolidation)')!;
    expect(jury).toMatchObject({ calls: 8, tokens_in: 12_000, tokens_out: 1200 });
    expect(jury.cost_usd).toBeCloseTo(0.16, 12);
    expect(jury.ratio!.calls).toBe(4);
    expect(jury.ratio!.tokens_total).toBeCloseTo(6, 12);
    expect(jury.ratio!.cost_usd).toBeCloseTo(8, 12);
    expect(rows.get('union')!.calls).toBe(6);
  });
});
