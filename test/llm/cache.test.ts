import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CallUsage } from '../../schemas/usage.js';
import { cacheKey, canonicalJson, createResponseCache, hashMessages, type CacheKeyInput } from '../../src/llm/cache.js';

const base: CacheKeyInput = {
  base_url: 'http://h/v1',
  kind: 'structured:JudgementOutput',
  sample_index: 0,
  request: { model: 'm', messages: [{ role: 'user', content: 'hi' }], temperature: 1, top_p: 0.9, max_tokens: 100, seed: 7, reasoning_effort: 'low', extra_body: { a: 1, b: { c: 2 } } },
};
const usage: CallUsage = { phase: 'phase1', participant: 'j1', model: 'm', endpoint: 'e', tokens_in: 10, tokens_out: 5, cost_usd: 0.001, latency_ms: 123, attempts: 2, outcome: 'ok' };

describe('cache key', () => {
  it('ignores key order and undefined fields', () => {
    expect(canonicalJson({ b: 1, a: { d: undefined, c: [1, { z: 1, y: 2 }] } })).toBe('{"a":{"c":[1,{"y":2,"z":1}]},"b":1}');
    const reordered: CacheKeyInput = { ...base, request: { ...base.request, extra_body: { b: { c: 2 }, a: 1 } } };
    expect(cacheKey(reordered)).toBe(cacheKey(base));
  });

  it('changes with every component', () => {
    const k = cacheKey(base);
    const variants: CacheKeyInput[] = [
      { ...base, base_url: 'http://other/v1' },
      { ...base, kind: 'text' },
      { ...base, sample_index: 1 },
      { ...base, request: { ...base.request, model: 'm2' } },
      { ...base, request: { ...base.request, temperature: 0.5 } },
      { ...base, request: { ...base.request, top_p: 1 } },
      { ...base, request: { ...base.request, max_tokens: 101 } },
      { ...base, request: { ...base.request, seed: 8 } },
      { ...base, request: { ...base.request, reasoning_effort: 'high' } },
      { ...base, request: { ...base.request, extra_body: { a: 2, b: { c: 2 } } } },
      { ...base, request: { ...base.request, messages: [{ role: 'user', content: 'hi!' }] } },
      { ...base, request: { ...base.request, messages: [{ role: 'system', content: 'hi' }] } },
    ];
    const keys = new Set([k, ...variants.map(cacheKey)]);
    expect(keys.size).toBe(variants.length + 1);
  });

  it('hashes messages by role and content in order', () => {
    const a = hashMessages([{ role: 'system', content: 'x' }, { role: 'user', content: 'y' }]);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(hashMessages([{ role: 'user', content: 'y' }, { role: 'system', content: 'x' }])).not.toBe(a);
  });
});

describe('response cache', () => {
  it('round-trips entries in sharded files and leaves no temp files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rj-cache-'));
    const cache = createResponseCache({ enabled: true, dir });
    const key = cacheKey(base);
    expect(await cache.get(key)).toBeNull();
    await cache.put(key, { raw: '{"negatives":[]}', reasoning: 'thought', usage });
    expect(await cache.get(key)).toEqual({ raw: '{"negatives":[]}', reasoning: 'thought', usage });
    expect(dirname(cache.pathFor(key))).toBe(join(dir, key.slice(0, 2)));
    expect(await readdir(join(dir, key.slice(0, 2)))).toEqual([`${key}.json`]);
  });

  it('treats damaged files as misses', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rj-cache-'));
    const cache = createResponseCache({ enabled: true, dir });
    const key = cacheKey(base);
    await cache.put(key, { raw: 'x', usage });
    await writeFile(cache.pathFor(key), '{"format":1,"raw":"x","usage":{"oops":1}}');
    expect(await cache.get(key)).toBeNull();
    await writeFile(cache.pathFor(key), '{not json');
    expect(await cache.get(key)).toBeNull();
  });

  it('neither reads nor writes when disabled', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rj-cache-'));
    const on = createResponseCache({ enabled: true, dir });
    const off = createResponseCache({ enabled: false, dir });
    const key = cacheKey(base);
    await on.put(key, { raw: 'x', usage });
    expect(await off.get(key)).toBeNull();
    await off.put(cacheKey({ ...base, sample_index: 9 }), { raw: 'y', usage });
    expect(await readdir(dir)).toEqual([key.slice(0, 2)]);
    expect(JSON.parse(await readFile(on.pathFor(key), 'utf8')).raw).toBe('x');
  });
});
