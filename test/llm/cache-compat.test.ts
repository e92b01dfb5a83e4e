/**
 * The response cache across the gateway rewrite: test/llm/fixtures/cache-v1 holds two entries
 * written by the gateway before it was split into layers (commit 22cf83c), for one structured
 * call on a simulator endpoint and one text call on an HTTP endpoint, with a clock that makes
 * latency exactly 29 ms. The new gateway must find them under the same keys, replay them exactly,
 * and write byte-identical entries for the same calls.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EndpointConfig, ParticipantConfig } from '../../schemas/config.js';
import { JudgementOutput } from '../../schemas/defect.js';
import { cacheKey } from '../../src/llm/cache.js';
import { createGateway } from '../../src/llm/gateway.js';
import { DEFAULT_MAX_TOKENS } from '../../src/llm/tokens.js';
import type { ChatMessage, Provider } from '../../src/llm/types.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'cache-v1');
const STRUCTURED_KEY = 'ed4bfe593745a664c7123d34d9956f1acaa492b56f376ad348b230ab89793f54';
const TEXT_KEY = '0c858843da1ff07391ae2957075bb2ec94b4440742a3f326cea4f8ad2a76910b';
const FENCED = '```json\n{"negatives":[{"statement_refs":["STEP-2"],"what_went_wrong":"sign","impact":"major","evidence":"-3"}]}\n```';

const messages: ChatMessage[] = [{ role: 'system', content: 'You are an auditor.' }, { role: 'user', content: 'Audit STEP-1..STEP-3.' }];
const ctx = { record_id: 'rec-1', phase: 'phase1' as const, participant: 'juror-a', caller: 'fixture', sample_index: 2 };
const judgeSeat = ParticipantConfig.parse({ id: 'juror-a', endpoint: 'sim', model: 'judge-model', temperature: 0.3, seed: 11 });
const modSeat = ParticipantConfig.parse({ id: 'mod', endpoint: 'api', model: 'judge-model', temperature: 0, max_tokens: 900 });

function gateway(dir: string, providerFor: (name: string) => Provider) {
  let clock = 0;
  const gw = createGateway({
    endpoints: { sim: EndpointConfig.parse({ kind: 'simulator' }), api: EndpointConfig.parse({ base_url: 'http://models.invalid/v1' }) },
    prices: { 'judge-model': { input_per_mtok: 2, output_per_mtok: 10 } },
    cache: { enabled: true, dir },
    auditLogPath: null,
    env: {},
    now: () => clock,
    providerFor: (name) => {
      const p = providerFor(name);
      return { name, complete: (req, signal) => ((clock += 29), p.complete(req, signal)) };
    },
  });
  // One after the other, as when the fixture was written: they share the clock.
  const calls = async () => [
    await gw.structured({ ctx, seat: judgeSeat, messages, schema: JudgementOutput, schemaName: 'JudgementOutput' }),
    await gw.text({ ctx: { ...ctx, phase: 'moderator', participant: 'mod', sample_index: 3 }, seat: modSeat, messages }),
  ] as const;
  return { gw, calls };
}

const recorded = (name: string): Provider => ({
  name,
  complete: async (req) =>
    name === 'sim'
      ? { content: FENCED, reasoning: 'thinking about step 2', tokens_in: 321, tokens_out: 45 }
      : { content: `free text reply to ${req.messages.length} messages`, tokens_in: 12, tokens_out: 5 },
});

function entries(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir, { recursive: true })) if (String(f).endsWith('.json')) out[String(f)] = readFileSync(join(dir, String(f)), 'utf8');
  return out;
}

describe('response cache written by the previous gateway', () => {
  it('is read under the same keys and replays content, reasoning and usage exactly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rj-compat-'));
    cpSync(FIXTURE, dir, { recursive: true });
    const { gw, calls } = gateway(dir, (name) => ({ name, complete: async () => Promise.reject(new Error('must replay, not call')) }));
    const [structured, text] = await calls();
    expect(structured).toEqual({
      value: { negatives: [{ statement_refs: ['STEP-2'], what_went_wrong: 'sign', impact: 'major', evidence: '-3' }] },
      raw: FENCED,
      reasoning: 'thinking about step 2',
      usage: { phase: 'phase1', participant: 'juror-a', model: 'judge-model', endpoint: 'sim', tokens_in: 321, tokens_out: 45, cost_usd: 0.001092, latency_ms: 29, attempts: 1, outcome: 'ok' },
      cached: true,
      // old entries carry no finish_reason: they read as stop
      finish_reason: 'stop',
    });
    expect(text).toEqual({
      value: 'free text reply to 2 messages',
      raw: 'free text reply to 2 messages',
      usage: { phase: 'moderator', participant: 'mod', model: 'judge-model', endpoint: 'api', tokens_in: 12, tokens_out: 5, cost_usd: 0.000074, latency_ms: 29, attempts: 1, outcome: 'ok' },
      cached: true,
      finish_reason: 'stop',
    });
    expect(gw.ledger.summary()).toMatchObject({ calls_made: 0, calls_cached: 2 });
    await gw.close();
  });

  it('gets byte-identical entries from the new gateway for the same calls', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rj-compat-'));
    const { gw, calls } = gateway(dir, recorded);
    const [structured, text] = await calls();
    expect([structured.cached, text.cached]).toEqual([false, false]);
    await gw.close();
    const fixture = entries(FIXTURE);
    expect(Object.keys(fixture).sort()).toEqual([join(TEXT_KEY.slice(0, 2), `${TEXT_KEY}.json`), join(STRUCTURED_KEY.slice(0, 2), `${STRUCTURED_KEY}.json`)]);
    // Every call now carries a max_tokens and the key says what was sent: the judge seat has none
    // of its own, so its call goes out with the phase1 default and is stored under that key, with
    // the same entry otherwise. The moderator seat has its own max_tokens: byte-identical.
    const sent = { model: 'judge-model', messages, temperature: 0.3, seed: 11, max_tokens: DEFAULT_MAX_TOKENS.phase1 };
    const budgeted = cacheKey({ base_url: 'simulator:builtin', request: sent, sample_index: 2, kind: 'structured:JudgementOutput' });
    const oldStructured = fixture[join(STRUCTURED_KEY.slice(0, 2), `${STRUCTURED_KEY}.json`)]!;
    expect(entries(dir)).toEqual({
      [join(TEXT_KEY.slice(0, 2), `${TEXT_KEY}.json`)]: fixture[join(TEXT_KEY.slice(0, 2), `${TEXT_KEY}.json`)],
      [join(budgeted.slice(0, 2), `${budgeted}.json`)]: oldStructured.replace(STRUCTURED_KEY, budgeted),
    });
  });

  it('replays an entry written without max_tokens only when its reply ended within the budget', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rj-compat-'));
    cpSync(FIXTURE, dir, { recursive: true });
    let made = 0;
    // the fixture's structured reply took 45 tokens: a 40-token budget would have cut it
    const tight = ParticipantConfig.parse({ ...judgeSeat, max_tokens: 40 });
    const roomy = ParticipantConfig.parse({ ...judgeSeat, max_tokens: 45 });
    const { gw } = gateway(dir, (name) => ({ name, complete: async (req, signal) => (made++, recorded(name).complete(req, signal)) }));
    const ask = (seat: ParticipantConfig) => gw.structured({ ctx, seat, messages, schema: JudgementOutput, schemaName: 'JudgementOutput' });
    expect((await ask(roomy)).cached).toBe(true);
    expect(made).toBe(0);
    expect((await ask(tight)).cached).toBe(false);
    expect(made).toBe(1);
    await gw.close();
  });
});
