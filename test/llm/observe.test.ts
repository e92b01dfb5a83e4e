/**
 * The gateway's observer hook (src/llm/observer.ts): the events metrics are built from, taken
 * from the real openai client against a scripted server.
 */
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EndpointConfig, ParticipantConfig } from '../../schemas/config.js';
import { JudgementOutput } from '../../schemas/defect.js';
import { createGateway, type Gateway } from '../../src/llm/gateway.js';
import { attemptErrorKind, type AttemptEvent, type CallEvent } from '../../src/llm/observer.js';
import { ProviderError, type CallContext } from '../../src/llm/types.js';
import { ok, startScriptedServer, type Script, type ScriptedServer } from './helpers/scripted-server.js';

const VALID = '{"negatives":[]}';
const ctx: CallContext = { record_id: 'rec-1', phase: 'phase1', participant: 'juror-a', caller: 'test.observe' };
const seat = ParticipantConfig.parse({ id: 'juror-a', endpoint: 'local', model: 'judge-model', temperature: 0.3, seed: 1 });
const open: Array<{ gw: Gateway; server?: ScriptedServer }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.gw.close();
    await o.server?.close();
  }
});

interface Seen {
  attempts: AttemptEvent[];
  calls: CallEvent[];
}

async function observed(target: Script | string, endpoint: Record<string, unknown> = {}, cache = false): Promise<{ gw: Gateway; seen: Seen }> {
  const server = typeof target === 'string' ? undefined : await startScriptedServer(target);
  const dir = await mkdtemp(join(tmpdir(), 'rj-observe-'));
  const seen: Seen = { attempts: [], calls: [] };
  const gw = createGateway({
    endpoints: { local: EndpointConfig.parse({ base_url: server?.url ?? target, timeout_ms: 2000, max_retries: 3, backoff_base_ms: 1, backoff_max_ms: 2, ...endpoint }) },
    prices: { 'judge-model': { input_per_mtok: 2, output_per_mtok: 10 } },
    cache: { enabled: cache, dir: join(dir, 'cache') },
    auditLogPath: null,
    // A refused endpoint is an outage now (src/llm/health.ts): give up on it quickly here.
    maxOutageMs: 300,
    observer: { onAttempt: (e) => seen.attempts.push(e), onCall: (e) => seen.calls.push(e) },
  });
  open.push({ gw, ...(server ? { server } : {}) });
  return { gw, seen };
}

const judge = (gw: Gateway) => gw.structured({ ctx, seat, messages: [{ role: 'user', content: 'audit' }], schema: JudgementOutput, schemaName: 'JudgementOutput' });

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('gateway observer', () => {
  it('sees every attempt with its kind and retry, and the logical call once', async () => {
    const { gw, seen } = await observed([{ status: 500, body: {} }, { status: 429, body: {} }, ok(VALID, { tokens_in: 1000, tokens_out: 200 })]);
    await judge(gw);
    expect(seen.attempts.map((a) => [a.outcome, a.errorKind ?? null, a.retried])).toEqual([
      ['error', 'server_error', true],
      ['error', 'rate_limited', true],
      ['ok', null, false],
    ]);
    for (const a of seen.attempts) expect(a).toMatchObject({ endpoint: 'local', model: 'judge-model' });
    expect(seen.attempts.every((a) => a.seconds >= 0 && a.seconds < 60)).toBe(true);
    expect(seen.calls).toHaveLength(1);
    expect(seen.calls[0]).toMatchObject({ endpoint: 'local', model: 'judge-model', cached: false, usage: { attempts: 3, outcome: 'ok', tokens_in: 1000, tokens_out: 200 } });
    expect(seen.calls[0]!.usage.cost_usd).toBeCloseTo((1000 * 2 + 200 * 10) / 1e6, 12);
  });

  it('a 400 is a client error that is not retried; the failed call is still reported', async () => {
    const { gw, seen } = await observed(() => ({ status: 400, body: { error: { message: 'no' } } }));
    await expect(judge(gw)).rejects.toThrow(/400/);
    expect(seen.attempts.map((a) => [a.errorKind, a.retried])).toEqual([['client_error', false]]);
    expect(seen.calls.map((c) => c.usage.outcome)).toEqual(['error']);
  });

  it('names connection failures and timeouts', async () => {
    const refused = await observed(`http://127.0.0.1:${await closedPort()}/v1`, { max_retries: 1 });
    await expect(judge(refused.gw)).rejects.toThrow(/failed all 2 attempt/);
    expect(refused.seen.attempts.map((a) => [a.errorKind, a.retried])).toEqual([['connection', true], ['connection', false]]);
    const slow = await observed([{ hang: true }, ok(VALID)], { timeout_ms: 200 });
    await judge(slow.gw);
    expect(slow.seen.attempts.map((a) => a.errorKind ?? 'ok')).toEqual(['timeout', 'ok']);
  });

  it('a cache replay is one call event and no attempt', async () => {
    const { gw, seen } = await observed([ok(VALID)], {}, true);
    await judge(gw);
    await judge(gw);
    expect(seen.attempts).toHaveLength(1);
    expect(seen.calls.map((c) => c.cached)).toEqual([false, true]);
  });

  it('an observer that throws does not fail the call', async () => {
    const server = await startScriptedServer([ok(VALID)]);
    const gw = createGateway({
      endpoints: { local: EndpointConfig.parse({ base_url: server.url }) },
      prices: {},
      cache: { enabled: false, dir: tmpdir() },
      auditLogPath: null,
      observer: {
        onAttempt: () => {
          throw new Error('metrics broke');
        },
        onCall: () => {
          throw new Error('metrics broke');
        },
      },
    });
    open.push({ gw, server });
    await expect(judge(gw)).resolves.toMatchObject({ value: { negatives: [] } });
  });

  it('classifies provider errors', () => {
    expect(attemptErrorKind(new ProviderError('HTTP 429', true, 429))).toBe('rate_limited');
    expect(attemptErrorKind(new ProviderError('HTTP 503', true, 503))).toBe('server_error');
    expect(attemptErrorKind(new ProviderError('HTTP 400 bad', false, 400))).toBe('client_error');
    expect(attemptErrorKind(new ProviderError('HTTP 408', true, 408))).toBe('timeout');
    expect(attemptErrorKind(new ProviderError('timeout: no complete response within 5 ms', true))).toBe('timeout');
    expect(attemptErrorKind(new ProviderError('aborted by caller: phase 1 ceiling', false))).toBe('aborted');
    expect(attemptErrorKind(new ProviderError('connection error: Connection error. connect ECONNREFUSED', true))).toBe('connection');
    expect(attemptErrorKind(new Error('not a provider error'))).toBe('other');
  });
});
