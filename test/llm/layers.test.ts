/** Each gateway layer on its own, around a stand-in for the layer below it. */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EndpointConfig, ParticipantConfig } from '../../schemas/config.js';
import type { CallUsage } from '../../schemas/usage.js';
import { createAuditLog, type AuditEntry, type AuditLog } from '../../src/llm/audit.js';
import { cacheKey, createResponseCache, hashMessages } from '../../src/llm/cache.js';
import { auditAttempts, auditCacheHits } from '../../src/llm/layers/audit.js';
import { cacheIdentity, cacheLayer } from '../../src/llm/layers/cache.js';
import { ledgerLayer } from '../../src/llm/layers/ledger.js';
import { limitLayer } from '../../src/llm/layers/limit.js';
import { redactLayer } from '../../src/llm/layers/redact.js';
import { retryLayer } from '../../src/llm/layers/retry.js';
import { countUsage, newMeter, usageOf } from '../../src/llm/layers/usage.js';
import { Ledger } from '../../src/llm/ledger.js';
import { createLimiter } from '../../src/llm/limits.js';
import { providerAttempt, type Attempt, type AttemptInfo, type CallHandler, type CallInfo, type Completion, type ModelCall } from '../../src/llm/model.js';
import { createRedactor } from '../../src/util/redact.js';
import { ModelCallError, ProviderError, type CallResult, type ChatRequest } from '../../src/llm/types.js';

const seat = ParticipantConfig.parse({ id: 'juror-a', endpoint: 'ep', model: 'm' });
const req: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
const reply = (content: string, extra: Partial<Completion> = {}): Completion => ({ content, finish_reason: 'stop', tokens_in: 3, tokens_out: 2, ...extra });
const never = new AbortController().signal;

function info(over: Partial<AttemptInfo> = {}): AttemptInfo {
  const call: CallInfo = { ctx: { record_id: 'r', phase: 'phase1', participant: 'juror-a', caller: 'test.layers', sample_index: 1 }, seat, kind: 'text', meter: newMeter() };
  return { call, turn: 'initial', signal: never, willRetry: () => false, ...over };
}

function memoryLog(): AuditLog & { lines: AuditEntry[] } {
  const lines: AuditEntry[] = [];
  return { enabled: true, lines, write: async (e) => void lines.push(e), close: async () => undefined };
}

describe('provider adapter', () => {
  it('normalises a reply: an absent finish_reason reads as stop', async () => {
    const a = providerAttempt({ name: 'p', complete: async () => ({ content: 'x', tokens_in: 1, tokens_out: 2 }) });
    expect(await a(req, info())).toEqual({ content: 'x', finish_reason: 'stop', tokens_in: 1, tokens_out: 2 });
    const b = providerAttempt({ name: 'p', complete: async () => ({ content: '', reasoning: '', finish_reason: 'length', tokens_in: 1, tokens_out: 2 }) });
    expect(await b(req, info())).toEqual({ content: '', reasoning: '', finish_reason: 'length', tokens_in: 1, tokens_out: 2 });
  });
});

describe('retry layer', () => {
  it('retries retryable errors under the policy and tells each attempt whether it will be retried', async () => {
    const flags: boolean[] = [];
    let n = 0;
    const inner: Attempt = async (_r, a) => {
      n += 1;
      const err = new ProviderError(`fail ${n}`, true, 503);
      flags.push(a.willRetry(err));
      if (n < 3) throw err;
      return reply('done');
    };
    const sleeps: number[] = [];
    const turn = retryLayer({ maxRetries: 2, baseMs: 100, maxMs: 1000 }, { random: () => 0.5, sleep: async (ms) => void sleeps.push(ms) })(inner);
    expect((await turn(req, info())).content).toBe('done');
    expect(flags).toEqual([true, true, false]);
    expect(sleeps).toEqual([50, 100]);
  });

  it('does not retry a non-retryable error', async () => {
    let n = 0;
    const turn = retryLayer({ maxRetries: 5, baseMs: 1, maxMs: 1 }, { sleep: async () => undefined })(async () => {
      n += 1;
      throw new ProviderError('401', false, 401);
    });
    await expect(turn(req, info())).rejects.toThrow('401');
    expect(n).toBe(1);
  });
});

