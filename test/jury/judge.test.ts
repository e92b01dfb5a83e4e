import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { CallUsage } from '../../schemas/usage.js';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { judgeRecord, type JuryContext } from '../../src/jury/judge.js';
import { type CallResult, ModelCallError, type ModelGateway, type StructuredCall, type TextCall } from '../../src/llm/types.js';
import { loadPromptSet } from '../../src/prompts/templates.js';
import { segmentRecord } from '../../src/segment/index.js';
import { Verdict } from '../../schemas/verdict.js';

/** A scripted gateway: the jury logic is tested here; the real client path is in the integration tests. */
class ScriptedGateway implements ModelGateway {
  calls: StructuredCall<unknown>[] = [];
  constructor(private readonly script: (call: StructuredCall<unknown>) => unknown | Error | 'hang') {}
  private usage(call: { ctx: { phase: CallUsage['phase']; participant: string }; seat: { model: string } }, outcome: 'ok' | 'error'): CallUsage {
    return { phase: call.ctx.phase, participant: call.ctx.participant, model: call.seat.model, endpoint: 'scripted', tokens_in: 100, tokens_out: 20, cost_usd: 0.001, latency_ms: 5, attempts: 1, outcome };
  }
  async structured<T>(call: StructuredCall<T>): Promise<CallResult<T>> {
    this.calls.push(call as StructuredCall<unknown>);
    const out = this.script(call as StructuredCall<unknown>);
    if (out === 'hang') {
      await new Promise((_, reject) => call.signal?.addEventListener('abort', () => reject(new ModelCallError('aborted', this.usage(call, 'error')))));
    }
    if (out instanceof Error) throw new ModelCallError(out.message, this.usage(call, 'error'));
    const value = (call.schema as z.ZodType<T>).parse(out);
    return { value, raw: JSON.stringify(out), usage: this.usage(call, 'ok'), cached: false };
  }
  async text(_call: TextCall): Promise<CallResult<string>> {
    throw new Error('not used');
  }
}

const prompts = loadPromptSet();
const steps = segmentRecord({ trace: 'One.\n\nTwo.\n\nThree.\n\nFour.' });
const input = { id: 'r1', problem: 'p', steps };
const neg = (refs: (string | number)[], impact = 'major') => ({ statement_refs: refs, what_went_wrong: `wrong at ${refs}`, impact, evidence: 'e' });

function ctx(gateway: ModelGateway, over: Record<string, unknown> = {}): JuryContext {
  return { config: parseConfig({ ...defaultConfigInput(), ...over }), gateway, prompts, configHash: 'cfg' };
}

