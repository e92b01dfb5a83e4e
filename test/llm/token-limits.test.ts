/**
 * Token limits against a scripted OpenAI-compatible server, through the real openai client:
 * a default max_tokens per kind of call, one re-ask with a larger budget for a cut reply when the
 * seat has one, and a prompt that cannot fit the model's context window (configured, or told by
 * GET /v1/models) failing before anything is sent, with the sizes in the message.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EndpointConfig, ParticipantConfig, type MaxTokensConfig } from '../../schemas/config.js';
import { JudgementOutput } from '../../schemas/defect.js';
import type { Phase } from '../../schemas/usage.js';
import type { AuditEntry } from '../../src/llm/audit.js';
import { createGateway, type Gateway } from '../../src/llm/gateway.js';
import { isEndpointOutage } from '../../src/llm/outage.js';
import { DEFAULT_MAX_TOKENS, estimatePromptTokens, PromptTooLargeError, windowFromModels } from '../../src/llm/tokens.js';
import { NoObjectGeneratedError, truncatedAt, type CallContext, type ChatMessage } from '../../src/llm/types.js';
import { ok, startScriptedServer, type Script, type ScriptedOptions, type ScriptedServer } from './helpers/scripted-server.js';

const VALID = '{"negatives":[]}';
const CUT = '{"negatives":[{"statement_refs":["STEP-2"],"what_went_wr';
const messages: ChatMessage[] = [{ role: 'system', content: 'You audit reasoning.' }, { role: 'user', content: 'Audit STEP-1..STEP-3. '.repeat(50) }];
const ctx = (phase: Phase, participant = 'juror-a'): CallContext => ({ record_id: 'rec-1', phase, participant, caller: 'test.tokens' });

interface H {
  server: ScriptedServer;
  gw: Gateway;
  audit(): Promise<AuditEntry[]>;
}
const open: H[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) {
    await h.gw.close();
    await h.server.close();
  }
});

async function harness(script: Script, o: { endpoint?: Record<string, unknown>; maxTokens?: MaxTokensConfig; server?: ScriptedOptions } = {}): Promise<H> {
  const server = await startScriptedServer(script, o.server ?? {});
  const auditPath = join(await mkdtemp(join(tmpdir(), 'rj-tok-')), 'audit.jsonl');
  const gw = createGateway({
    endpoints: { ep: EndpointConfig.parse({ base_url: server.url, max_retries: 1, backoff_base_ms: 1, backoff_max_ms: 2, ...o.endpoint }) },
    prices: {},
    cache: { enabled: false, dir: '.cache/unused' },
    auditLogPath: auditPath,
    env: {},
    sleep: async () => undefined,
    ...(o.maxTokens ? { maxTokens: o.maxTokens } : {}),
  });
  const h: H = {
    server,
    gw,
    audit: async () => {
      await gw.close();
      return (await readFile(auditPath, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l) as AuditEntry);
    },
  };
  open.push(h);
  return h;
}

const seatOf = (over: Record<string, unknown> = {}) => ParticipantConfig.parse({ id: 'juror-a', endpoint: 'ep', model: 'm', ...over });
const judge = (h: H, seat = seatOf(), phase: Phase = 'phase1') => h.gw.structured({ ctx: ctx(phase), seat, messages, schema: JudgementOutput, schemaName: 'JudgementOutput' });

async function rejection(p: Promise<unknown>): Promise<Error> {
  const e = await p.then(() => null, (err: unknown) => err);
  expect(e).toBeInstanceOf(Error);
  return e as Error;
}

describe('default max_tokens per kind of call', () => {
  it('every call carries one: the seat\'s own, else the configured default for its kind, else the built-in one', async () => {
    const h = await harness(() => ok(VALID), { maxTokens: { moderator: 777 } });
    const kinds: Phase[] = ['phase1', 'consolidation', 'moderator', 'extraction', 'taxonomy'];
    for (const phase of kinds) await judge(h, seatOf(), phase);
    await h.gw.text({ ctx: ctx('juror_turn'), seat: seatOf(), messages });
    await judge(h, seatOf({ max_tokens: 99 }), 'moderator');
    const sent = h.server.requests.map((r) => r.body.max_tokens);
    expect(sent).toEqual([DEFAULT_MAX_TOKENS.phase1, DEFAULT_MAX_TOKENS.consolidation, 777, DEFAULT_MAX_TOKENS.extraction, DEFAULT_MAX_TOKENS.taxonomy, DEFAULT_MAX_TOKENS.juror_turn, 99]);
    expect(DEFAULT_MAX_TOKENS).toEqual({ phase1: 8192, consolidation: 8192, extraction: 8192, moderator: 2048, juror_turn: 2048, taxonomy: 8192, removal: 4096, arbiter: 4096, grounding: 1024, repair: 16384 });
    // the audit log says what each attempt was sent with
    const lines = await h.audit();
    expect(lines.map((l) => l.sampling?.max_tokens)).toEqual(sent);
    expect(lines[0]!.sampling).toEqual({ temperature: 1, max_tokens: 8192, response_format: 'none' });
  });
});

describe('a reply cut at max_tokens', () => {
  it('is asked again once with truncation_retry_max_tokens, and the whole reply is accepted', async () => {
    const h = await harness([ok(CUT, { finish_reason: 'length', tokens_out: 40 }), ok(VALID)]);
    const res = await judge(h, seatOf({ max_tokens: 40, truncation_retry_max_tokens: 400 }));
    expect(res.value).toEqual({ negatives: [] });
    expect(res.finish_reason).toBe('stop');
    expect(h.server.requests.map((r) => r.body.max_tokens)).toEqual([40, 400]);
    // same conversation: a larger budget, not a corrective re-ask
    expect(h.server.requests[1]!.body.messages).toEqual(h.server.requests[0]!.body.messages);
    const lines = await h.audit();
    expect(lines.map((l) => [l.turn, l.outcome, l.finish_reason, l.error, l.sampling?.max_tokens])).toEqual([
      ['initial', 'truncated', 'length', truncatedAt(40), 40],
      ['larger_budget', 'ok', 'stop', null, 400],
    ]);
  });

  it('fails as "truncated at max_tokens (N)" with the larger budget when that reply is cut too', async () => {
    const h = await harness([ok(CUT, { finish_reason: 'length' }), ok(CUT, { finish_reason: 'length' }), ok(VALID)]);
    const err = (await rejection(judge(h, seatOf({ max_tokens: 40, truncation_retry_max_tokens: 400 })))) as NoObjectGeneratedError;
    expect(err).toBeInstanceOf(NoObjectGeneratedError);
    expect(err.message).toBe('juror-a (m@ep, phase1) failed after 2 attempt(s): truncated at max_tokens (400)');
    expect(h.server.requests).toHaveLength(2);
  });

  it('is not asked again when no larger budget is configured, or the configured one is not larger', async () => {
    const h = await harness(() => ok(CUT, { finish_reason: 'length' }));
    const none = await rejection(judge(h, seatOf({ max_tokens: 40 })));
    expect(none.message).toMatch(/failed after 1 attempt\(s\): truncated at max_tokens \(40\)$/);
    const smaller = await rejection(judge(h, seatOf({ max_tokens: 40, truncation_retry_max_tokens: 40 })));
    expect(smaller.message).toMatch(/failed after 1 attempt\(s\): truncated at max_tokens \(40\)$/);
    // the built-in default is the budget named when the seat has none
    const dflt = await rejection(judge(h));
    expect(dflt.message).toMatch(/truncated at max_tokens \(8192\)$/);
    expect(h.server.requests).toHaveLength(3);
  });

  it('deliberation turns (text) get the same re-ask, and fail the same way', async () => {
    const h = await harness([ok('STEP-2 is wro', { finish_reason: 'length' }), ok('STEP-2 is wrong.'), ok('STEP-2 is', { finish_reason: 'length' })]);
    const res = await h.gw.text({ ctx: ctx('juror_turn'), seat: seatOf({ truncation_retry_max_tokens: 4096 }), messages });
    expect(res.value).toBe('STEP-2 is wrong.');
    expect(h.server.requests.map((r) => r.body.max_tokens)).toEqual([2048, 4096]);
    const err = await rejection(h.gw.text({ ctx: ctx('juror_turn'), seat: seatOf(), messages }));
    expect(err.message).toBe('juror-a (m@ep, juror_turn) failed after 1 attempt(s): truncated at max_tokens (2048)');
  });

  it('gets a larger budget capped by the room the context window leaves', async () => {
    const prompt = estimatePromptTokens(messages);
    const h = await harness([ok(CUT, { finish_reason: 'length' }), ok(VALID)], { endpoint: { context_window: prompt + 100 } });
    await judge(h, seatOf({ max_tokens: 40, truncation_retry_max_tokens: 5000 }));
    expect(h.server.requests.map((r) => r.body.max_tokens)).toEqual([40, 100]);
  });
});

describe('a prompt that cannot fit the context window', () => {
  it('fails before it is sent, with the sizes in the message; the endpoint stays up', async () => {
    const prompt = estimatePromptTokens(messages);
    const h = await harness(() => ok(VALID), { endpoint: { context_window: prompt + 100 } });
    const err = await rejection(judge(h, seatOf({ max_tokens: 101 })));
    expect(err).toBeInstanceOf(PromptTooLargeError);
    expect(isEndpointOutage(err)).toBe(false);
    expect(err.message).toBe(
      `juror-a (m@ep, phase1): prompt does not fit the context window: ~${prompt} prompt tokens (estimate, 4 chars/token) + max_tokens 101 = ${prompt + 101} > ${prompt + 100} tokens (endpoints.ep.context_window); not sent`,
    );
    expect(h.server.requests).toHaveLength(0);
    // one token less fits, and the endpoint was never marked down
    await judge(h, seatOf({ max_tokens: 100 }));
    expect(h.server.requests).toHaveLength(1);
    expect(h.gw.health.anyDown()).toBe(false);
    expect(h.gw.health.endpoints().map((e) => [e.name, e.state, e.failures])).toEqual([['ep', 'up', 0]]);
  });

  it('is found through GET /v1/models (vLLM max_model_len), asked once per model', async () => {
    const prompt = estimatePromptTokens(messages);
    const models = { object: 'list', data: [{ id: 'other', max_model_len: 1_000_000 }, { id: 'm', object: 'model', max_model_len: prompt + 50 }] };
    const h = await harness(() => ok(VALID), { server: { models } });
    const err = await rejection(judge(h));
    expect(err.message).toContain(`+ max_tokens 8192 = ${prompt + 8192} > ${prompt + 50} tokens (GET /models max_model_len); not sent`);
    await judge(h, seatOf({ max_tokens: 50 }));
    await rejection(judge(h, seatOf({ max_tokens: 51 })));
    expect(h.server.requests.map((r) => r.body.max_tokens)).toEqual([50]);
    expect(h.server.modelListings).toBe(1);
  });

  it('a configured context_window wins over the server, and a server that says nothing leaves calls unchecked', async () => {
    const prompt = estimatePromptTokens(messages);
    const models = { data: [{ id: 'm', max_model_len: 10 }] };
    const configured = await harness(() => ok(VALID), { endpoint: { context_window: prompt + 8192 }, server: { models } });
    await judge(configured);
    expect(configured.server.requests).toHaveLength(1);
    expect(configured.server.modelListings).toBe(0);
    const silent = await harness(() => ok(VALID), { server: { models: { data: [{ id: 'm', object: 'model', owned_by: 'me' }] } } });
    await judge(silent, seatOf({ max_tokens: 1_000_000 }));
    expect(silent.server.requests).toHaveLength(1);
    const noListing = await harness(() => ok(VALID));
    await judge(noListing, seatOf({ max_tokens: 1_000_000 }));
    expect(noListing.server.requests).toHaveLength(1);
  });
});

describe('windowFromModels', () => {
  it('reads what vLLM, llama.cpp, OpenRouter and LM Studio say, by model id or the only entry', () => {
    expect(windowFromModels({ data: [{ id: 'm', max_model_len: 32768 }] }, 'm')).toEqual({ tokens: 32768, from: 'GET /models max_model_len' });
    // llama.cpp server: one model, whatever its id; the running context before the trained one
    expect(windowFromModels({ data: [{ id: 'smollm2.gguf', meta: { n_ctx_train: 8192 } }] }, 'm')).toEqual({ tokens: 8192, from: 'GET /models meta.n_ctx_train' });
    expect(windowFromModels({ data: [{ id: 'x', meta: { n_ctx: 4096, n_ctx_train: 8192 } }] }, 'm')).toEqual({ tokens: 4096, from: 'GET /models meta.n_ctx' });
    expect(windowFromModels({ data: [{ id: 'a/b', context_length: 128000 }] }, 'a/b')).toEqual({ tokens: 128000, from: 'GET /models context_length' });
    expect(windowFromModels({ data: [{ id: 'q', max_context_length: 4096 }] }, 'q')).toEqual({ tokens: 4096, from: 'GET /models max_context_length' });
    // several models and none is ours, or nothing usable: unknown
    expect(windowFromModels({ data: [{ id: 'a', max_model_len: 1 }, { id: 'b', max_model_len: 2 }] }, 'm')).toBeUndefined();
    expect(windowFromModels({ data: [{ id: 'm', max_model_len: '4096' }] }, 'm')).toBeUndefined();
    expect(windowFromModels({ data: [{ id: 'm', max_model_len: 0 }] }, 'm')).toBeUndefined();
    expect(windowFromModels(null, 'm')).toBeUndefined();
    expect(windowFromModels({ object: 'list' }, 'm')).toBeUndefined();
  });
});
