import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/llm/types.js';
import { DEFAULT_CONSOLIDATOR_MODEL, DEFAULT_JUROR_MODELS } from '../../src/sim/default-profile.js';
import { buildGoldIndex } from '../../src/sim/gold.js';
import { createSimProvider } from '../../src/sim/provider.js';
import { startSimulator } from '../../src/sim/server.js';
import { consolidationRequest, defectOn, oneModel, phase1Request, synthRecords } from './helpers.js';

const records = synthRecords(20, { steps: 8, seed: 'provider' });
const gold = buildGoldIndex(records);
const never = new AbortController().signal;

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ProviderError);
  return e as ProviderError;
}

describe('in-process simulator provider', () => {
  it('returns what the HTTP server returns for the same request', async () => {
    const profile = oneModel({ recall: 0.9, reasoning_words: 20 });
    const provider = createSimProvider({ profile, gold });
    const req = phase1Request(records[0]!, 'm', 9);
    const got = await provider.complete(req, never);
    const s = await startSimulator({ profile, gold });
    try {
      const res = await fetch(`${s.url}/chat/completions`, { method: 'POST', body: JSON.stringify(req) });
      const body = (await res.json()) as { choices: Array<{ message: { content: string; reasoning_content: string }; finish_reason: string }>; usage: { prompt_tokens: number; completion_tokens: number } };
      expect(got).toEqual({ content: body.choices[0]!.message.content, reasoning: body.choices[0]!.message.reasoning_content, finish_reason: body.choices[0]!.finish_reason, tokens_in: body.usage.prompt_tokens, tokens_out: body.usage.completion_tokens });
    } finally {
      await s.close();
    }
  });

  it('maps faults to ProviderErrors like the HTTP path', async () => {
    const req = phase1Request(records[1]!, 'm');
    const e429 = await failure(createSimProvider({ profile: oneModel({ rate_429: 1, retry_after_ms: 77 }), gold }).complete(req, never));
    expect(e429).toMatchObject({ retryable: true, status: 429, retryAfterMs: 77 });
    expect(await failure(createSimProvider({ profile: oneModel({ rate_500: 1 }), gold }).complete(req, never))).toMatchObject({ retryable: true, status: 500 });
    const timeout = await failure(createSimProvider({ profile: oneModel({ rate_timeout: 1 }), gold }).complete(req, never));
    expect(timeout).toMatchObject({ retryable: true, status: undefined });
    expect(timeout.message).toMatch(/^timeout/);
    const p = createSimProvider({ profile: oneModel({}), gold });
    expect(await failure(p.complete({ ...req, model: 'other' }, never))).toMatchObject({ retryable: false, status: 404 });
    expect(await failure(p.complete({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, never))).toMatchObject({ retryable: false, status: 400 });
    expect(p.stats().requests).toEqual({ other: { unknown_model: 1 }, m: { bad_request: 1 } });
  });

  it('with simulated latency, hangs on a timeout until the caller aborts and caps concurrency', async () => {
    const hang = createSimProvider({ profile: oneModel({ rate_timeout: 1 }), gold, latency: 'simulated' });
    const t0 = Date.now();
    const e = await failure(hang.complete(phase1Request(records[2]!, 'm'), AbortSignal.timeout(150)));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    expect(e).toMatchObject({ retryable: false });
    expect(e.message).toMatch(/aborted by caller/);
    expect(hang.stats().in_flight).toEqual({});

    const slow = createSimProvider({ profile: oneModel({ max_concurrency: 2, latency_ms: { median: 100, sigma: 0 } }), gold, latency: 'simulated' });
    const results = await Promise.allSettled(records.slice(0, 5).map((r) => slow.complete(phase1Request(r, 'm'), never)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ status: 429, retryable: true });
    expect(slow.stats().max_in_flight.m).toBe(2);
  });

  it('runs a whole default-profile jury instantly', async () => {
    const p = createSimProvider({ gold });
    const t0 = Date.now();
    let ok = 0;
    for (const rec of records) {
      const panel = [];
      for (const [i, model] of DEFAULT_JUROR_MODELS.entries()) {
        const r = await p.complete(phase1Request(rec, model, i), never).catch(() => null);
        if (r) ok++;
        panel.push({ juror_id: `jury-${i}`, defects: r ? [defectOn([1])] : [] });
      }
      await p.complete(consolidationRequest(rec, DEFAULT_CONSOLIDATOR_MODEL, panel), never).catch(() => null);
    }
    expect(ok).toBeGreaterThan(50);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(p.stats().tasks.consolidation).toBe(20);
  });
});