describe('limit layer', () => {
  it('runs attempts within the limiter and marks their start', async () => {
    const limiter = createLimiter({ max_concurrency: 1 });
    let running = 0;
    let peak = 0;
    const starts: number[] = [];
    const attempt = limitLayer(limiter)(async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      return reply('x');
    });
    await Promise.all([0, 1, 2].map((i) => attempt(req, info({ onStart: () => starts.push(i) }))));
    expect(peak).toBe(1);
    expect(starts).toEqual([0, 1, 2]);
    await limiter.close();
  });

  it('hands a reply up only after the request that took its slot was written', async () => {
    // The HTTP client writes a queued request on a later tick; the stand-in writes from a setImmediate, the latest of them.
    const limiter = createLimiter({ max_concurrency: 1 });
    const events: string[] = [];
    const attempt = limitLayer(limiter)(async (r) => {
      if (r.model === 'second') setImmediate(() => events.push('second written'));
      return reply(r.model);
    });
    const first = attempt({ ...req, model: 'first' }, info()).then((c) => void events.push(`${c.content} handed up`));
    const second = attempt({ ...req, model: 'second' }, info());
    await Promise.all([first, second]);
    expect(events).toEqual(['second written', 'first handed up']);
    // failures wait for the write too, and keep their error
    const failing = limitLayer(limiter)(async () => {
      throw new ProviderError('boom', false);
    });
    await expect(failing(req, info())).rejects.toThrow('boom');
    await limiter.close();
  });
});

describe('redaction layer', () => {
  const redactor = createRedactor({ MY_API_KEY: 'sk-secret-123456' });

  it('redacts reply and reasoning', async () => {
    const attempt = redactLayer(redactor)(async () => reply('key sk-secret-123456', { reasoning: 'saw sk-secret-123456' }));
    expect(await attempt(req, info())).toMatchObject({ content: 'key [REDACTED]', reasoning: 'saw [REDACTED]' });
  });

  it('turns anything thrown into a ProviderError with a redacted message', async () => {
    const boom = redactLayer(redactor)(async () => {
      throw new TypeError('bad sk-secret-123456');
    });
    const e = await boom(req, info()).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ProviderError);
    expect(e).toMatchObject({ retryable: true, message: 'TypeError: bad [REDACTED]' });
    const ctl = new AbortController();
    ctl.abort(new Error('phase 1 ceiling'));
    const aborted = await redactLayer(redactor)(async () => {
      throw new Error('whatever');
    })(req, info({ signal: ctl.signal })).catch((x: unknown) => x);
    expect(aborted).toMatchObject({ retryable: false, message: 'aborted by caller: phase 1 ceiling' });
    const own = new ProviderError('HTTP 500', true, 500);
    expect(await redactLayer(redactor)(async () => Promise.reject(own))(req, info()).catch((x: unknown) => x)).toBe(own);
  });
});

describe('usage layer', () => {
  it('counts attempts and tokens into the call meter, failed attempts included', async () => {
    const a = info();
    let n = 0;
    const attempt = countUsage(async () => {
      if (++n === 1) throw new ProviderError('x', true);
      return reply('ok', { tokens_in: 7, tokens_out: 4 });
    });
    await attempt(req, a).catch(() => undefined);
    await attempt(req, a);
    expect(a.call.meter).toEqual({ attempts: 2, tokens_in: 7, tokens_out: 4 });
    expect(usageOf(a.call, () => 0.5, 12.6, 'ok')).toEqual({ phase: 'phase1', participant: 'juror-a', model: 'm', endpoint: 'ep', tokens_in: 7, tokens_out: 4, cost_usd: 0.5, latency_ms: 13, attempts: 2, outcome: 'ok' });
    expect(usageOf(info().call, () => 0, -1, 'error')).toMatchObject({ attempts: 1, latency_ms: 0 });
  });
});

