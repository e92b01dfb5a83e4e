/**
 * How a retry fails: an endpoint outage is thrown on (the record stays unjudged and
 * uncommitted, as for a juror); a call that fails for good is an outcome with `error`; a reply
 * cut at max_tokens keeps its text with finish reason `length`, and its row gets no fallback.
 */
import { describe, expect, it } from 'vitest';
import { RepairConfig } from '../../schemas/config.js';
import type { CallUsage } from '../../schemas/usage.js';
import { retryOnce } from '../../src/jury/repair.js';
import { EndpointOutageError } from '../../src/llm/outage.js';
import { ModelCallError, NoObjectGeneratedError, type ModelGateway, type TextCall } from '../../src/llm/types.js';
import { repairRow, NOT_REJUDGED } from '../../src/pipeline/steps/repair.js';
import { loadPromptSet, REPAIR_TEMPLATES } from '../../src/prompts/templates.js';

const prompts = loadPromptSet(undefined, new Set(REPAIR_TEMPLATES));
const repair = RepairConfig.parse({ generator: { id: 'gen', endpoint: 'e', model: 'g' } });
const usage: CallUsage = { phase: 'repair', participant: 'gen', model: 'g', endpoint: 'e', tokens_in: 10, tokens_out: 5, cost_usd: null, latency_ms: 1, attempts: 3, outcome: 'error' };
const record = { id: 'r1', problem: 'p', steps: ['a', 'ANSWER: 3'], meta: {}, reference_answer: '4' };
const input = { problem: 'p', steps: [{ index: 1, text: 'a' }, { index: 2, text: 'ANSWER: 3' }] };
const defects = [{ statement_refs: [2], impact: 'major' as const, what_went_wrong: 'wrong sum', evidence: 'e' }];

function gateway(fail: () => never): ModelGateway & { calls: TextCall[] } {
  const calls: TextCall[] = [];
  return {
    calls,
    structured: () => Promise.reject(new Error('not used')),
    text: (call) => {
      calls.push(call);
      return Promise.resolve().then(fail);
    },
  };
}

const once = (gw: ModelGateway, attempt = 1) => retryOnce({ gateway: gw, prompts, repair, recordId: 'r1', input, defects, condition: 'full', attempt });

describe('retry failures', () => {
  it('an endpoint outage is thrown on, never a row', async () => {
    await expect(once(gateway(() => { throw new EndpointOutageError('e', 5000, 1000, 'ECONNREFUSED'); }))).rejects.toBeInstanceOf(EndpointOutageError);
  });

  it('a call that fails for good is a row with error and no text, its tokens counted', async () => {
    const out = await once(gateway(() => { throw new ModelCallError('gen: HTTP 400 bad request', usage); }));
    expect(out).toMatchObject({ text: null, finish_reason: null, error: 'gen: HTTP 400 bad request' });
    const row = repairRow({ record, repair, gate: 'any_defect', promptHash: 'h', out, rejudged: NOT_REJUDGED });
    expect(row).toMatchObject({ retry_text: null, extracted_answer: null, answer_source: 'none', correct: false, original_answer: '3', original_correct: false, tokens_in: 10, tokens_out: 5, cost_usd: null, error: 'gen: HTTP 400 bad request' });
  });

  it('a reply cut at max_tokens keeps its text; the number in its tail is not taken', async () => {
    const gw = gateway(() => { throw new NoObjectGeneratedError('truncated', usage, { text: 'trying again, the sum is 4', finishReason: 'length', reason: 'truncated at max_tokens (16384)' }); });
    const out = await once(gw, 2);
    expect(out).toMatchObject({ text: 'trying again, the sum is 4', finish_reason: 'length', error: null });
    const row = repairRow({ record, repair, gate: 'any_defect', promptHash: 'h', out, rejudged: NOT_REJUDGED });
    expect(row).toMatchObject({ extracted_answer: null, answer_source: 'none', correct: false, finish_reason: 'length', attempt: 2 });
    // the call went out under phase repair, with the attempt's own seed and sample index
    expect(gw.calls[0]!.ctx).toMatchObject({ phase: 'repair', participant: 'gen', sample_index: 1 });
    const first = gateway(() => { throw new ModelCallError('x', usage); });
    await once(first, 1);
    expect(gw.calls[0]!.seat.seed).toBe((first.calls[0]!.seat.seed! + 1) & 0x7fffffff);
  });
});
