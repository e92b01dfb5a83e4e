/**
 * Structured generation (generateObject behind gateway.structured): a reply cut at max_tokens
 * fails at once as truncated, and every "no valid object" failure is a typed error.
 */
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EndpointConfig, ParticipantConfig } from '../../schemas/config.js';
import { JudgementOutput } from '../../schemas/defect.js';
import type { AuditEntry } from '../../src/llm/audit.js';
import { createGateway, type Gateway } from '../../src/llm/gateway.js';
import { ModelCallError, NoObjectGeneratedError, TRUNCATED_REASON, truncatedAt, type CallContext, type ChatMessage } from '../../src/llm/types.js';
import { ok, startScriptedServer, type Script, type ScriptedServer } from './helpers/scripted-server.js';

// Counts jsonrepair calls made by src/llm/json.ts, still repairing for real.
const repairs = vi.hoisted(() => ({ n: 0 }));
vi.mock('jsonrepair', async (importOriginal) => {
  const real = await importOriginal<typeof import('jsonrepair')>();
  return {
    ...real,
    jsonrepair: (text: string) => {
      repairs.n += 1;
      return real.jsonrepair(text);
    },
  };
});

const messages: ChatMessage[] = [{ role: 'user', content: 'Audit STEP-1..STEP-3.' }];
const ctx: CallContext = { record_id: 'rec-1', phase: 'phase1', participant: 'juror-a', caller: 'test.generate' };
const VALID = '{"negatives":[{"statement_refs":["STEP-2"],"what_went_wrong":"dropped a sign","impact":"major","evidence":"-3 became 3"}]}';
// What a reply cut mid-object looks like; jsonrepair would happily close it.
const CUT = '{"negatives":[{"statement_refs":["STEP-2"],"what_went_wrong":"dropped a sign","impact":"major","evidence":"-3 bec';

interface H {
  server: ScriptedServer;
  gw: Gateway;
  dir: string;
  audit(): Promise<AuditEntry[]>;
}
const open: H[] = [];
beforeEach(() => {
  repairs.n = 0;
});
afterEach(async () => {
  for (const h of open.splice(0)) {
    await h.gw.close();
    await h.server.close();
  }
});

async function harness(script: Script): Promise<H> {
  const server = await startScriptedServer(script);
  const dir = await mkdtemp(join(tmpdir(), 'rj-gen-'));
  const auditPath = join(dir, 'audit.jsonl');
  const gw = createGateway({
    endpoints: { local: EndpointConfig.parse({ base_url: server.url, max_retries: 2, backoff_base_ms: 1, backoff_max_ms: 2 }) },
    prices: { m: { input_per_mtok: 2, output_per_mtok: 10 } },
    cache: { enabled: true, dir: join(dir, 'cache') },
    auditLogPath: auditPath,
    env: {},
    sleep: async () => undefined,
  });
  const h: H = {
    server,
    gw,
    dir,
    audit: async () => {
      await gw.close();
      return (await readFile(auditPath, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l) as AuditEntry);
    },
  };
  open.push(h);
  return h;
}

const seat = ParticipantConfig.parse({ id: 'juror-a', endpoint: 'local', model: 'm', max_tokens: 40 });
const judge = (h: H) => h.gw.structured({ ctx, seat, messages, schema: JudgementOutput, schemaName: 'JudgementOutput' });

async function failure(p: Promise<unknown>): Promise<ModelCallError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ModelCallError);
  return e as ModelCallError;
}