describe('audit layer: attempts', () => {
  it('one line per attempt with the meter attempt number, the check outcome and finish_reason', async () => {
    const log = memoryLog();
    let t = 0;
    const attempt = auditAttempts(log, () => (t += 10), { response_format: 'json_schema' })(async (_r, a) => {
      a.onStart?.();
      return reply('{"x":1}', { finish_reason: 'length', reasoning: 'r' });
    });
    const a = info({ turn: 'reask', check: () => ({ outcome: 'invalid_json', error: 'bad' }) });
    a.call.meter.attempts = 3;
    await attempt({ ...req, temperature: 0.7, max_tokens: 64, seed: 5, json_schema: { type: 'object' } }, a);
    expect(log.lines).toHaveLength(1);
    const { ts, ...line } = log.lines[0]!;
    expect(Number.isNaN(Date.parse(ts))).toBe(false);
    expect(line).toEqual({
      caller: 'test.layers', phase: 'phase1', participant: 'juror-a', record_id: 'r', sample_index: 1, model: 'm', endpoint: 'ep', kind: 'text', turn: 'reask',
      prompt_hash: hashMessages(req.messages), messages: req.messages, response: '{"x":1}', reasoning: 'r', usage: { tokens_in: 3, tokens_out: 2 },
      latency_ms: 10, queue_ms: 10, attempt: 3, outcome: 'invalid_json', error: 'bad', finish_reason: 'length',
      sampling: { temperature: 0.7, max_tokens: 64, seed: 5, response_format: 'json_schema' },
    });
    expect(Object.keys(log.lines[0]!)).toEqual(['ts', 'caller', 'phase', 'participant', 'record_id', 'sample_index', 'model', 'endpoint', 'kind', 'turn', 'prompt_hash', 'messages', 'response', 'reasoning', 'usage', 'latency_ms', 'queue_ms', 'attempt', 'outcome', 'error', 'finish_reason', 'sampling']);
  });

  it('failed attempts say retryable_error or error, with the HTTP status', async () => {
    const log = memoryLog();
    const attempt = auditAttempts(log, () => 0, { response_format: 'json_schema' })(async () => {
      throw new ProviderError('HTTP 429', true, 429);
    });
    await attempt(req, info({ willRetry: () => true })).catch(() => undefined);
    await attempt(req, info()).catch(() => undefined);
    expect(log.lines.map((l) => [l.outcome, l.http_status, l.error, l.response, l.usage])).toEqual([
      ['retryable_error', 429, 'HTTP 429', null, null],
      ['error', 429, 'HTTP 429', null, null],
    ]);
    // a failed attempt still says what it was sent with; a text call asks for no JSON
    expect(log.lines[0]!.sampling).toEqual({ response_format: 'none' });
  });
});

function modelCall<T>(over: Partial<ModelCall<T>> = {}): ModelCall<T> {
  const config = EndpointConfig.parse({ base_url: 'http://h/v1' });
  return { ctx: { record_id: 'r', phase: 'phase1', participant: 'juror-a', caller: 'test.layers' }, seat, kind: 'text', request: req, endpoint: { name: 'ep', config, turn: async () => reply('x'), window: async () => undefined }, ...over };
}

const usage: CallUsage = { phase: 'phase1', participant: 'juror-a', model: 'm', endpoint: 'ep', tokens_in: 3, tokens_out: 2, cost_usd: 0.25, latency_ms: 41, attempts: 1, outcome: 'ok' };

function fixed(result: Partial<CallResult<unknown>>): CallHandler & { calls: number } {
  const h = (async () => {
    h.calls += 1;
    return { value: 'x', raw: 'x', usage, cached: false, finish_reason: 'stop', ...result };
  }) as unknown as CallHandler & { calls: number };
  h.calls = 0;
  return h;
}

describe('audit layer: cache hits', () => {
  it('writes one cache_hit line for a replayed call, none for a fresh one', async () => {
    const log = memoryLog();
    await auditCacheHits(log)(fixed({}))(modelCall());
    expect(log.lines).toHaveLength(0);
    await auditCacheHits(log)(fixed({ cached: true, reasoning: 'r' }))(modelCall());
    const { ts: _ts, ...line } = log.lines[0]!;
    expect(line).toEqual({
      caller: 'test.layers', phase: 'phase1', participant: 'juror-a', record_id: 'r', model: 'm', endpoint: 'ep', kind: 'text',
      prompt_hash: hashMessages(req.messages), messages: req.messages, response: 'x', reasoning: 'r', usage: { tokens_in: 3, tokens_out: 2 },
      latency_ms: 41, attempt: 0, outcome: 'cache_hit', error: null, finish_reason: 'stop',
    });
  });
});

