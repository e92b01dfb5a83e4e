import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { CallUsage } from '../../schemas/usage.js';
import { Verdict } from '../../schemas/verdict.js';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { detailRow } from '../../src/derive/detail.js';
import { judgeRecord, type JuryContext } from '../../src/jury/judge.js';
import { contestedFindings } from '../../src/jury/passes/index.js';
import { EndpointOutageError } from '../../src/llm/outage.js';
import { type CallResult, ModelCallError, type ModelGateway, type StructuredCall } from '../../src/llm/types.js';
import { PASS_BLOCK } from '../../src/prompts/passes.js';
import { loadPromptSet } from '../../src/prompts/templates.js';
import { segmentRecord } from '../../src/segment/index.js';

type Reply = unknown | Error;

/** Scripted model layer: each phase's reply is the test's, so the pass logic is what is tested. */
class Scripted implements ModelGateway {
  calls: StructuredCall<unknown>[] = [];
  constructor(private readonly script: (call: StructuredCall<unknown>) => Reply) {}
  private usage(call: StructuredCall<unknown>, outcome: 'ok' | 'error'): CallUsage {
    return { phase: call.ctx.phase, participant: call.ctx.participant, model: call.seat.model, endpoint: 'scripted', tokens_in: 10, tokens_out: 5, cost_usd: 0, latency_ms: 1, attempts: 1, outcome };
  }
  async structured<T>(call: StructuredCall<T>): Promise<CallResult<T>> {
    const c = call as StructuredCall<unknown>;
    this.calls.push(c);
    const out = this.script(c);
    if (out instanceof EndpointOutageError) throw out;
    if (out instanceof Error) throw new ModelCallError(out.message, this.usage(c, 'error'));
    return { value: (call.schema as z.ZodType<T>).parse(out), raw: JSON.stringify(out), usage: this.usage(c, 'ok'), cached: false };
  }
  async text(): Promise<CallResult<string>> {
    throw new Error('not used');
  }
}

const prompts = loadPromptSet();
const input = { id: 'r1', problem: 'p', steps: segmentRecord({ trace: 'One.\n\nTwo.\n\nThree.\n\nFour.' }) };
const neg = (step: number, extra: Record<string, unknown> = {}) => ({ statement_refs: [`STEP-${step}`], what_went_wrong: `wrong at ${step}`, impact: 'major', evidence: `[STEP-${step}] 'x'`, ...extra });

/** Jurors: jury-0 and jury-1 flag step 2, jury-0 alone flags 3 (dissent: the consolidator leaves it out), jury-2 flags 4. */
function phase1(participant: string) {
  if (participant === 'jury-0') return { negatives: [neg(2), neg(3)] };
  if (participant === 'jury-1') return { negatives: [neg(2)] };
  return { negatives: [neg(4)] };
}
// The consensus: step 2 (2 of 3 votes: a split vote), step 4 (1 vote).
const consensus = { negatives: [neg(2, { vote_count: 2, voters: ['jury-0', 'jury-1'] }), neg(4, { vote_count: 1, voters: ['jury-2'] })] };

function ctx(gateway: ModelGateway, over: Record<string, unknown> = {}): JuryContext {
  return { config: parseConfig({ ...defaultConfigInput(), removal_pass: {}, arbiter: {}, ...over }), gateway, prompts, configHash: 'cfg' };
}

function script(removal: () => Reply, arbiter: () => Reply) {
  return (c: StructuredCall<unknown>): Reply => {
    if (c.ctx.phase === 'phase1') return phase1(c.ctx.participant);
    if (c.ctx.phase === 'consolidation') return consensus;
    return c.ctx.phase === 'removal' ? removal() : arbiter();
  };
}

const refsOf = (v: Verdict) => v.defects.map((d) => d.statement_refs);

