import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalEngineError, type GenerateOptions } from '../../src/llm/local/engine.js';
import { startLocalServer, type RunningLocalServer } from '../../src/llm/local/server.js';
import { fakeEngine } from './fake-engine.js';

let server: RunningLocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, any> }> {
  const res = await fetch(`${url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

describe('serve-local HTTP API (engine faked)', () => {
  it('answers the openai client with the engine reply and its token counts', async () => {
    const engine = fakeEngine(() => ({ content: '{"ok":true}', tokens_in: 50, tokens_out: 4, stop_reason: 'maxTokens' }));
    server = await startLocalServer({ engine, modelId: 'tiny', port: 0 });
    const client = new OpenAI({ baseURL: server.url, apiKey: 'unused', maxRetries: 0 });
    const res = await client.chat.completions.create({
      model: 'whatever',
      messages: [
        { role: 'developer', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'hi ' }, { type: 'text', text: 'there' }] },
      ],
      temperature: 0.5,
      top_p: 0.8,
      max_completion_tokens: 12,
      seed: 3,
      response_format: { type: 'json_schema', json_schema: { name: 'X', schema: { type: 'object', properties: { ok: { type: 'boolean' } } } } },
    });
    expect(res.model).toBe('whatever');
    expect(res.choices[0]!.message.content).toBe('{"ok":true}');
    expect(res.choices[0]!.finish_reason).toBe('length');
    expect(res.usage).toMatchObject({ prompt_tokens: 50, completion_tokens: 4, total_tokens: 54 });
    expect(engine.calls[0]).toMatchObject({
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi there' },
      ],
      temperature: 0.5,
      topP: 0.8,
      maxTokens: 12,
      seed: 3,
      jsonSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
    });
    expect((await client.models.list()).data.map((m) => m.id)).toEqual(['tiny']);
  });

  it('picks the grammar: json_object, text, or the server default', async () => {
    const engine = fakeEngine();
    const fallback = { type: 'object', properties: { negatives: { type: 'array' } }, required: ['negatives'] };
    server = await startLocalServer({ engine, modelId: 'tiny', port: 0, defaultJsonSchema: fallback });
    const base = { model: 'm', messages: [{ role: 'user', content: 'x' }] };
    for (const body of [{ ...base, response_format: { type: 'json_object' } }, { ...base, response_format: { type: 'text' } }, base]) expect((await post(server.url, body)).status).toBe(200);
    const schemas = engine.calls.map((c: GenerateOptions) => c.jsonSchema);
    expect(schemas).toEqual([{ type: 'object', additionalProperties: true }, undefined, fallback]);
  });

  it('rejects malformed and unsupported requests with OpenAI-style errors', async () => {
    const engine = fakeEngine();
    server = await startLocalServer({ engine, modelId: 'tiny', port: 0 });
    const bad = await post(server.url, '{not json');
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('invalid_json');
    expect((await post(server.url, { model: 'm', messages: [] })).status).toBe(400);
    expect((await post(server.url, { model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true })).json.error.code).toBe('unsupported');
    expect((await post(server.url, { model: 'm', messages: [{ role: 'user', content: 'x' }], n: 2 })).json.error.code).toBe('unsupported');
    expect((await fetch(`${server.url}/chat/completions`)).status).toBe(405);
    expect((await fetch(`${server.url}/nothing`)).status).toBe(404);
    expect(engine.calls).toHaveLength(0);
  });

  it('maps engine errors to statuses the openai client retries or not', async () => {
    const errors = [new LocalEngineError('too long', 'context_overflow', false), new LocalEngineError('slow', 'timeout', true), new LocalEngineError('glitch', 'generation', true)];
    const engine = fakeEngine(() => errors.shift()!);
    server = await startLocalServer({ engine, modelId: 'tiny', port: 0 });
    const body = { model: 'm', messages: [{ role: 'user', content: 'x' }] };
    expect((await post(server.url, body)).status).toBe(400);
    expect((await post(server.url, body)).status).toBe(504);
    const last = await post(server.url, body);
    expect(last.status).toBe(500);
    expect(last.json.error.message).toBe('glitch');
  });

  it('requires the bearer key when one is set, and never echoes it', async () => {
    const engine = fakeEngine();
    server = await startLocalServer({ engine, modelId: 'tiny', port: 0, apiKey: 's3cret-key' });
    const body = { model: 'm', messages: [{ role: 'user', content: 'x' }] };
    const denied = await post(server.url, body, { authorization: 'Bearer wrong' });
    expect(denied.status).toBe(401);
    expect(JSON.stringify(denied.json)).not.toContain('s3cret');
    expect((await post(server.url, body)).status).toBe(401);
    expect((await post(server.url, body, { authorization: 'Bearer s3cret-key' })).status).toBe(200);
    expect((await fetch(server.url.replace(/\/v1$/, '/health'))).status).toBe(200);
  });

  it('stops generating when the client goes away', async () => {
    let seen: AbortSignal | undefined;
    const engine = fakeEngine(
      (o) =>
        new Promise((resolve) => {
          seen = o.signal;
          o.signal!.addEventListener('abort', () => resolve(new LocalEngineError('aborted by caller', 'aborted', false)));
        }),
    );
    server = await startLocalServer({ engine, modelId: 'tiny', port: 0 });
    const ctl = new AbortController();
    const pending = fetch(`${server.url}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }), signal: ctl.signal }).catch((e: unknown) => e);
    while (!seen) await new Promise((r) => setTimeout(r, 5));
    ctl.abort();
    await pending;
    for (let i = 0; i < 100 && !seen.aborted; i++) await new Promise((r) => setTimeout(r, 5));
    expect(seen.aborted).toBe(true);
  });
});