describe('cache layer', () => {
  it('stores a fresh call and replays it with the caller context and no call below', async () => {
    const cache = createResponseCache({ enabled: true, dir: await mkdtemp(join(tmpdir(), 'rj-layer-')) });
    const below = fixed({ raw: '{"a":1}', reasoning: 'r' });
    const layer = cacheLayer(cache)(below);
    const schema = z.object({ a: z.number() });
    const first = await layer(modelCall({ kind: 'structured:A', schema }));
    expect(first.cached).toBe(false);
    const key = cacheKey({ base_url: 'http://h/v1', request: req, sample_index: 0, kind: 'structured:A' });
    expect(JSON.parse(await readFile(cache.pathFor(key), 'utf8'))).toEqual({ format: 1, key, raw: '{"a":1}', reasoning: 'r', usage });
    const again = await layer(modelCall({ kind: 'structured:A', schema, ctx: { record_id: 'r2', phase: 'consolidation', participant: 'other', caller: 'x' } }));
    expect(below.calls).toBe(1);
    expect(again).toEqual({ value: { a: 1 }, raw: '{"a":1}', reasoning: 'r', usage: { ...usage, phase: 'consolidation', participant: 'other' }, cached: true, finish_reason: 'stop' });
    // A stored reply that no longer validates is a miss.
    await layer(modelCall({ kind: 'structured:A', schema: z.object({ a: z.string() }) }));
    expect(below.calls).toBe(2);
  });

  it('keeps a finish reason other than stop in the entry', async () => {
    const cache = createResponseCache({ enabled: true, dir: await mkdtemp(join(tmpdir(), 'rj-layer-')) });
    const layer = cacheLayer(cache)(fixed({ finish_reason: 'length' }));
    await layer(modelCall());
    const hit = await layer(modelCall());
    expect(hit).toMatchObject({ cached: true, finish_reason: 'length' });
    const key = cacheKey({ base_url: 'http://h/v1', request: req, sample_index: 0, kind: 'text' });
    expect(JSON.parse(await readFile(cache.pathFor(key), 'utf8')).finish_reason).toBe('length');
  });

  it('is no layer at all when disabled', () => {
    const below = fixed({});
    expect(cacheLayer(createResponseCache({ enabled: false, dir: '' }))(below)).toBe(below);
  });

  it('identifies simulators by profile and local endpoints by model file', () => {
    expect(cacheIdentity({ name: 's', config: EndpointConfig.parse({ kind: 'simulator', base_url: 'http://127.0.0.1:5/v1' }) })).toBe('simulator:builtin');
    expect(cacheIdentity({ name: 'l', config: EndpointConfig.parse({ kind: 'local', model_path: 'a.gguf' }) })).toBe('local:a.gguf');
    const { base_url: _u, ...noUrl } = EndpointConfig.parse({ base_url: 'http://h/v1' });
    expect(cacheIdentity({ name: 'x', config: EndpointConfig.parse({ base_url: 'http://h/v1' }) })).toBe('http://h/v1');
    expect(cacheIdentity({ name: 'x', config: noUrl as EndpointConfig })).toBe('endpoint:x');
  });
});

describe('ledger layer', () => {
  it('records every finished call once: fresh, replayed or failed', async () => {
    const ledger = new Ledger({});
    await ledgerLayer(ledger)(fixed({}))(modelCall());
    await ledgerLayer(ledger)(fixed({ cached: true }))(modelCall());
    const failing = (async () => {
      throw new ModelCallError('failed', { ...usage, outcome: 'error', attempts: 3 });
    }) as unknown as CallHandler;
    await expect(ledgerLayer(ledger)(failing)(modelCall())).rejects.toThrow('failed');
    const other = (async () => {
      throw new Error('gateway is closed');
    }) as unknown as CallHandler;
    await expect(ledgerLayer(ledger)(other)(modelCall())).rejects.toThrow('closed');
    expect(ledger.summary().total).toMatchObject({ calls: 3, ok: 2, errors: 1, cached: 1, attempts: 4 });
  });
});

describe('audit log through the layer', () => {
  it('redacts on the way to disk', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rj-layer-'));
    const log = createAuditLog(join(dir, 'a.jsonl'), createRedactor({ MY_TOKEN: 'tok-secret-999' }));
    await auditAttempts(log, () => 0, { response_format: 'none' })(async () => reply('says tok-secret-999'))(req, info());
    await log.close();
    expect(await readFile(join(dir, 'a.jsonl'), 'utf8')).toContain('says [REDACTED]');
  });
});
