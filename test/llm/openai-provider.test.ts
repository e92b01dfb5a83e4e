import { afterEach, describe, expect, it } from 'vitest';
import { EndpointConfig } from '../../schemas/config.js';
import { createOpenAIProvider, parseRetryAfter } from '../../src/llm/openai-provider.js';
import { ProviderError, type ChatRequest, type Provider } from '../../src/llm/types.js';
import { ok, startScriptedServer, type Script, type ScriptedServer } from './helpers/scripted-server.js';

const SENTINEL = 'sk-sentinel-provider-5f3a9c1e7b';
const env = { RJ_TEST_API_KEY: SENTINEL };
const req: ChatRequest = { model: 'test-model', messages: [{ role: 'system', content: 'be terse' }, { role: 'user', content: 'hi' }] };

let server: ScriptedServer | undefined;
let provider: Provider | undefined;
afterEach(async () => {
  await provider?.close?.();
  await server?.close();
  provider = undefined;
  server = undefined;
});

async function setup(script: Script, over: Record<string, unknown> = {}) {
  server = await startScriptedServer(script);
  const endpoint = EndpointConfig.parse({ base_url: server.url, api_key_env: 'RJ_TEST_API_KEY', timeout_ms: 2000, ...over });
  provider = createOpenAIProvider('local', endpoint, { env });
  return { server, provider };
}

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ProviderError);
    return err as ProviderError;
  }
  throw new Error('expected a failure');
}

describe('openai provider: constrained structured replies', () => {
  const schema = { type: 'object', properties: { negatives: { type: 'array' } }, required: ['negatives'] };
  const never = new AbortController().signal;

  it('json_schema: a structured call sends its schema as response_format; a free-text call sends none', async () => {
    const { server, provider } = await setup([ok('{"negatives":[]}'), ok('prose')], { response_format: 'json_schema' });
    await provider.complete({ ...req, json_schema: schema }, never);
    await provider.complete(req, never);
    expect(server.requests[0]!.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'reply', schema, strict: false } });
    expect(server.requests[1]!.body).not.toHaveProperty('response_format');
  });

  it('json_object asks for JSON mode; the default sends nothing, schema or not', async () => {
    const a = await setup([ok('{}')], { response_format: 'json_object' });
    await a.provider.complete({ ...req, json_schema: schema }, never);
    expect(a.server.requests[0]!.body.response_format).toEqual({ type: 'json_object' });
    await provider?.close?.();
    await server?.close();
    const b = await setup([ok('{}')]);
    await b.provider.complete({ ...req, json_schema: schema }, never);
    expect(b.server.requests[0]!.body).not.toHaveProperty('response_format');
  });
});

