import { APIError } from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { PROBE_PROMPT, type ChatRequest } from '../../src/llm/types.js';
import { globRegExp, type BatchBehaviourInput } from '../../src/sim/batch-profile.js';
import { buildGoldIndex } from '../../src/sim/gold.js';
import { parseProfile, ProfileError, type ModelEntryInput } from '../../src/sim/profile.js';
import { startSimulator, type RunningSimulator } from '../../src/sim/server.js';
import { billedTwice, client, ended, inputLine, jsonl, pollUntil, readLines, submit, upload, wireBody, type InputLine } from './batch-helpers.js';
import { consolidationRequest, phase1Request, synthRecords } from './helpers.js';

const records = synthRecords(12, { steps: 6, seed: 'batch-api' });
const gold = buildGoldIndex(records);
const running: RunningSimulator[] = [];

/** Two jurors and a consolidator; faults on, so batch lines must retry them away as online clients do. */
const MODELS: Record<string, ModelEntryInput> = {
  'juror-a': { recall: 0.8, false_positive_rate: 0.1, rate_429: 0.2, rate_500: 0.1, retry_after_ms: 1, reasoning_words: 20 },
  'juror-b': { recall: 0.6, false_positive_rate: 0.05, rate_malformed_json: 0.2, rate_fenced_json: 0.2 },
  cons: { recall: 0.7 },
};

