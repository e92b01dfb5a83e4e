/**
 * Gateway integration: the real `openai` client against a scripted local server.
 */
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EndpointConfig, ParticipantConfig } from '../../schemas/config.js';
import { JudgementOutput } from '../../schemas/defect.js';
import type { AuditEntry } from '../../src/llm/audit.js';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/llm/gateway.js';
import { EndpointFaultError } from '../../src/llm/outage.js';
import { ModelCallError, type CallContext, type ChatMessage } from '../../src/llm/types.js';
import { ok, startScriptedServer, type Script, type ScriptedServer } from './helpers/scripted-server.js';

const SENTINEL = 'sk-sentinel-7f3e2a9b4c1d8e6f';
const OTHER_SECRET = 'hf_other-secret-value-123';
const env = { RJ_TEST_API_KEY: SENTINEL, HF_TOKEN: OTHER_SECRET };
const PRICES = { 'judge-model': { input_per_mtok: 2, output_per_mtok: 10 } };
const messages: ChatMessage[] = [{ role: 'system', content: 'You are an auditor.' }, { role: 'user', content: 'Audit STEP-1..STEP-3.' }];
const ctx: CallContext = { record_id: 'rec-1', phase: 'phase1', participant: 'juror-a', caller: 'test.gateway' };
const VALID = '{"negatives":[{"statement_refs":["STEP-2"],"what_went_wrong":"dropped a sign","impact":"major","evidence":"-3 became 3"}]}';

interface Harness {
  server: ScriptedServer;
  gw: Gateway;
  dir: string;
  auditPath: string;
  sleeps: number[];
  seat: ParticipantConfig;
  audit(): Promise<AuditEntry[]>;
}

const open: Array<{ server: ScriptedServer; gw: Gateway }> = [];
afterEach(async () => {
  for (const h of open.splice(0)) {
    await h.gw.close();
    await h.server.close();
  }
});

async function harness(script: Script, o: { endpoint?: Record<string, unknown>; seat?: Record<string, unknown>; gateway?: Partial<GatewayOptions>; server?: ScriptedServer; dir?: string } = {}): Promise<Harness> {
  const server = o.server ?? (await startScriptedServer(script));
  const dir = o.dir ?? (await mkdtemp(join(tmpdir(), 'rj-gw-')));
  const auditPath = join(dir, 'audit.jsonl');
  const sleeps: number[] = [];
  const endpoint = EndpointConfig.parse({ base_url: server.url, api_key_env: 'RJ_TEST_API_KEY', timeout_ms: 3000, max_retries: 3, backoff_base_ms: 100, backoff_max_ms: 1000, ...o.endpoint });
  const gw = createGateway({
    endpoints: { local: endpoint },
    prices: PRICES,
    cache: { enabled: true, dir: join(dir, 'cache') },
    auditLogPath: auditPath,
    env,
    random: () => 0.5,
    sleep: async (ms) => void sleeps.push(ms),
    ...o.gateway,
  });
  open.push({ server, gw });
  const seat = ParticipantConfig.parse({ id: 'juror-a', endpoint: 'local', model: 'judge-model', temperature: 0.3, seed: 11, ...o.seat });
  const audit = async () => {
    await gw.close(); // flushes the log
    return (await readFile(auditPath, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l) as AuditEntry);
  };
  return { server, gw, dir, auditPath, sleeps, seat, audit };
}

const judge = (h: Harness, extra: Partial<CallContext> = {}, signal?: AbortSignal) =>
  h.gw.structured({ ctx: { ...ctx, ...extra }, seat: h.seat, messages, schema: JudgementOutput, schemaName: 'JudgementOutput', ...(signal ? { signal } : {}) });

async function callError(p: Promise<unknown>): Promise<ModelCallError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ModelCallError);
    return err as ModelCallError;
  }
  throw new Error('expected ModelCallError');
}