describe('generateObject: truncated replies', () => {
  it('fails at once with "truncated at max_tokens": no jsonrepair, no re-ask, typed error', async () => {
    const h = await harness([ok(CUT, { finish_reason: 'length', tokens_in: 50, tokens_out: 40 }), ok(VALID)]);
    const err = await failure(judge(h));
    expect(h.server.requests).toHaveLength(1);
    expect(repairs.n).toBe(0);
    expect(err).toBeInstanceOf(NoObjectGeneratedError);
    const e = err as NoObjectGeneratedError;
    // the reason names the budget that cut the reply (the seat's max_tokens here)
    expect(e.reason).toBe(truncatedAt(40));
    expect(TRUNCATED_REASON).toBe('truncated at max_tokens');
    expect(e.message).toBe('juror-a (m@local, phase1) failed after 1 attempt(s): truncated at max_tokens (40)');
    expect(e.text).toBe(CUT);
    expect(e.finishReason).toBe('length');
    expect(e.usage).toMatchObject({ attempts: 1, outcome: 'error', tokens_in: 50, tokens_out: 40, participant: 'juror-a', phase: 'phase1' });
    expect(e.usage.cost_usd).toBeCloseTo((50 * 2 + 40 * 10) / 1e6, 12);
    expect(h.gw.ledger.summary().total).toMatchObject({ calls: 1, errors: 1, attempts: 1 });
    expect(await readdir(join(h.dir, 'cache')).catch(() => [])).toEqual([]);
    const lines = await h.audit();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ turn: 'initial', attempt: 1, outcome: 'error', error: truncatedAt(40), finish_reason: 'length', response: CUT, usage: { tokens_in: 50, tokens_out: 40 } });
  });

  it('the same cut reply without finish_reason length is still repaired (behaviour kept)', async () => {
    const h = await harness([ok(CUT)]);
    const res = await judge(h);
    expect(repairs.n).toBeGreaterThan(0);
    expect(res.value.negatives).toHaveLength(1);
    expect(res.finish_reason).toBe('stop');
    expect(h.server.requests).toHaveLength(1);
  });

  it('a re-ask cut at max_tokens fails as truncated, with usage over both turns', async () => {
    const h = await harness([ok('I think the trace is fine.', { tokens_in: 10, tokens_out: 5 }), ok(CUT, { finish_reason: 'length', tokens_in: 20, tokens_out: 40 })]);
    const err = (await failure(judge(h))) as NoObjectGeneratedError;
    expect(h.server.requests).toHaveLength(2);
    expect(err).toBeInstanceOf(NoObjectGeneratedError);
    expect(err.reason).toBe(truncatedAt(40));
    expect(err.message).toMatch(/failed after 2 attempt\(s\): truncated at max_tokens \(40\)$/);
    expect(err.usage).toMatchObject({ attempts: 2, tokens_in: 30, tokens_out: 45 });
    const lines = await h.audit();
    expect(lines.map((l) => [l.turn, l.outcome, l.error === truncatedAt(40)])).toEqual([['initial', 'reask', false], ['reask', 'error', true]]);
  });

  it('text calls fail on a cut reply too (a deliberation turn cut mid-sentence is no turn), and nothing is cached', async () => {
    const h = await harness([ok('The juror says: STEP-2 is wro', { finish_reason: 'length' }), ok('The juror says: STEP-2 is wrong.')]);
    const turn = { ctx: { ...ctx, phase: 'juror_turn' as const, participant: 'juror-a' }, seat, messages };
    const err = (await failure(h.gw.text(turn))) as NoObjectGeneratedError;
    expect(err).toBeInstanceOf(NoObjectGeneratedError);
    expect(err.message).toBe('juror-a (m@local, juror_turn) failed after 1 attempt(s): truncated at max_tokens (40)');
    expect(err.text).toBe('The juror says: STEP-2 is wro');
    // not cached: the same turn asked again goes to the server and gets its whole reply
    const again = await h.gw.text(turn);
    expect(again).toMatchObject({ cached: false, finish_reason: 'stop', value: 'The juror says: STEP-2 is wrong.' });
    expect((await h.audit()).map((l) => [l.outcome, l.finish_reason, l.error])).toEqual([['error', 'length', truncatedAt(40)], ['ok', 'stop', null]]);
  });
});

describe('generateObject: typed error', () => {
  it('invalid after the one re-ask: NoObjectGeneratedError with the last reply, its finish reason and usage', async () => {
    const h = await harness([ok('no json at all', { tokens_in: 100, tokens_out: 20 }), ok('{"negatives": "nope"}', { finish_reason: 'content_filter', tokens_in: 110, tokens_out: 9 })]);
    const err = (await failure(judge(h))) as NoObjectGeneratedError;
    expect(err).toBeInstanceOf(NoObjectGeneratedError);
    expect(err.name).toBe('NoObjectGeneratedError');
    expect(err.text).toBe('{"negatives": "nope"}');
    expect(err.finishReason).toBe('content_filter');
    expect(err.reason).toMatch(/^invalid JSON after one re-ask: JSON does not match the schema/);
    expect(err.message).toBe(`juror-a (m@local, phase1) failed after 2 attempt(s): ${err.reason}`);
    expect(err.usage).toMatchObject({ attempts: 2, outcome: 'error', tokens_in: 210, tokens_out: 29 });
  });

  it('provider failures stay plain ModelCallErrors (no reply to carry)', async () => {
    const h = await harness(() => ({ status: 400, body: { error: { message: 'bad request' } } }));
    const err = await failure(judge(h));
    expect(err).not.toBeInstanceOf(NoObjectGeneratedError);
    expect(err.message).toContain('400');
  });

  it('a valid reply reports finish_reason stop, fresh and replayed', async () => {
    const h = await harness([ok(VALID)]);
    expect((await judge(h)).finish_reason).toBe('stop');
    expect(await judge(h)).toMatchObject({ cached: true, finish_reason: 'stop' });
  });
});