async function sim(batch: BatchBehaviourInput = {}): Promise<RunningSimulator> {
  const s = await startSimulator({ profile: parseProfile({ seed: 5, models: MODELS, batch }), gold });
  running.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

/** Phase 1 of two jurors and a consolidation per record: the mix a jury sends. */
function juryLines(n: number, prefix = 'rec'): InputLine[] {
  return records.slice(0, n).flatMap((r, i) => [
    inputLine(`${prefix}-${i}/a`, phase1Request(r, 'juror-a', 11)),
    inputLine(`${prefix}-${i}/b`, phase1Request(r, 'juror-b', 12)),
    inputLine(`${prefix}-${i}/cons`, consolidationRequest(r, 'cons', [], 13)),
  ]);
}

/** The online reply to `body`, retrying 429/500 as the openai client would; the raw response text. */
async function online(url: string, body: unknown): Promise<string> {
  for (let tries = 0; tries < 50; tries++) {
    const res = await fetch(`${url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status === 200) return res.text();
    if (res.status !== 429 && res.status !== 500) throw new Error(`online call: HTTP ${res.status} ${await res.text()}`);
  }
  throw new Error('online call kept failing');
}

describe('the simulator Batch API through the openai client', () => {
  it('moves a batch validating -> in_progress -> completed and answers each line with the bytes of an online call', async () => {
    const s = await sim({ completion_delay_ms: 100 });
    const c = client(s.url);
    const lines = juryLines(8);
    const created = await submit(c, lines);
    expect(created).toMatchObject({ object: 'batch', status: 'validating', endpoint: '/v1/chat/completions', completion_window: '24h', output_file_id: null });
    const { batch, seen } = await pollUntil(c, created.id, ended);
    // Validation takes one turn of the event loop, so a poll rarely sees it; in_progress lasts the delay.
    expect(seen).toContain('in_progress');
    expect(seen.at(-1)).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 24, completed: 24, failed: 0 });
    expect(batch.error_file_id).toBeNull();
    expect(batch.model).toBeNull(); // three models in one file
    expect(batch.created_at).toBeLessThanOrEqual(batch.in_progress_at!);
    expect(batch.in_progress_at!).toBeLessThanOrEqual(batch.completed_at!);
    expect(batch.expires_at).toBe(batch.created_at + 86_400);

    const out = await readLines(c, batch.output_file_id);
    expect(out.map((l) => l.custom_id).sort()).toEqual(lines.map((l) => l.custom_id).sort());
    // Nothing went online so far; the same bodies sent online now get the same bytes.
    expect(s.batchStats().online).toEqual({ chat_calls: 0, probe_calls: 0 });
    const byId = new Map(lines.map((l) => [l.custom_id, l.body]));
    let tokens = 0;
    for (const l of out) {
      expect(l).toMatchObject({ response: { status_code: 200 }, error: null });
      expect(l.id).toMatch(/^batch_req_/);
      expect(JSON.stringify(l.response!.body)).toBe(await online(s.url, byId.get(l.custom_id)));
      tokens += (l.response!.body!.usage as { total_tokens: number }).total_tokens;
    }
    expect(batch.usage!.total_tokens).toBe(tokens);
    expect(s.batchStats().online.chat_calls).toBeGreaterThanOrEqual(24);
  });

  it('rejects a bad input file on upload with an OpenAI-style 400', async () => {
    const s = await sim({ max_requests: 3, max_bytes: 100_000 });
    const c = client(s.url);
    const good = juryLines(1);
    expect(Buffer.byteLength(jsonl(good))).toBeLessThan(100_000);
    const refused = async (text: string) => {
      const e = await upload(c, text).then(
        () => null,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(APIError);
      expect((e as APIError).status).toBe(400);
      return e as APIError;
    };
    expect((await refused(`${jsonl(good)}{"custom_id": "x", broken\n`)).code).toBe('invalid_json_line');
    expect((await refused(jsonl([good[0], { ...good[1], custom_id: good[0]!.custom_id }]))).message).toMatch(/line 2: custom_id "rec-0\/a" is also on line 1/);
    expect((await refused(jsonl([{ ...good[0], url: '/v1/embeddings' }]))).code).toBe('invalid_url');
    expect((await refused(jsonl([{ ...good[0], method: 'GET' }]))).code).toBe('invalid_method');
    expect((await refused(jsonl([{ custom_id: 'x', method: 'POST', url: '/v1/chat/completions' }]))).code).toBe('invalid_request');
    expect((await refused(jsonl([...good, { ...good[0], custom_id: 'fourth' }]))).code).toBe('too_many_requests');
    const big = { ...good[0]!, body: { ...good[0]!.body, pad: 'x'.repeat(120_000) } };
    expect((await refused(jsonl([big]))).code).toBe('file_too_large');
    expect((await refused('\n\n')).code).toBe('empty_file');
    expect(s.batchStats().files.uploaded).toBe(0);
    // Only batch files are checked: other purposes are stored as they come.
    const other = await c.files.create({ file: new File(['not jsonl'], 'notes.txt'), purpose: 'user_data' });
    expect(other).toMatchObject({ object: 'file', purpose: 'user_data', bytes: 9, filename: 'notes.txt' });
    await expect(c.batches.create({ input_file_id: other.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).rejects.toMatchObject({ status: 400 });
    await expect(c.batches.create({ input_file_id: 'file-nope', endpoint: '/v1/chat/completions', completion_window: '24h' })).rejects.toMatchObject({ status: 404 });
  });

  it('fails a batch whose lines name a model the profile does not serve, with the lines in errors', async () => {
    const s = await sim();
    const c = client(s.url);
    const lines = [...juryLines(1), inputLine('stray', phase1Request(records[0]!, 'no-such-model', 1))];
    const { batch } = await pollUntil(c, (await submit(c, lines)).id, ended);
    expect(batch.status).toBe('failed');
    expect(batch.failed_at).toBeGreaterThan(0);
    expect(batch.errors!.data).toEqual([expect.objectContaining({ code: 'model_not_found', line: 4, param: 'body.model' })]);
    expect(batch.output_file_id).toBeNull();
    expect(s.batchStats()).toMatchObject({ accepted: [], rejected: [{ id: batch.id, status: 'failed' }], batch_requests: 0 });
  });

  it('serves the Files routes: retrieve, raw content, delete', async () => {
    const s = await sim();
    const c = client(s.url);
    const text = jsonl(juryLines(2));
    const id = await upload(c, text, 'two.jsonl');
    expect(await c.files.retrieve(id)).toMatchObject({ id, object: 'file', bytes: Buffer.byteLength(text), filename: 'two.jsonl', purpose: 'batch', status: 'processed' });
    expect(await (await c.files.content(id)).text()).toBe(text);
    expect(await c.files.delete(id)).toEqual({ id, object: 'file', deleted: true });
    await expect(c.files.retrieve(id)).rejects.toMatchObject({ status: 404 });
    expect(s.batchStats().files).toEqual({ uploaded: 1, bytes: Buffer.byteLength(text) });
  });

  it('cancels an in-progress batch: cancelling, then cancelled with every line unexecuted', async () => {
    const s = await sim({ completion_delay_ms: 600_000 });
    const c = client(s.url);
    const lines = juryLines(2);
    const created = await submit(c, lines);
    await pollUntil(c, created.id, (b) => b.status === 'in_progress');
    const cancelling = await c.batches.cancel(created.id);
    expect(cancelling.status).toBe('cancelling');
    expect(cancelling.cancelling_at).toBeGreaterThan(0);
    const { batch } = await pollUntil(c, created.id, ended);
    expect(batch).toMatchObject({ status: 'cancelled', output_file_id: null, request_counts: { total: 6, completed: 0, failed: 6 } });
    const err = await readLines(c, batch.error_file_id);
    expect(err.map((l) => [l.custom_id, l.response, l.error?.code])).toEqual(lines.map((l) => [l.custom_id, null, 'batch_cancelled']));
    expect((await c.batches.cancel(created.id)).status).toBe('cancelled'); // again: harmless
    expect(s.batchStats().accepted).toEqual([expect.objectContaining({ id: created.id, status: 'cancelled', cancelled: lines.map((l) => l.custom_id) })]);
    expect(s.batchStats().batch_requests).toBe(0);
  });

  it('refuses to cancel a batch that has ended', async () => {
    const s = await sim({ completion_delay_ms: 0 });
    const c = client(s.url);
    const { batch } = await pollUntil(c, (await submit(c, juryLines(1))).id, ended);
    await expect(c.batches.cancel(batch.id)).rejects.toMatchObject({ status: 409 });
    await expect(c.batches.retrieve('batch_nope')).rejects.toMatchObject({ status: 404 });
  });

  it('lists batches newest first, a page at a time', async () => {
    const s = await sim({ completion_delay_ms: 0 });
    const c = client(s.url);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await submit(c, juryLines(1, `list${i}`))).id);
    const first = await c.batches.list({ limit: 2 });
    expect(first.data.map((b) => b.id)).toEqual([ids[4], ids[3]]);
    expect(first.has_more).toBe(true);
    const all: string[] = [];
    for await (const b of c.batches.list({ limit: 2 })) all.push(b.id);
    expect(all).toEqual([...ids].reverse());
    const last = await c.batches.list({ limit: 2, after: ids[1] });
    expect(last.data.map((b) => b.id)).toEqual([ids[0]]);
    expect(last.has_more).toBe(false);
    await expect(c.batches.list({ limit: 0 })).rejects.toMatchObject({ status: 400 });
  });

  it('puts a configured failing custom_id in the error file, and its resubmission alone succeeds', async () => {
    const s = await sim({ fail_custom_ids: { patterns: ['rec-1/*'] } });
    const c = client(s.url);
    const lines = juryLines(3);
    const { batch } = await pollUntil(c, (await submit(c, lines)).id, ended);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 9, completed: 6, failed: 3 });
    const err = await readLines(c, batch.error_file_id);
    expect(err.map((l) => l.custom_id)).toEqual(['rec-1/a', 'rec-1/b', 'rec-1/cons']);
    for (const l of err) expect(l).toMatchObject({ response: { status_code: 500, body: { error: { type: 'server_error', code: 'server_error' } } }, error: null });

    const again = lines.filter((l) => l.custom_id.startsWith('rec-1/'));
    const second = (await pollUntil(c, (await submit(c, again)).id, ended)).batch;
    expect(second.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
    for (const l of await readLines(c, second.output_file_id)) {
      expect(JSON.stringify(l.response!.body)).toBe(await online(s.url, again.find((x) => x.custom_id === l.custom_id)!.body));
    }
    const stats = s.batchStats();
    expect(stats.accepted.map((b) => [b.requests, b.failed.length])).toEqual([
      [9, 3],
      [3, 0],
    ]);
    expect(stats.accepted[1]!.custom_ids).toEqual(err.map((l) => l.custom_id));
    expect(billedTwice(stats)).toEqual([]);
  });

  it('fails a deterministic share of custom_ids with fail_custom_ids.rate', async () => {
    const failedIds = async () => {
      const s = await sim({ completion_delay_ms: 0, fail_custom_ids: { rate: 0.3, seed: 9 } });
      const c = client(s.url);
      const { batch } = await pollUntil(c, (await submit(c, juryLines(12))).id, ended);
      return (await readLines(c, batch.error_file_id)).map((l) => l.custom_id);
    };
    const one = await failedIds();
    expect(one.length).toBeGreaterThan(2);
    expect(one.length).toBeLessThan(24);
    expect(await failedIds()).toEqual(one);
  });

  it('expires the nth batch with its unexecuted lines as batch_expired, and their resubmission alone completes', async () => {
    const s = await sim({ expire_batches: { nth: [2], completed_share: 0.5 } });
    const c = client(s.url);
    const b1 = (await pollUntil(c, (await submit(c, juryLines(1, 'one'))).id, ended)).batch;
    expect(b1.status).toBe('completed');
    const lines = juryLines(4, 'two');
    const { batch } = await pollUntil(c, (await submit(c, lines)).id, ended);
    expect(batch.status).toBe('expired');
    expect(batch.expired_at).toBeGreaterThan(0);
    expect(batch.request_counts).toEqual({ total: 12, completed: 6, failed: 6 });
    expect((await readLines(c, batch.output_file_id)).map((l) => l.custom_id)).toEqual(lines.slice(0, 6).map((l) => l.custom_id));
    const expired = await readLines(c, batch.error_file_id);
    expect(expired.map((l) => l.custom_id)).toEqual(lines.slice(6).map((l) => l.custom_id));
    for (const l of expired) expect(l).toMatchObject({ response: null, error: { code: 'batch_expired' } });

    const resubmitted = lines.slice(6);
    const b3 = (await pollUntil(c, (await submit(c, resubmitted)).id, ended)).batch;
    expect(b3).toMatchObject({ status: 'completed', request_counts: { total: 6, completed: 6, failed: 0 } });
    const stats = s.batchStats();
    expect(stats.accepted.map((b) => [b.seq, b.status, b.requests, b.expired.length])).toEqual([
      [1, 'completed', 3, 0],
      [2, 'expired', 12, 6],
      [3, 'completed', 6, 0],
    ]);
    expect(stats.accepted[2]!.custom_ids).toEqual(expired.map((l) => l.custom_id));
    expect(stats.batch_requests).toBe(3 + 6 + 6);
    expect(billedTwice(stats)).toEqual([]);
  });

  it('expires a batch holding a custom_id that matches expire_batches.custom_ids the first time only', async () => {
    const s = await sim({ completion_delay_ms: 0, expire_batches: { custom_ids: ['slow-*'] } });
    const c = client(s.url);
    const lines = [inputLine('slow-1', phase1Request(records[0]!, 'juror-a', 1)), inputLine('fast-1', phase1Request(records[1]!, 'juror-a', 1))];
    const first = (await pollUntil(c, (await submit(c, lines)).id, ended)).batch;
    expect(first).toMatchObject({ status: 'expired', output_file_id: null, request_counts: { total: 2, completed: 0, failed: 2 } });
    const second = (await pollUntil(c, (await submit(c, lines)).id, ended)).batch;
    expect(second).toMatchObject({ status: 'completed', request_counts: { completed: 2 } });
  });

  it('counts online calls apart from batch lines, and serves the counts on GET /sim/stats', async () => {
    const s = await sim({ completion_delay_ms: 0 });
    const c = client(s.url);
    await c.chat.completions.create({ model: 'juror-a', messages: [{ role: 'user', content: PROBE_PROMPT }] });
    const { batch } = await pollUntil(c, (await submit(c, juryLines(2))).id, ended);
    expect(batch.status).toBe('completed');
    const stats = s.batchStats();
    expect(stats).toMatchObject({ online: { chat_calls: 0, probe_calls: 1 }, batch_requests: 6, tasks: { phase1: 4, consolidation: 2 }, files: { uploaded: 1 } });
    expect(stats.accepted).toEqual([{ id: batch.id, seq: 1, status: 'completed', requests: 6, custom_ids: juryLines(2).map((l) => l.custom_id), failed: [], expired: [], cancelled: [] }]);
    expect(s.stats().total).toBe(0); // the online counters never see batch lines
    const overHttp = (await (await fetch(s.url.replace(/\/v1$/, '/sim/stats'))).json()) as { chat: unknown; batch: unknown };
    expect(overHttp.batch).toEqual(stats);
    expect(overHttp.chat).toEqual(s.stats());
  });

  it('answers a line with a bad body in the error file with its HTTP status, as an online call would be', async () => {
    const s = await sim({ completion_delay_ms: 0 });
    const c = client(s.url);
    const req: ChatRequest = { model: 'juror-a', messages: [{ role: 'user', content: 'no framed blocks here' }] };
    const lines = [inputLine('odd', req), { ...inputLine('streamy', req), body: { ...wireBody(req), stream: true } }];
    const { batch } = await pollUntil(c, (await submit(c, lines)).id, ended);
    expect(batch.request_counts).toEqual({ total: 2, completed: 0, failed: 2 });
    const err = await readLines(c, batch.error_file_id);
    expect(err.map((l) => [l.custom_id, l.response?.status_code, (l.response?.body as { error: { code: string } }).error.code])).toEqual([
      ['odd', 400, 'unknown_task'],
      ['streamy', 400, 'unsupported'],
    ]);
    expect(s.batchStats().accepted[0]!.failed).toEqual(['odd', 'streamy']);
  });
});

describe('the batch: section of a simulator profile', () => {
  it('has defaults within OpenAI limits and refuses unknown keys', () => {
    expect(parseProfile({}).batch).toEqual({
      completion_delay_ms: 50,
      max_requests: 50_000,
      max_bytes: 200 * 1024 * 1024,
      fail_custom_ids: { patterns: [], rate: 0, seed: 0 },
      expire_batches: { nth: [], custom_ids: [], completed_share: 0 },
    });
    expect(parseProfile({ batch: { expire_batches: { nth: [3] } } }).batch!.expire_batches).toEqual({ nth: [3], custom_ids: [], completed_share: 0 });
    expect(() => parseProfile({ batch: { delay: 5 } })).toThrow(ProfileError);
    expect(() => parseProfile({ batch: { fail_custom_ids: { rate: 2 } } })).toThrow(/rate/);
  });

  it('reads custom_id patterns as globs over the whole id, every other character literal', () => {
    const re = globRegExp('rec-1.?/*');
    expect(['rec-1.2/a', 'rec-1.x/cons'].every((id) => re.test(id))).toBe(true);
    expect(['rec-1x2/a', 'rec-1.2', 'xrec-1.2/a', 'rec-1.23/a'].some((id) => re.test(id))).toBe(false);
  });
});
