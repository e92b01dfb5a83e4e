import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { JudgementOutput } from '../../schemas/defect.js';
import type { ChatRequest } from '../../src/llm/types.js';
import { buildGoldIndex } from '../../src/sim/gold.js';
import type { ModelEntryInput } from '../../src/sim/profile.js';
import { startSimulator, type RunningSimulator } from '../../src/sim/server.js';
import { oneModel, phase1Request, synthRecords, withinBinomial } from './helpers.js';

const records = synthRecords(40, { steps: 8, seed: 'server' });
const gold = buildGoldIndex(records);
const running: RunningSimulator[] = [];

async function sim(entry: ModelEntryInput): Promise<RunningSimulator> {
  const s = await startSimulator({ profile: oneModel(entry), gold });
  running.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

function client(s: RunningSimulator, opts: { maxRetries?: number; timeout?: number } = {}): OpenAI {
  return new OpenAI({ baseURL: s.url, apiKey: 'sk-test-not-a-secret', maxRetries: opts.maxRetries ?? 0, timeout: opts.timeout ?? 10_000 });
}

function create(c: OpenAI, req: ChatRequest) {
  return c.chat.completions.create({ model: req.model, messages: req.messages, ...(req.seed !== undefined ? { seed: req.seed } : {}) });
}

async function waitFor(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('simulator over HTTP with the openai client', () => {
  it('returns a completion the client parses, with usage and reasoning_content when configured', async () => {
    const s = await sim({ recall: 1, reasoning_words: 40 });
    const c = client(s);
    const res = await create(c, phase1Request(records[0]!, 'm', 1));
    const msg = res.choices[0]!.message as unknown as { content: string; reasoning_content?: string };
    expect(JudgementOutput.parse(JSON.parse(msg.content)).negatives.length).toBe(records[0]!.gold!.error_steps!.length);
    expect(msg.reasoning_content!.split(/\s+/).length).toBeGreaterThanOrEqual(40);
    expect(res.usage!.prompt_tokens).toBeGreaterThan(500);
    expect(res.usage!.completion_tokens).toBe(Math.ceil((msg.content.length + msg.reasoning_content!.length) / 4));
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect((await c.models.list()).data.map((m) => m.id)).toEqual(['m']);
    expect(s.stats()).toMatchObject({ requests: { m: { ok: 1 } }, tasks: { phase1: 1 }, authorization: { present: 2, absent: 0 } });
  });

  it('omits reasoning_content when the profile has none, and replays identical bodies on a fresh server', async () => {
    const req = phase1Request(records[1]!, 'm', 3);
    const bodies: string[] = [];
    for (let i = 0; i < 2; i++) {
      const s = await sim({ recall: 0.8, false_positive_rate: 0.2 });
      const raw = await fetch(`${s.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(req) });
      bodies.push(await raw.text());
      expect(s.stats().authorization).toEqual({ present: 0, absent: 1 });
      // The same request again on the same server: a second attempt, same findings.
      const again = (await create(client(s), req)).choices[0]!.message;
      expect(again.content).toBe(JSON.parse(bodies[0]!).choices[0].message.content);
      expect('reasoning_content' in again).toBe(false);
    }
    expect(bodies[1]).toBe(bodies[0]);
  });

  it('serves faults at the profile rates and retries can get through', async () => {
    const s = await sim({ rate_429: 0.2, rate_500: 0.1, retry_after_ms: 5 });
    const c = client(s);
    const N = 400;
    const seen = { ok: 0, 429: 0, 500: 0 };
    await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        try {
          await create(c, phase1Request(records[i % records.length]!, 'm', i));
          seen.ok++;
        } catch (e) {
          if (!(e instanceof APIError) || (e.status !== 429 && e.status !== 500)) throw e;
          if (e.status === 429) expect(e.headers?.get('retry-after-ms')).toBe('5');
          seen[e.status as 429 | 500]++;
        }
      }),
    );
    expect(withinBinomial(seen[429] / N, 0.2, N)).toBe(true);
    expect(withinBinomial(seen[500] / N, 0.1, N)).toBe(true);
    expect(s.stats().requests.m).toEqual({ ok: seen.ok, fault_429: seen[429], fault_500: seen[500] });
    // With retries every call succeeds: the attempt number reshuffles the fault draw.
    const patient = client(s, { maxRetries: 8 });
    await Promise.all(Array.from({ length: 30 }, (_, i) => create(patient, phase1Request(records[i]!, 'm', 1000 + i))));
  });

  it('caps in-flight requests per model with 429 + retry-after, and never serves more than the cap', async () => {
    const s = await sim({ max_concurrency: 3, latency_ms: { median: 200, sigma: 0 }, retry_after_ms: 20 });
    const c = client(s);
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => create(c, phase1Request(records[i]!, 'm', i))));
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(results.length - rejected.length).toBe(3);
    for (const r of rejected) {
      expect(r.reason).toBeInstanceOf(APIError);
      expect((r.reason as APIError).status).toBe(429);
      expect((r.reason as APIError).headers?.get('retry-after')).toBe('1');
      expect((r.reason as APIError).headers?.get('retry-after-ms')).toBe('20');
    }
    expect(s.stats().requests.m).toEqual({ ok: 3, rate_limited: 7 });
    // A patient client gets everything through without the server ever exceeding the cap.
    const patient = client(s, { maxRetries: 30 });
    await Promise.all(Array.from({ length: 12 }, (_, i) => create(patient, phase1Request(records[i]!, 'm', 100 + i))));
    expect(s.stats().max_in_flight.m).toBe(3);
    expect(s.stats().in_flight).toEqual({});
  });

  it('hangs on a simulated timeout until the client gives up, then frees the slot', async () => {
    const s = await sim({ rate_timeout: 1, max_concurrency: 1 });
    const t0 = Date.now();
    await expect(create(client(s, { timeout: 300 }), phase1Request(records[0]!, 'm'))).rejects.toBeInstanceOf(APIConnectionTimeoutError);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    await waitFor(() => Object.keys(s.stats().in_flight).length === 0);
    expect(s.stats().requests.m).toEqual({ timeout: 1 });
  });

  it('answers 504 after hang_ms when the client is more patient', async () => {
    const s = await sim({ rate_timeout: 1, hang_ms: 100 });
    const err = await create(client(s), phase1Request(records[0]!, 'm')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(504);
  });

  it('closes cleanly with a request still hanging, leaving no timers behind', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const s = await startSimulator({ profile: oneModel({ rate_timeout: 0.5, latency_ms: { median: 5000, sigma: 0 } }), gold });
    const c = client(s, { timeout: 60_000 });
    const pending = Array.from({ length: 6 }, (_, i) => create(c, phase1Request(records[i]!, 'm', i)).catch((e: unknown) => e));
    await waitFor(() => (s.stats().in_flight.m ?? 0) === 6);
    const t0 = Date.now();
    await s.close();
    expect(Date.now() - t0).toBeLessThan(1000);
    for (const e of await Promise.all(pending)) expect(e).toBeInstanceOf(APIConnectionError);
    expect(s.stats().in_flight).toEqual({});
    expect(timers()).toBeLessThanOrEqual(before);
  });

  it('gives clear client errors: unknown task, unknown model, streaming', async () => {
    const s = await sim({});
    const c = client(s);
    const task = await c.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hello' }] }).catch((e: unknown) => e);
    expect((task as APIError).status).toBe(400);
    expect((task as APIError).message).toMatch(/cannot tell which task/);
    const model = await create(c, phase1Request(records[0]!, 'nope')).catch((e: unknown) => e);
    expect((model as APIError).status).toBe(404);
    const stream = await c.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true }).catch((e: unknown) => e);
    expect((stream as APIError).status).toBe(400);
    const bad = await fetch(`${s.url}/chat/completions`, { method: 'POST', body: '{oops' });
    expect(bad.status).toBe(400);
    expect((await fetch(`${s.url}/nowhere`)).status).toBe(404);
    expect(s.stats().requests).toMatchObject({ m: { bad_request: 2 }, nope: { unknown_model: 1 } });
  });
});