describe('gateway: retries', () => {
  it('retries 500 and 429 then succeeds; usage covers every attempt', async () => {
    const h = await harness([{ status: 500, body: { error: { message: 'boom' } } }, { status: 429, body: {} }, ok(VALID, { tokens_in: 1000, tokens_out: 200 })]);
    const res = await judge(h);
    expect(res.value.negatives[0]).toMatchObject({ statement_refs: ['STEP-2'], impact: 'major' });
    expect(res.usage).toMatchObject({ attempts: 3, outcome: 'ok', tokens_in: 1000, tokens_out: 200, model: 'judge-model', endpoint: 'local', phase: 'phase1', participant: 'juror-a' });
    expect(res.usage.cost_usd).toBeCloseTo((1000 * 2 + 200 * 10) / 1e6, 12);
    expect(h.server.requests).toHaveLength(3);
    expect(h.sleeps).toEqual([50, 100]); // full jitter at random=0.5: 0.5*100, 0.5*200
    const lines = await h.audit();
    expect(lines.map((l) => [l.attempt, l.outcome, l.http_status ?? null])).toEqual([[1, 'retryable_error', 500], [2, 'retryable_error', 429], [3, 'ok', null]]);
  });

  it('honours retry-after and retry-after-ms', async () => {
    const h = await harness([
      { status: 429, headers: { 'retry-after': '7' }, body: {} },
      { status: 503, headers: { 'retry-after-ms': '1500' }, body: {} },
      ok(VALID),
    ]);
    await judge(h);
    expect(h.sleeps).toEqual([7000, 1500]);
  });

  it('stops at once on 401 (an endpoint fault, not the record\'s) without leaking the key', async () => {
    const h = await harness((r) => ({ status: 401, body: { error: { message: `invalid key ${String(r.headers.authorization)}` } } }));
    const err = (await judge(h).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(EndpointFaultError);
    expect(h.server.requests).toHaveLength(1);
    expect(h.server.requests[0]!.headers.authorization).toBe(`Bearer ${SENTINEL}`); // the key really was sent
    expect(err.message).toMatch(/^endpoint "local" refused the API key \(HTTP 401\) for seat "juror-a"/);
    expect(err.message).not.toContain(SENTINEL);
    expect(h.sleeps).toEqual([]);
    expect(h.gw.ledger.summary().total).toMatchObject({ calls: 0 }); // never a juror's failure
    const lines = await h.audit();
    expect(lines.map((l) => l.outcome)).toEqual(['error']);
  });

  it('a call whose every attempt the endpoint failed stops the run after max_retries, with all attempts audited', async () => {
    const h = await harness(() => ({ status: 502, body: {} }), { endpoint: { max_retries: 2, breaker: { failures: 10 } } });
    const err = (await judge(h).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(EndpointFaultError);
    expect(err.message).toMatch(/failed all 3 attempt\(s\) of seat "juror-a"/);
    expect(h.server.requests).toHaveLength(3);
    expect((await h.audit()).map((l) => l.outcome)).toEqual(['retryable_error', 'retryable_error', 'error']);
  });

  it('retries after a per-attempt timeout', async () => {
    const h = await harness([{ hang: true }, ok(VALID)], { endpoint: { timeout_ms: 300 } });
    const res = await judge(h);
    expect(res.usage.attempts).toBe(2);
    const lines = await h.audit();
    expect(lines[0]).toMatchObject({ outcome: 'retryable_error' });
    expect(lines[0]!.error).toMatch(/timeout/);
  });

  it('stops when the caller aborts, without further attempts', async () => {
    const h = await harness(() => ({ hang: true }), { endpoint: { timeout_ms: 10_000 } });
    const ctl = new AbortController();
    const pending = callError(judge(h, {}, ctl.signal));
    // Abort once the request is at the server (on a busy machine it may take a while to get there).
    while (h.server.requests.length < 1) await new Promise((r) => setTimeout(r, 10));
    ctl.abort(new Error('phase 1 ceiling'));
    const err = await pending;
    expect(err.message).toContain('phase 1 ceiling');
    expect(h.server.requests).toHaveLength(1);
  });

  it('close() aborts every call still in flight, with or without a signal of its own, and no later one starts', async () => {
    const h = await harness(() => ({ hang: true }), { endpoint: { timeout_ms: 10_000 } });
    const own = new AbortController();
    const calls = [judge(h), judge(h, { participant: 'juror-b' }, own.signal), judge(h, { participant: 'juror-c' })].map(callError);
    while (h.server.requests.length < 3) await new Promise((r) => setTimeout(r, 10));
    await h.gw.close();
    for (const err of await Promise.all(calls)) expect(err.message).toContain('aborted by caller: gateway closed');
    expect(h.server.requests).toHaveLength(3);
    expect(own.signal.aborted).toBe(false);
  });
});

describe('gateway: limits', () => {
  it('never exceeds max_concurrency in flight', async () => {
    const h = await harness(() => ok(VALID, { delayMs: 60 }), { endpoint: { max_concurrency: 3 } });
    await Promise.all(Array.from({ length: 10 }, (_, i) => judge(h, { sample_index: i })));
    expect(h.server.requests).toHaveLength(10);
    expect(h.server.maxInFlight).toBe(3);
  });

  it('the gateway limiter itself caps concurrency (no connection pool involved)', async () => {
    let running = 0;
    let peak = 0;
    const dir = await mkdtemp(join(tmpdir(), 'rj-gw-'));
    const gw = createGateway({
      endpoints: { sim: EndpointConfig.parse({ kind: 'simulator', max_concurrency: 2 }) },
      prices: {},
      cache: { enabled: false, dir },
      auditLogPath: null,
      providerFor: (name) => ({
        name,
        complete: async () => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((r) => setTimeout(r, 20));
          running--;
          return { content: VALID, tokens_in: 1, tokens_out: 1 };
        },
      }),
    });
    const seat = ParticipantConfig.parse({ id: 'x', endpoint: 'sim', model: 'm' });
    await Promise.all(Array.from({ length: 8 }, () => gw.text({ ctx, seat, messages })));
    await gw.close();
    expect(peak).toBe(2);
  });

  it('keeps to requests_per_second', async () => {
    const h = await harness(() => ok(VALID), { endpoint: { requests_per_second: 10 } });
    await Promise.all(Array.from({ length: 5 }, (_, i) => judge(h, { sample_index: i })));
    const at = h.server.requests.map((r) => r.at).sort((a, b) => a - b);
    expect(at[4]! - at[0]!).toBeGreaterThanOrEqual(340); // 4 gaps of 100 ms, minus generous slack (unlimited: ~5 ms)
  });
});

describe('gateway: JSON extraction and re-ask', () => {
  it.each([
    ['fenced', '```json\n' + VALID + '\n```'],
    ['prose-wrapped', `Here is my audit of the trace {as requested}:\n${VALID}\nLet me know if you need more.`],
    ['broken (jsonrepair)', "{'negatives': [{'statement_refs': ['STEP-2'], 'what_went_wrong': 'dropped a sign', 'impact': 'major', 'evidence': 'x',},]}"],
  ])('accepts a %s reply without a re-ask', async (_name, content) => {
    const h = await harness([ok(content)]);
    const res = await judge(h);
    expect(res.value.negatives[0]!.what_went_wrong).toBe('dropped a sign');
    expect(res.raw).toBe(content);
    expect(h.server.requests).toHaveLength(1);
  });

  it('re-asks exactly once, carrying the validation error, and succeeds', async () => {
    const bad = '{"negatives":[{"statement_refs":["STEP-2"],"impact":"catastrophic"}]}';
    const h = await harness([ok(bad, { tokens_in: 100, tokens_out: 10 }), ok(VALID, { tokens_in: 150, tokens_out: 30 })]);
    const res = await judge(h);
    expect(res.value.negatives).toHaveLength(1);
    expect(res.raw).toBe(VALID);
    expect(res.usage).toMatchObject({ attempts: 2, tokens_in: 250, tokens_out: 40, outcome: 'ok' });
    expect(h.server.requests).toHaveLength(2);
    const second = h.server.requests[1]!.body.messages as ChatMessage[];
    expect(second.slice(0, 2)).toEqual(messages);
    expect(second[2]).toEqual({ role: 'assistant', content: bad });
    expect(second[3]!.role).toBe('user');
    expect(second[3]!.content).toContain('negatives[0].what_went_wrong');
    expect(second[3]!.content).toContain('negatives[0].impact');
    expect(second[3]!.content).toMatch(/only the corrected JSON/);
    const lines = await h.audit();
    expect(lines.map((l) => [l.turn, l.outcome])).toEqual([['initial', 'reask'], ['reask', 'ok']]);
    expect(lines[0]!.error).toContain('impact');
    expect(lines[1]!.prompt_hash).not.toBe(lines[0]!.prompt_hash);
  });

  it('fails after the single re-ask is still invalid', async () => {
    const h = await harness(() => ok('I think the trace is fine.'));
    const err = await callError(judge(h));
    expect(h.server.requests).toHaveLength(2);
    expect(err.message).toMatch(/invalid JSON after one re-ask/);
    expect(err.usage).toMatchObject({ attempts: 2, outcome: 'error', tokens_in: 200, tokens_out: 40 });
    expect(err.usage.cost_usd).toBeCloseTo((200 * 2 + 40 * 10) / 1e6, 12);
    expect((await h.audit()).map((l) => l.outcome)).toEqual(['reask', 'invalid_json']);
  });

  it('keeps reasoning_content and returns plain text from text()', async () => {
    const h = await harness([ok('The moderator says: next speaker juror-b.', { reasoning_content: 'weighing the transcript' })]);
    const res = await h.gw.text({ ctx: { ...ctx, phase: 'moderator', participant: 'moderator' }, seat: h.seat, messages });
    expect(res.value).toBe('The moderator says: next speaker juror-b.');
    expect(res.reasoning).toBe('weighing the transcript');
    const lines = await h.audit();
    expect(lines[0]).toMatchObject({ kind: 'text', reasoning: 'weighing the transcript', response: res.value, outcome: 'ok', phase: 'moderator' });
  });
});

describe('gateway: cache', () => {
  it('replays an identical call with 0 HTTP requests and identical usage', async () => {
    const h = await harness([ok(VALID, { reasoning_content: 'hmm', tokens_in: 321, tokens_out: 45 }), ok(VALID)]);
    const first = await judge(h);
    const second = await judge(h);
    expect(h.server.requests).toHaveLength(1);
    expect(first.cached).toBe(false);
    expect(second.cached).toBe(true);
    expect(second.usage).toEqual(first.usage);
    expect(second.value).toEqual(first.value);
    expect(second.raw).toBe(first.raw);
    expect(second.reasoning).toBe('hmm');
    const s = h.gw.ledger.summary();
    expect(s).toMatchObject({ calls_made: 1, calls_cached: 1 });
    expect(s.total.spent_usd).toBeCloseTo(first.usage.cost_usd!, 12);
    expect((await h.audit()).map((l) => l.outcome)).toEqual(['ok', 'cache_hit']);
  });

  it('survives a restart: a new gateway over the same cache dir makes no request', async () => {
    const a = await harness([ok(VALID)]);
    const first = await judge(a);
    await a.gw.close();
    const b = await harness([], { dir: a.dir, server: a.server });
    const again = await judge(b);
    expect(a.server.requests).toHaveLength(1);
    expect(again.usage).toEqual(first.usage);
    expect(again.cached).toBe(true);
  });

  it('keys a simulator endpoint by profile, not by its per-run port', async () => {
    const a = await harness([ok(VALID)], { endpoint: { kind: 'simulator' } });
    await judge(a);
    await a.gw.close();
    const b = await harness([], { dir: a.dir, endpoint: { kind: 'simulator' } }); // new server, new port
    expect(b.server.url).not.toBe(a.server.url);
    expect((await judge(b)).cached).toBe(true);
    expect(b.server.requests).toHaveLength(0);
    const c = await harness([ok(VALID)], { dir: a.dir, endpoint: { kind: 'simulator', profile: 'other.yaml' } });
    expect((await judge(c)).cached).toBe(false);
  });

  it('misses on a different sample_index, seat parameter or call kind', async () => {
    const h = await harness(() => ok(VALID));
    await judge(h);
    await judge(h, { sample_index: 1 });
    await h.gw.text({ ctx, seat: h.seat, messages });
    h.seat.temperature = 0.9;
    await judge(h);
    expect(h.server.requests).toHaveLength(4);
  });

  it('never caches errors', async () => {
    const h = await harness([{ status: 400, body: {} }, { status: 400, body: {} }, ok('no json here'), ok('still none'), ok(VALID)]);
    await callError(judge(h));
    await callError(judge(h));
    await callError(judge(h)); // invalid after re-ask
    expect(await readdir(join(h.dir, 'cache')).catch(() => [])).toEqual([]);
    await judge(h);
    expect(h.server.requests).toHaveLength(5);
  });

  it('does nothing when disabled', async () => {
    const h = await harness(() => ok(VALID), { gateway: { cache: { enabled: false, dir: '' } } });
    const dir = join(h.dir, 'cache');
    await judge(h);
    const second = await judge(h);
    expect(second.cached).toBe(false);
    expect(h.server.requests).toHaveLength(2);
    expect(await readdir(dir).catch(() => 'absent')).toBe('absent');
  });
});

describe('gateway: secrets', () => {
  it('the sentinel key reaches the server but never the audit log, errors or results', async () => {
    const echo = (r: { headers: Record<string, unknown> }) => String(r.headers.authorization);
    const h = await harness((r) => {
      if (r.n === 1) return { status: 500, body: { error: { message: `upstream saw ${echo(r)}` } } };
      if (r.n === 2) return ok(`{"negatives": [], "note": "${echo(r)}"}`, { reasoning_content: `key was ${echo(r)}` });
      return { status: 400, body: { error: { message: `bad request for ${echo(r)}` } } };
    });
    const res = await judge(h);
    // A prompt that happens to contain another secret from the env: it must not reach the log.
    const err = await callError(h.gw.text({ ctx, seat: h.seat, messages: [{ role: 'user', content: `token in data: ${OTHER_SECRET}` }] }));
    expect(h.server.requests.every((r) => r.headers.authorization === `Bearer ${SENTINEL}`)).toBe(true);
    expect(JSON.stringify(res)).not.toContain(SENTINEL);
    expect(res.raw).toContain('[REDACTED]');
    expect(err.message + JSON.stringify(err.usage) + String(err.stack)).not.toContain(SENTINEL);
    await h.gw.close();
    const log = await readFile(h.auditPath, 'utf8');
    expect(log.split('\n').filter(Boolean)).toHaveLength(3);
    expect(log).not.toContain(OTHER_SECRET);
    expect(log).not.toContain(SENTINEL);
    expect(log).toContain('[REDACTED]');
    const cacheFiles = await readdir(join(h.dir, 'cache'), { recursive: true });
    for (const f of cacheFiles.filter((f) => String(f).endsWith('.json'))) expect(await readFile(join(h.dir, 'cache', String(f)), 'utf8')).not.toContain(SENTINEL);
  });
});

describe('gateway: audit and ledger', () => {
  it('writes a complete line for every attempt', async () => {
    const h = await harness([{ status: 503, body: {} }, ok(VALID, { reasoning_content: 'r', tokens_in: 7, tokens_out: 3 })]);
    await judge(h, { sample_index: 2 });
    const lines = await h.audit();
    expect(lines).toHaveLength(2);
    for (const l of lines) {
      expect(l).toMatchObject({ caller: 'test.gateway', phase: 'phase1', participant: 'juror-a', record_id: 'rec-1', model: 'judge-model', endpoint: 'local', sample_index: 2, kind: 'structured:JudgementOutput', messages });
      expect(l.prompt_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(Number.isNaN(Date.parse(l.ts))).toBe(false);
      expect(l.latency_ms).toBeGreaterThanOrEqual(0);
    }
    expect(lines[0]).toMatchObject({ attempt: 1, outcome: 'retryable_error', response: null, usage: null });
    expect(lines[0]!.error).toContain('503');
    expect(lines[1]).toMatchObject({ attempt: 2, outcome: 'ok', response: VALID, reasoning: 'r', usage: { tokens_in: 7, tokens_out: 3 }, error: null });
  });

  it('ledger totals equal the sum of the calls and costs follow the price table', async () => {
    const tokens = [
      [1200, 300],
      [800, 150],
      [5000, 1000],
    ] as const;
    let i = 0;
    const h = await harness(() => {
      const [tin, tout] = tokens[i++ % tokens.length]!;
      return ok(VALID, { tokens_in: tin, tokens_out: tout });
    });
    const r1 = await judge(h, { record_id: 'a' });
    const r2 = await judge(h, { record_id: 'a', participant: 'juror-b', sample_index: 1 });
    const cheapSeat = { ...h.seat, model: 'unpriced-model' };
    const r3 = await h.gw.structured({ ctx: { ...ctx, record_id: 'b', phase: 'consolidation', participant: 'consolidator' }, seat: cheapSeat, messages, schema: z.object({ negatives: z.array(z.unknown()) }), schemaName: 'Loose' });
    expect(r1.usage.cost_usd).toBeCloseTo((1200 * 2 + 300 * 10) / 1e6, 12);
    expect(r2.usage.cost_usd).toBeCloseTo((800 * 2 + 150 * 10) / 1e6, 12);
    expect(r3.usage.cost_usd).toBeNull(); // unknown, not free (issue 13)
    const s = h.gw.ledger.summary();
    const all = [r1, r2, r3].map((r) => r.usage);
    expect(s.total.calls).toBe(3);
    expect(s.total.tokens_in).toBe(7000);
    expect(s.total.tokens_out).toBe(1450);
    expect(s.total.cost_usd).toBeCloseTo(all.reduce((a, u) => a + u.cost_usd!, 0), 12);
    expect(s.by_participant['juror-b']!.tokens_in).toBe(800);
    expect(s.by_phase.consolidation!.calls).toBe(1);
    expect(s.by_model['unpriced-model']!.cost_usd).toBe(0); // totals hold priced calls only
    expect(s.by_model['unpriced-model']!.unpriced_calls).toBe(1);
    expect(s.unpriced_models).toEqual(['unpriced-model']);
    expect(s.records).toBe(2);
    expect(s.cost_per_record_mean).toBeCloseTo(s.total.cost_usd / 2, 12);
  });
});

describe('gateway: providers', () => {
  it('gives each endpoint its own connection pool, reused across calls', async () => {
    const server = await startScriptedServer(() => ok(VALID));
    const dir = await mkdtemp(join(tmpdir(), 'rj-gw-'));
    const ep = EndpointConfig.parse({ base_url: server.url, max_concurrency: 1 });
    const gw = createGateway({ endpoints: { a: ep, b: ep }, prices: {}, cache: { enabled: false, dir }, auditLogPath: null, env: {} });
    open.push({ server, gw });
    const seat = (endpoint: string) => ParticipantConfig.parse({ id: 'x', endpoint, model: 'm' });
    const order = ['a', 'a', 'b', 'b', 'a', 'b', 'a', 'a', 'b', 'b'];
    for (const name of order) await gw.text({ ctx, seat: seat(name), messages });
    const ports = (name: string) => new Set(server.requests.filter((r) => order[r.n - 1] === name).map((r) => r.remotePort));
    const [a, b] = [ports('a'), ports('b')];
    expect(a.size).toBe(1); // keep-alive: one connection per endpoint, reused
    expect(b.size).toBe(1);
    expect([...a][0]).not.toBe([...b][0]); // and never the other endpoint's
  });

  it('uses an injected provider and one provider per endpoint', async () => {
    const made: string[] = [];
    const dir = await mkdtemp(join(tmpdir(), 'rj-gw-'));
    const ep = EndpointConfig.parse({ kind: 'simulator', base_url: 'http://sim.invalid/v1' });
    const gw = createGateway({
      endpoints: { a: ep, b: ep },
      prices: {},
      cache: { enabled: false, dir },
      auditLogPath: null,
      providerFor: (name) => {
        made.push(name);
        return { name, complete: async (req) => ({ content: `${name}:${req.messages.length}`, tokens_in: 1, tokens_out: 1 }) };
      },
    });
    const seat = (endpoint: string) => ParticipantConfig.parse({ id: 'x', endpoint, model: 'm' });
    expect((await gw.text({ ctx, seat: seat('a'), messages })).value).toBe('a:2');
    expect((await gw.text({ ctx, seat: seat('b'), messages })).value).toBe('b:2');
    await gw.text({ ctx, seat: seat('a'), messages });
    expect(made).toEqual(['a', 'b']);
    await expect(gw.text({ ctx, seat: seat('nope'), messages })).rejects.toThrow(/unknown endpoint "nope"/);
    await gw.close();
    await expect(gw.text({ ctx, seat: seat('a'), messages })).rejects.toThrow(/closed/);
  });
});
