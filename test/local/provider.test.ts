import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EndpointConfig, JuryConfig } from '../../schemas/config.js';
import { defaultThreads, LocalEngineError, type EngineOptions } from '../../src/llm/local/engine.js';
import { acquireEngine, openEngineCount } from '../../src/llm/local/registry.js';
import { createLocalProvider } from '../../src/llm/local-provider.js';
import { ProviderError } from '../../src/llm/types.js';
import { fakeEngine } from './fake-engine.js';

const dir = mkdtempSync(join(tmpdir(), 'rj-local-'));
const modelFile = join(dir, 'm.gguf');
writeFileSync(modelFile, 'GGUF');
const endpoint = (over: Record<string, unknown> = {}) => EndpointConfig.parse({ kind: 'local', model_path: modelFile, timeout_ms: 5000, ...over });
const never = new AbortController().signal;

describe('config: kind local', () => {
  it('needs model_path, and mixes with remote endpoints', () => {
    expect(EndpointConfig.safeParse({ kind: 'local' }).success).toBe(false);
    expect(EndpointConfig.safeParse({ kind: 'local', model_path: 'm.gguf', threads: 0 }).success).toBe(false);
    const c = JuryConfig.parse({
      endpoints: { laptop: { kind: 'local', model_path: 'smollm2-135m', threads: 2, context_size: 4096 }, remote: { base_url: 'http://127.0.0.1:8000/v1' } },
      jurors: [
        { id: 'a', endpoint: 'laptop', model: 'smollm2' },
        { id: 'b', endpoint: 'remote', model: 'gpt-oss-120b' },
      ],
      mode: 'union',
    });
    expect(c.endpoints.laptop).toMatchObject({ kind: 'local', model_path: 'smollm2-135m', threads: 2, context_size: 4096 });
    expect(c.endpoints.remote!.kind).toBe('openai');
  });

  it('defaults to 1 thread under CI and leaves a core free elsewhere', () => {
    expect(defaultThreads({ CI: 'true' }, 16)).toBe(1);
    expect(defaultThreads({}, 2)).toBe(1);
    expect(defaultThreads({}, 8)).toBe(4);
    expect(defaultThreads({ CI: 'true', RJ_LOCAL_THREADS: '3' }, 2)).toBe(3);
    expect(defaultThreads({ CI: 'false' }, 3)).toBe(2);
  });
});