describe('judgeRecord', () => {
  it('consolidation: 3 jurors + consolidator, refs validated, voters checked against the panel', async () => {
    const gw = new ScriptedGateway((c) => {
      if (c.ctx.phase === 'consolidation') return { negatives: [{ ...neg(['STEP-2', 'step 2']), vote_count: 3, voters: ['jury-0', 'jury-1', 'ghost'] }] };
      return { negatives: c.ctx.participant === 'jury-2' ? [] : [neg(['STEP-2'])] };
    });
    const v = await judgeRecord(ctx(gw), input);
    expect(Verdict.parse(v)).toEqual(v);
    expect(v.defects).toEqual([{ ...neg(['STEP-2', 'step 2']), statement_refs: [2], vote_count: 2, voters: ['jury-0', 'jury-1'] }]);
    expect(v.dropped_refs).toBe(0);
    expect(v.jurors_ok).toBe(3);
    expect(v.degraded).toBe(false);
    expect(v.usage).toHaveLength(4);
    expect(v.prompt_hash).toBe(prompts.hash);
    expect(v.dissenting_views).toEqual([]);
    // distinct default seeds for the three jurors
    const seeds = new Set(gw.calls.filter((c) => c.ctx.phase === 'phase1').map((c) => c.seat.seed));
    expect(seeds.size).toBe(3);
  });

  it('refs outside the trace fail the reply instead of being dropped: the juror fails, the consolidator too', async () => {
    const gw = new ScriptedGateway((c) => {
      if (c.ctx.phase === 'consolidation') return { negatives: [neg(['STEP-2', 'STEP-40'])] };
      return { negatives: [neg(c.ctx.participant === 'jury-1' ? [0] : ['STEP-2'])] };
    });
    const v = await judgeRecord(ctx(gw), input);
    expect(v.phase1_judgements.map((j) => j.ok)).toEqual([true, false, true]);
    expect(v.phase1_judgements[1]!.error).toMatch(/0 is not a step of this trace: it has 4 steps/);
    expect(v.degraded).toBe(true);
    expect(v.degraded_reason).toMatch(/1 of 3 jurors failed/);
    expect(v.degraded_reason).toMatch(/consolidat[\s\S]*STEP-40\W{0,3} is not a step of this trace/);
  });

  it('consolidation failure degrades to a phase 1 aggregate and says why', async () => {
    const gw = new ScriptedGateway((c) => (c.ctx.phase === 'consolidation' ? new Error('HTTP 500 from consolidator') : { negatives: [neg([3], 'fatal')] }));
    const v = await judgeRecord(ctx(gw), input);
    expect(v.degraded).toBe(true);
    expect(v.degraded_reason).toMatch(/consolidation failed \(HTTP 500 from consolidator\)/);
    expect(v.defects).toMatchObject([{ statement_refs: [3], impact: 'fatal', vote_count: 3 }]);
    expect(v.error).toBeNull();
    expect(v.usage.map((u) => u.outcome)).toEqual(['ok', 'ok', 'ok', 'error']);
  });

  it('proceeds with min_jurors and marks the verdict degraded; the majority threshold follows the survivors', async () => {
    const gw = new ScriptedGateway((c) => (c.ctx.participant === 'jury-1' ? new Error('timeout') : { negatives: [neg([1])] }));
    const v = await judgeRecord(ctx(gw, { mode: 'majority', consolidator: undefined, min_jurors: 2 }), input);
    expect(v.jurors_ok).toBe(2);
    expect(v.defects).toMatchObject([{ statement_refs: [1], vote_count: 2 }]);
    expect(v.degraded_reason).toMatch(/1 of 3 jurors failed \(jury-1: timeout\)/);
  });

  it('too few jurors -> a verdict with an error, no phase 2 call', async () => {
    const gw = new ScriptedGateway((c) => (c.ctx.participant === 'jury-0' ? { negatives: [] } : new Error('HTTP 503')));
    const v = await judgeRecord(ctx(gw), input);
    expect(v.error).toMatch(/too few jurors/);
    expect(v.degraded).toBe(true);
    expect(gw.calls.some((c) => c.ctx.phase === 'consolidation')).toBe(false);
  });

  it('a hung juror is cut off by the phase 1 wall-clock ceiling', async () => {
    const gw = new ScriptedGateway((c) => (c.ctx.participant === 'jury-2' ? 'hang' : c.ctx.phase === 'consolidation' ? { negatives: [] } : { negatives: [] }));
    const v = await judgeRecord(ctx(gw, { phase1_timeout_ms: 50 }), input);
    expect(v.jurors_ok).toBe(2);
    expect(v.phase1_judgements[2]).toMatchObject({ juror_id: 'jury-2', ok: false });
    expect(v.phase1_judgements[2]!.error).toMatch(/wall-clock ceiling/);
  });

  it('single uses one juror; union keeps every finding', async () => {
    const gw = new ScriptedGateway((c) => ({ negatives: [neg([c.ctx.participant === 'jury-0' ? 1 : 4])] }));
    const single = await judgeRecord(ctx(gw, { mode: 'single' }), input);
    expect(gw.calls).toHaveLength(1);
    expect(single.jurors_total).toBe(1);
    expect(single.defects.map((d) => d.statement_refs)).toEqual([[1]]);
    const union = await judgeRecord(ctx(gw, { mode: 'union' }), input);
    expect(union.defects.map((d) => d.statement_refs)).toEqual([[1], [4], [4]]);
  });
});