describe('verification passes (removal pass, evidence arbiter)', () => {
  it('a dissenting finding the arbiter upholds is grounded too: with grounding drop, an ungrounded one stays out', async () => {
    const grounded = (step: number, extra: Record<string, unknown> = {}) => neg(step, { evidence: `[STEP-${step}] '${['One.', 'Two.', 'Three.', 'Four.'][step - 1]}'`, ...extra });
    const gw = new Scripted((c) => {
      // Every juror flags step 2 (grounded); jury-0 alone also flags step 3 quoting words the trace lacks.
      if (c.ctx.phase === 'phase1') return { negatives: c.ctx.participant === 'jury-0' ? [grounded(2), neg(3, { evidence: "[STEP-3] 'the cat sat'" })] : [grounded(2)] };
      if (c.ctx.phase === 'consolidation') return { negatives: [grounded(2, { vote_count: 3, voters: ['jury-0', 'jury-1', 'jury-2'] })] };
      return { rulings: [{ id: 'F1', ruling: 'upheld', rationale: 'step 3 is wrong' }] };
    });
    const v = await judgeRecord(ctx(gw, { removal_pass: undefined, grounding: { policy: 'drop' } }), input);
    expect(Verdict.parse(v)).toEqual(v);
    expect(v.negative_adjudications?.map((a) => [a.defect.statement_refs, a.origin, a.ruling])).toEqual([[[3], 'dissent', 'upheld']]);
    expect(refsOf(v)).toEqual([[2]]);
    expect(v.grounding?.checks.map((c) => [c.defect_index, c.status, c.outcome])).toEqual([
      [0, 'grounded', 'kept'],
      [1, 'ungrounded', 'dropped'],
    ]);
  });

  it('removal drops what it finds unsupported, the arbiter rejects a split vote and reinstates dissent', async () => {
    const gw = new Scripted(
      script(
        () => ({ decisions: [{ id: 'F1', keep: true, reason: 'holds' }, { id: 'F2', keep: false, reason: 'STEP-4 says something else' }] }),
        // contested: F1 = step 2 (split vote 2/3), F2 = step 4 (1/3), F3 = step 3 (dissent of jury-0)
        () => ({ rulings: [{ id: 'F1', ruling: 'rejected', rationale: 'step 2 is right' }, { id: 'F3', ruling: 'upheld', rationale: 'step 3 is wrong' }] }),
      ),
    );
    const v = await judgeRecord(ctx(gw), input);
    expect(Verdict.parse(v)).toEqual(v);
    expect(refsOf(v)).toEqual([[3]]);
    expect(v.dropped_negatives).toEqual([{ defect: expect.objectContaining({ statement_refs: [4] }), reason: 'STEP-4 says something else' }]);
    expect(v.negative_adjudications?.map((a) => [a.defect.statement_refs, a.origin, a.ruling])).toEqual([
      [[2], 'split_vote', 'rejected'],
      [[3], 'dissent', 'upheld'],
    ]);
    expect(v.defects[0]).toMatchObject({ vote_count: 1, voters: ['jury-0'] });
    expect(v.degraded).toBe(false);
    // dissent follows the final verdict: step 3 joined it, steps 2 and 4 left it
    expect(v.dissenting_views.map((d) => /STEP-(\d)/.exec(d)![1])).toEqual(['2', '2', '4']);
    expect(v.usage.map((u) => u.phase)).toEqual(['phase1', 'phase1', 'phase1', 'consolidation', 'removal', 'arbiter']);
    // each pass is its own prompt, with its own findings block
    const user = (phase: string) => gw.calls.find((c) => c.ctx.phase === phase)!.messages.at(-1)!.content;
    expect(user('removal')).toContain(PASS_BLOCK.consensus);
    expect(user('arbiter')).toContain(PASS_BLOCK.contested);
    expect(user('arbiter')).toContain('left out of the verdict');
    // the detail row carries both
    const row = detailRow(v);
    expect(row.dropped_negatives).toHaveLength(1);
    expect(row.negative_adjudications?.map((a) => a.ruling)).toEqual(['rejected', 'upheld']);
  });

  it('removal failure: the consensus is kept unreviewed and the verdict says so; the arbiter still applies', async () => {
    const gw = new Scripted(script(() => new Error('reply was not JSON'), () => ({ rulings: [] })));
    const v = await judgeRecord(ctx(gw), input);
    expect(refsOf(v)).toEqual([[2], [4]]);
    expect(v.dropped_negatives).toBeUndefined();
    expect(v.negative_adjudications).toEqual([]);
    expect(v.degraded).toBe(true);
    expect(v.degraded_reason).toMatch(/removal pass failed \(reply was not JSON\)/);
    expect(v.error).toBeNull();
    expect(detailRow(v).dropped_negatives).toBeNull();
  });

  it('arbiter failure: contested findings stay as Phase 2 left them, the verdict is marked', async () => {
    const gw = new Scripted(script(() => ({ decisions: [] }), () => new Error('HTTP 400')));
    const v = await judgeRecord(ctx(gw), input);
    expect(refsOf(v)).toEqual([[2], [4]]);
    expect(v.negative_adjudications).toBeUndefined();
    expect(v.dropped_negatives).toEqual([]);
    expect(v.degraded_reason).toMatch(/evidence arbiter failed \(HTTP 400\)/);
    expect(v.usage.filter((u) => u.phase === 'arbiter').map((u) => u.outcome)).toEqual(['error']);
  });

  it('an endpoint outage during a pass is not a degraded verdict: it stops the record', async () => {
    const outage = new EndpointOutageError('sim', 60_000, 30_000, 'connection refused');
    await expect(judgeRecord(ctx(new Scripted(script(() => outage, () => ({ rulings: [] })))), input)).rejects.toBe(outage);
    await expect(judgeRecord(ctx(new Scripted(script(() => ({ decisions: [] }), () => outage))), input)).rejects.toBe(outage);
  });

  it('doubt keeps a finding: unknown, repeated and missing ids change nothing beyond the first mention', async () => {
    const gw = new Scripted(
      script(
        () => ({ decisions: [{ id: 'F9', keep: false, reason: 'no such' }, { id: 2, keep: 'keep', reason: '' }, { id: 'f2', keep: false, reason: 'second mention' }] }),
        () => ({ rulings: [{ id: 'F7', ruling: 'rejected', rationale: '' }] }),
      ),
    );
    const v = await judgeRecord(ctx(gw), input);
    expect(refsOf(v)).toEqual([[2], [4]]);
    expect(v.dropped_negatives).toEqual([]);
    expect(v.negative_adjudications).toEqual([]);
  });

  it('passes off (the sections absent or enabled: false): no calls, no fields', async () => {
    for (const over of [{ removal_pass: undefined, arbiter: undefined }, { removal_pass: { enabled: false }, arbiter: { enabled: false } }]) {
      const gw = new Scripted(script(() => new Error('must not be called'), () => new Error('must not be called')));
      const v = await judgeRecord(ctx(gw, over), input);
      expect(v.usage.map((u) => u.phase)).not.toContain('removal');
      expect(v.usage.map((u) => u.phase)).not.toContain('arbiter');
      expect('dropped_negatives' in v).toBe(false);
      expect('negative_adjudications' in v).toBe(false);
    }
  });

  it('the pass seat: its own, else the consolidator under the pass id', async () => {
    const gw = new Scripted(script(() => ({ decisions: [] }), () => ({ rulings: [] })));
    const own = { id: 'checker', endpoint: 'sim', model: 'checker-model' };
    await judgeRecord(ctx(gw, { arbiter: { seat: own } }), input);
    const seat = (phase: string) => gw.calls.find((c) => c.ctx.phase === phase)!.seat;
    expect(seat('removal')).toMatchObject({ id: 'removal', model: gw.calls.find((c) => c.ctx.phase === 'consolidation')!.seat.model });
    expect(seat('arbiter')).toMatchObject({ id: 'checker', model: 'checker-model' });
  });

  it('contested findings: split votes (including votes of 0), then merged dissent, capped', () => {
    const d = (s: number, votes?: number) => ({ statement_refs: [s], what_went_wrong: 'w', impact: 'major' as const, evidence: '', ...(votes !== undefined ? { vote_count: votes, voters: [] } : {}) });
    const js = ['a', 'b'].map((id) => ({ juror_id: id, model: 'm', ok: true, dropped_refs: 0, defects: [d(1), d(5)] }));
    const c = contestedFindings([d(1, 2), d(2, 1), d(3, 0), d(4)], js, { dissent: true, max: 10 });
    expect(c.defects.map((x) => x.statement_refs[0])).toEqual([2, 3, 5]);
    expect(c.sources).toEqual(['split_vote', 'split_vote', 'dissent']);
    expect(c.consensusIndex).toEqual([1, 2, -1]);
    expect(c.defects[2]).toMatchObject({ vote_count: 2, voters: ['a', 'b'] });
    expect(contestedFindings([d(1, 2), d(2, 1), d(3, 0)], js, { dissent: false, max: 1 }).defects).toHaveLength(1);
  });
});