describe('local provider', () => {
  it('passes the request to the engine and returns its counts', async () => {
    const engine = fakeEngine(() => ({ content: '{"negatives":[]}', tokens_in: 321, tokens_out: 9, reasoning: 'thinking' }));
    const seen: EngineOptions[] = [];
    const p = createLocalProvider('laptop', endpoint({ threads: 2, context_size: 1024 }), {
      acquire: async (o) => (seen.push(o), { engine, release: async () => void engine.close() }),
    });
    const schema = { type: 'object', properties: { negatives: { type: 'array' } }, required: ['negatives'] };
    const r = await p.complete({ model: 'any-name', messages: [{ role: 'user', content: 'hi' }], temperature: 0.7, top_p: 0.9, max_tokens: 64, seed: 42, json_schema: schema, extra_body: { ignored: true } }, never);
    expect(r).toEqual({ content: '{"negatives":[]}', reasoning: 'thinking', finish_reason: 'stop', tokens_in: 321, tokens_out: 9 });
    expect(seen).toEqual([{ modelPath: modelFile, threads: 2, contextSize: 1024 }]);
    expect(engine.calls[0]).toMatchObject({ messages: [{ role: 'user', content: 'hi' }], jsonSchema: schema, temperature: 0.7, topP: 0.9, maxTokens: 64, seed: 42, timeoutMs: 5000 });
    // Loaded once, released on close.
    await p.complete({ model: 'x', messages: [{ role: 'user', content: 'again' }] }, never);
    expect(seen).toHaveLength(1);
    expect(engine.calls[1]!.jsonSchema).toBeUndefined();
    await p.close!();
    expect(engine.closed).toBe(1);
    await expect(p.complete({ model: 'x', messages: [] }, never)).rejects.toMatchObject({ retryable: false });
  });

  it('maps engine failures to retryable or final provider errors', async () => {
    const errors = [
      new LocalEngineError('timeout: slow', 'timeout', true),
      new LocalEngineError('prompt too long', 'context_overflow', false),
      new LocalEngineError('generation failed: bad utf-8', 'generation', true),
    ];
    const engine = fakeEngine(() => errors.shift()!);
    const p = createLocalProvider('laptop', endpoint(), { acquire: async () => ({ engine, release: async () => undefined }) });
    const req = { model: 'm', messages: [{ role: 'user' as const, content: 'x' }] };
    const e1 = await p.complete(req, never).catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(ProviderError);
    expect(e1).toMatchObject({ retryable: true, message: 'timeout: slow' });
    await expect(p.complete(req, never)).rejects.toMatchObject({ retryable: false, status: 400 });
    await expect(p.complete(req, never)).rejects.toMatchObject({ retryable: true });
  });

  it('fails without retry when the model cannot be loaded, and tries again on the next call', async () => {
    let loads = 0;
    const engine = fakeEngine();
    const p = createLocalProvider('laptop', endpoint(), {
      acquire: async () => {
        loads += 1;
        if (loads === 1) throw new LocalEngineError('cannot load model: bad magic', 'load', false);
        return { engine, release: async () => undefined };
      },
    });
    const req = { model: 'm', messages: [{ role: 'user' as const, content: 'x' }] };
    await expect(p.complete(req, never)).rejects.toMatchObject({ retryable: false, message: expect.stringContaining('bad magic') });
    await expect(p.complete(req, never)).resolves.toMatchObject({ tokens_in: 120 });
    expect(loads).toBe(2);
  });

  it('rejects at once when the caller already gave up', async () => {
    const engine = fakeEngine();
    const p = createLocalProvider('laptop', endpoint(), { acquire: async () => ({ engine, release: async () => undefined }) });
    const ctl = new AbortController();
    ctl.abort(new Error('phase 1 ceiling'));
    await expect(p.complete({ model: 'm', messages: [] }, ctl.signal)).rejects.toMatchObject({ retryable: false, message: expect.stringContaining('phase 1 ceiling') });
    expect(engine.calls).toHaveLength(0);
  });
});

describe('engine registry', () => {
  it('shares one engine per model file and settings, and closes it with the last release', async () => {
    const made: ReturnType<typeof fakeEngine>[] = [];
    const load = async () => {
      const e = fakeEngine();
      made.push(e);
      return e;
    };
    const before = openEngineCount();
    const [a, b] = await Promise.all([acquireEngine({ modelPath: modelFile, threads: 1 }, load), acquireEngine({ modelPath: join(dir, '.', 'm.gguf'), threads: 1 }, load)]);
    const c = await acquireEngine({ modelPath: modelFile, threads: 2 }, load);
    expect(made).toHaveLength(2);
    expect(a.engine).toBe(b.engine);
    expect(c.engine).not.toBe(a.engine);
    await a.release();
    await a.release(); // idempotent: does not drop b's reference
    expect(made[0]!.closed).toBe(0);
    await b.release();
    expect(made[0]!.closed).toBe(1);
    await c.release();
    expect(openEngineCount()).toBe(before);
  });

  it('forgets a failed load so the next caller can try again', async () => {
    let n = 0;
    const load = async () => {
      n += 1;
      if (n === 1) throw new Error('not yet');
      return fakeEngine();
    };
    await expect(acquireEngine({ modelPath: modelFile, threads: 3 }, load)).rejects.toThrow('not yet');
    const lease = await acquireEngine({ modelPath: modelFile, threads: 3 }, load);
    expect(n).toBe(2);
    await lease.release();
  });
});
