/**
 * The batch provider through the gateway and the real `openai` client, against a very small
 * in-test Batch API (./helpers/batch-server.ts): calls collect into batches, results resolve
 * them, the journal lets a second gateway (a re-run) re-attach or answer without a new batch,
 * failed lines and expired batches are resubmitted alone, and batched calls pay batch rates.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EndpointConfig, ParticipantConfig } from '../../schemas/config.js';
import { createGateway, type Gateway } from '../../src/llm/gateway.js';
import { batchProviderFor, memoryJournal, readEntries, type BatchProvider, type JournalStore } from '../../src/llm/providers/batch/index.js';
import type { CallContext } from '../../src/llm/types.js';
import { startBatchServer, type BatchServer, type BatchServerOptions } from './helpers/batch-server.js';

const PRICES = { m: { input_per_mtok: 2, output_per_mtok: 10 } };
const open: Array<{ gw: Gateway; server?: BatchServer }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.gw.close();
    await o.server?.close();
  }
});

interface Harness {
  gw: Gateway;
  server: BatchServer;
  journal: JournalStore;
  providers: BatchProvider[];
  ask(i: number, signal?: AbortSignal): Promise<string>;
}

async function harness(o: { batch?: Record<string, unknown>; server?: BatchServerOptions | BatchServer; journal?: JournalStore } = {}): Promise<Harness> {
  const server = o.server && 'url' in o.server ? o.server : await startBatchServer(o.server);
  const journal = o.journal ?? memoryJournal();
  const endpoint = EndpointConfig.parse({ base_url: server.url, max_concurrency: 1000, backoff_base_ms: 1, backoff_max_ms: 5, batch: { quiet_ms: 30, poll_interval_ms: 20, ...o.batch } });
  const providers: BatchProvider[] = [];
  const gw = createGateway({
    endpoints: { b: endpoint },
    prices: PRICES,
    cache: { enabled: false, dir: '/nonexistent' },
    auditLogPath: null,
    providerFor: (name, ep) => {
      const p = batchProviderFor(name, ep, journal);
      providers.push(p);
      return p;
    },
  });
  open.push({ gw, ...(o.server && 'url' in o.server ? {} : { server }) });
  const seat = ParticipantConfig.parse({ id: 'j', endpoint: 'b', model: 'm', temperature: 0 });
  const ask = async (i: number, signal?: AbortSignal) => {
    const ctx: CallContext = { record_id: `r${i}`, phase: 'phase1', participant: 'j', caller: 'test.batch' };
    return (await gw.text({ ctx, seat, messages: [{ role: 'user', content: `question ${i}` }], ...(signal ? { signal } : {}) })).value;
  };
  return { gw, server, journal, providers, ask };
}

const echo = (i: number) => JSON.stringify({ echo: `question ${i}` });

describe('batch provider', () => {
  it('collects concurrent calls into one batch and answers each from its line, with no online call', async () => {
    const h = await harness();
    const replies = await Promise.all([0, 1, 2, 3, 4].map((i) => h.ask(i)));
    expect(replies).toEqual([0, 1, 2, 3, 4].map(echo));
    expect(h.server.batches.map((b) => b.custom_ids.length)).toEqual([5]);
    expect(h.server.onlineCalls).toBe(0);
    const s = h.providers[0]!.stats();
    expect(s).toMatchObject({ submitted: 1, completed: 1, failed: 0, requests_submitted: 5, waiting: 0, in_progress: 0 });
    // batch rate: half of 100 in x $2 + 20 out x $10 per million, five times
    const t = h.gw.ledger.summary().total;
    expect(t.cost_usd).toBeCloseTo((5 * (100 * 2 + 20 * 10)) / 1e6 / 2, 12);
    expect(t.attempts).toBe(5);
  });

  it('cuts batches at max_requests, and a key asked twice is one line', async () => {
    const h = await harness({ batch: { max_requests: 2 } });
    await Promise.all([0, 1, 2, 3, 4, 0].map((i) => h.ask(i)));
    expect(h.server.batches.map((b) => b.custom_ids.length)).toEqual([2, 2, 1]);
    expect(new Set(h.server.batches.flatMap((b) => b.custom_ids)).size).toBe(5);
  });

  it('a re-run answers from the journal what a finished batch returned, submitting nothing', async () => {
    const server = await startBatchServer();
    const first = await harness({ server });
    await Promise.all([0, 1, 2].map((i) => first.ask(i)));
    const entries = await readEntries(first.journal);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ state: 'completed', endpoint: 'b', model: 'm', batch_id: 'batch_1' });
    expect(Object.keys(entries[0]!.results!)).toHaveLength(3);
    await first.gw.close();
    const again = await harness({ server, journal: first.journal });
    expect(await Promise.all([0, 1, 2].map((i) => again.ask(i)))).toEqual([0, 1, 2].map(echo));
    expect(server.batches).toHaveLength(1);
    expect(again.providers[0]!.stats().served_from_journal).toBe(3);
    await server.close();
  });

  it('a re-run re-attaches to a batch still in progress and never submits its requests again', async () => {
    const server = await startBatchServer();
    server.hold = true;
    const first = await harness({ server });
    const stop = new AbortController();
    const pending = [0, 1, 2].map((i) => first.ask(i, stop.signal).catch((e: Error) => e));
    await until(() => server.batches.length === 1 && server.batches[0]!.polls >= 0 && first.providers[0]!.stats().in_progress === 1);
    stop.abort(new Error('stopped'));
    await Promise.all(pending);
    await first.gw.close();
    expect((await readEntries(first.journal))[0]).toMatchObject({ state: 'validating', batch_id: 'batch_1' });
    const again = await harness({ server, journal: first.journal });
    const replies = Promise.all([0, 1, 2, 3].map((i) => again.ask(i)));
    await until(() => server.batches.length === 2);
    server.hold = false;
    expect(await replies).toEqual([0, 1, 2, 3].map(echo));
    // the re-run's own batch holds only the request the first run never sent
    expect(server.batches.map((b) => b.custom_ids.length)).toEqual([3, 1]);
    await server.close();
  });

  it('an error-file line is submitted again once, alone, and then answered', async () => {
    const h = await harness({ server: { failOnce: (body) => JSON.stringify(body.messages).includes('question 1') } });
    expect(await Promise.all([0, 1, 2].map((i) => h.ask(i)))).toEqual([0, 1, 2].map(echo));
    expect(h.server.batches.map((b) => b.custom_ids.length)).toEqual([3, 1]);
    expect(h.server.batches[0]!.custom_ids).toContain(h.server.batches[1]!.custom_ids[0]);
    expect(h.providers[0]!.stats()).toMatchObject({ submitted: 2, completed: 1, failed: 1 });
  });

  it('a create whose reply is lost but which the server carried out: the batch is found by its input file, nothing is sent twice', async () => {
    const h = await harness({ server: { loseCreateReplies: 1 } });
    expect(await Promise.all([0, 1].map((i) => h.ask(i)))).toEqual([0, 1].map(echo));
    expect(h.server.batches.map((b) => [b.status, b.custom_ids.length])).toEqual([['completed', 2]]);
    expect(h.providers[0]!.stats()).toMatchObject({ submitted: 1, completed: 1, failed: 0 });
  });

  it('an expired batch: its requests go again in one new batch, each once', async () => {
    const h = await harness({ server: { expire: new Set([0]) } });
    expect(await Promise.all([0, 1].map((i) => h.ask(i)))).toEqual([0, 1].map(echo));
    expect(h.server.batches.map((b) => [b.status, b.custom_ids.length])).toEqual([
      ['expired', 2],
      ['completed', 2],
    ]);
    expect(new Set(h.server.batches[1]!.custom_ids)).toEqual(new Set(h.server.batches[0]!.custom_ids));
  });
});

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
}