describe('openai provider', () => {
  it('sends the key, sampling params, extra_body and headers; reads content, reasoning and usage', async () => {
    const { server, provider } = await setup([ok('hello', { reasoning_content: 'I thought', tokens_in: 11, tokens_out: 3 })], { headers: { 'x-team': 'jury' } });
    const res = await provider.complete(
      { ...req, temperature: 0.7, top_p: 0.9, max_tokens: 256, seed: 42, reasoning_effort: 'high', extra_body: { top_k: 20, chat_template_kwargs: { thinking: true } } },
      new AbortController().signal,
    );
    expect(res).toEqual({ content: 'hello', reasoning: 'I thought', finish_reason: 'stop', tokens_in: 11, tokens_out: 3 });
    const got = server.requests[0]!;
    expect(got.headers.authorization).toBe(`Bearer ${SENTINEL}`);
    expect(got.headers['x-team']).toBe('jury');
    expect(got.body).toMatchObject({ model: 'test-model', messages: req.messages, temperature: 0.7, top_p: 0.9, max_tokens: 256, seed: 42, reasoning_effort: 'high', top_k: 20, chat_template_kwargs: { thinking: true } });
  });

  it('reads `reasoning` when `reasoning_content` is absent, and omits unset params', async () => {
    const { server, provider } = await setup([ok('x', { reasoning: 'r2' })]);
    const res = await provider.complete(req, new AbortController().signal);
    expect(res.reasoning).toBe('r2');
    expect(Object.keys(server.requests[0]!.body).sort()).toEqual(['messages', 'model']);
  });

  it('sends nothing from the ambient OPENAI_* environment', async () => {
    const saved = { org: process.env.OPENAI_ORG_ID, project: process.env.OPENAI_PROJECT_ID };
    process.env.OPENAI_ORG_ID = 'org-ambient';
    process.env.OPENAI_PROJECT_ID = 'proj-ambient';
    try {
      const { server, provider } = await setup([ok('x')]);
      await provider.complete(req, new AbortController().signal);
      expect(server.requests[0]!.headers['openai-organization']).toBeUndefined();
      expect(server.requests[0]!.headers['openai-project']).toBeUndefined();
    } finally {
      for (const [k, v] of [['OPENAI_ORG_ID', saved.org], ['OPENAI_PROJECT_ID', saved.project]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('uses "not-needed" when the key variable is unset', async () => {
    server = await startScriptedServer([ok('x')]);
    provider = createOpenAIProvider('local', EndpointConfig.parse({ base_url: server.url, api_key_env: 'RJ_UNSET_VAR' }), { env: {} });
    await provider.complete(req, new AbortController().signal);
    expect(server.requests[0]!.headers.authorization).toBe('Bearer not-needed');
  });

  it('maps statuses to retryable or not, never leaking the key the server echoes back', async () => {
    const statuses = [400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503];
    const { provider } = await setup((r) => {
      const status = statuses[r.n - 1]!;
      return { status, body: { error: { message: `bad request with ${String(r.headers.authorization)}` } } };
    });
    const seen: Array<[number | undefined, boolean]> = [];
    for (const _ of statuses) {
      const e = await failure(provider.complete(req, new AbortController().signal));
      expect(e.message).not.toContain(SENTINEL);
      expect(e.message).toContain('[REDACTED]');
      seen.push([e.status, e.retryable]);
    }
    expect(seen).toEqual([
      [400, false], [401, false], [403, false], [404, false], [408, true], [409, true], [422, false], [429, true], [500, true], [502, true], [503, true],
    ]);
  });

  it('extracts retry-after (seconds, HTTP-date) and retry-after-ms', async () => {
    const date = new Date(Date.now() + 30_000).toUTCString();
    const { provider } = await setup([
      { status: 429, headers: { 'retry-after': '7' }, body: { error: { message: 'slow down' } } },
      { status: 503, headers: { 'retry-after-ms': '1500', 'retry-after': '9' }, body: {} },
      { status: 429, headers: { 'retry-after': date }, body: {} },
    ]);
    expect((await failure(provider.complete(req, new AbortController().signal))).retryAfterMs).toBe(7000);
    expect((await failure(provider.complete(req, new AbortController().signal))).retryAfterMs).toBe(1500);
    const fromDate = (await failure(provider.complete(req, new AbortController().signal))).retryAfterMs!;
    expect(fromDate).toBeGreaterThan(25_000);
    expect(fromDate).toBeLessThanOrEqual(30_000);
  });

  it('parseRetryAfter ignores garbage', () => {
    const h = (o: Record<string, string>) => new Headers(o);
    expect(parseRetryAfter(h({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(parseRetryAfter(h({}))).toBeUndefined();
    expect(parseRetryAfter(h({ 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }))).toBe(0);
  });

  it('times out a hung request (and a stalled body) as retryable', async () => {
    const { provider } = await setup([{ hang: true }, { stallBody: true }], { timeout_ms: 250 });
    for (let i = 0; i < 2; i++) {
      const t = performance.now();
      const e = await failure(provider.complete(req, new AbortController().signal));
      expect(e.retryable).toBe(true);
      expect(e.message).toBe('timeout: no complete response within 250 ms');
      expect(performance.now() - t).toBeLessThan(2000);
    }
  });

  it('treats a caller abort as final, not retryable', async () => {
    const { provider } = await setup([{ hang: true }]);
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(new Error('phase 1 ceiling')), 50);
    const e = await failure(provider.complete(req, ctl.signal));
    expect(e.retryable).toBe(false);
    expect(e.message).toContain('phase 1 ceiling');
  });

  it('treats a refused connection as retryable', async () => {
    const s = await startScriptedServer([]);
    const url = s.url;
    await s.close();
    provider = createOpenAIProvider('gone', EndpointConfig.parse({ base_url: url }), { env });
    const e = await failure(provider.complete(req, new AbortController().signal));
    expect(e.retryable).toBe(true);
    expect(e.message).toMatch(/connection/i);
  });

  it('treats a non-JSON 200 body as retryable', async () => {
    const { provider } = await setup([{ status: 200, body: '<html>proxy error</html>' }]);
    const e = await failure(provider.complete(req, new AbortController().signal));
    expect(e.retryable).toBe(true);
  });
});
