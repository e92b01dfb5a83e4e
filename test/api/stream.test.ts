/**
 * The library's entry points (src/api, issue 41) on the juror simulator through the real openai
 * client: `createJury`'s judge and its typed errors; `juryStream` with bounded concurrency,
 * backpressure from a slow reader (the bound is asserted, not a time), order, dead letters
 * that never error the stream, an endpoint fault waiting cannot heal erroring it with the typed
 * error, and the Web stream pair of Duplex.toWeb.
 */
import { createServer, type Server } from 'node:http';
import { rmSync } from 'node:fs';
import { Duplex } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJury, juryStream, type Jury, type StreamResult } from '../../src/api/index.js';
import { startSimulator, defaultProfile, withoutFaults, type RunningSimulator } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { fastSimConfig, tempDir } from '../helpers/run-setup.js';
import { feed } from '../helpers/stream-feed.js';

const dir = tempDir('api-stream');
const config = fastSimConfig(dir);
let jury: Jury;

beforeAll(async () => {
  jury = await createJury(config);
});
afterAll(async () => {
  await jury?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function collect(stream: AsyncIterable<StreamResult>): Promise<StreamResult[]> {
  const out: StreamResult[] = [];
  for await (const r of stream) out.push(r);
  return out;
}

describe('createJury', () => {
  it('judges a record into its verdict, steps and decision; a bad record is a RecordError with its dead letter', async () => {
    const [record] = syntheticRecords(1, { seed: 3 });
    const j = await jury.judge(record);
    expect(j.verdict.record_id).toBe(record!.id);
    expect(j.steps.length).toBe(j.verdict.n_steps);
    expect(['keep', 'drop', 'review']).toContain(j.decision.decision);
    expect(j.rows.verdict.record_id).toBe(record!.id);
    const bad = await jury.judge({ id: 'no-problem', trace: 'x' }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ name: 'RecordError', kind: 'input' });
    expect((bad as { deadLetter: { error: string } }).deadLetter.error).toMatch(/problem/);
  });

  it('an aborted signal rejects with its reason; a wrong config is a ConfigError naming the key', async () => {
    const [record] = syntheticRecords(1, { seed: 4 });
    await expect(jury.judge(record, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    await expect(createJury({ endpoints: {}, jurors: [{ id: 'j', endpoint: 'nowhere', model: 'm' }] })).rejects.toMatchObject({ name: 'ConfigError', kind: 'config' });
  });
});

describe('juryStream', () => {
  it('a slow reader holds the records in flight at the bound: intake stops, nothing piles up', async () => {
    const concurrency = 4;
    const stream = juryStream({ jury, concurrency });
    const records = syntheticRecords(40, { seed: 5 });
    const source = feed(stream, records);
    let consumed = 0;
    let worst = 0;
    for await (const _ of stream) {
      consumed++;
      worst = Math.max(worst, source.pulled() - consumed);
      // The reader is slow: everything upstream runs ahead until backpressure holds it.
      await sleep(15);
      worst = Math.max(worst, source.pulled() - consumed);
      expect(stream.inFlight).toBeLessThanOrEqual(concurrency);
    }
    await source.done;
    expect(consumed).toBe(records.length);
    expect(stream.maxInFlight).toBe(concurrency);
    // in flight + one in the writable buffer + one in the readable buffer + the one being written
    expect(worst).toBeLessThanOrEqual(concurrency + 3);
  });

  it('bad records come out as dead letters in their place; the stream never errors for them', async () => {
    const good = syntheticRecords(6, { seed: 6 });
    const input: unknown[] = [good[0], 'not a record', good[1], { id: 'x', problem: 'p' }, ...good.slice(2), 42];
    const results = await collect((async function* () {
      const s = juryStream({ jury, concurrency: 3 });
      const source = feed(s, input);
      yield* s as AsyncIterable<StreamResult>;
      await source.done;
    })());
    expect(results.map((r) => r.index)).toEqual(input.map((_, i) => i));
    expect(results.map((r) => r.ok)).toEqual([true, false, true, false, true, true, true, true, false]);
    const dead = results.filter((r) => !r.ok);
    for (const d of dead) expect(d.reason.length).toBeGreaterThan(0);
    expect(results[1]).toMatchObject({ ok: false, record: 'not a record', deadLetter: { source_offset: 1 } });
  });

  it('works in stream.pipeline, unordered, opening and closing its own jury from a config', async () => {
    const records = syntheticRecords(12, { seed: 7 });
    const out: StreamResult[] = [];
    await pipeline(
      records,
      juryStream({ config, concurrency: 5, ordered: false }),
      async (results: AsyncIterable<StreamResult>) => {
        for await (const r of results) out.push(r);
      },
    );
    expect(out.map((r) => r.index).sort((a, b) => a - b)).toEqual(records.map((_, i) => i));
    expect(out.every((r) => r.ok)).toBe(true);
  });

  it('is a Web stream pair through Duplex.toWeb', async () => {
    const records = syntheticRecords(3, { seed: 8 });
    const { readable, writable } = Duplex.toWeb(juryStream({ jury, concurrency: 2 }));
    const writer = writable.getWriter();
    const writing = (async () => {
      for (const r of records) await writer.write(r);
      await writer.close();
    })();
    const ids: string[] = [];
    for await (const r of readable as unknown as AsyncIterable<StreamResult>) if (r.ok) ids.push(r.verdict.record_id);
    await writing;
    expect(ids).toEqual(records.map((r) => r.id));
  });
});

describe('juryStream and an endpoint fault waiting cannot heal', () => {
  let sim: RunningSimulator;
  let gate: Server;
  let url = '';
  let chats = 0;
  const REFUSE_AFTER = 24;

  beforeAll(async () => {
    sim = await startSimulator({ profile: withoutFaults(defaultProfile()) });
    // A scripted OpenAI-compatible gate in front of the simulator: the key is refused (401) from the 25th chat call on.
    gate = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void (async () => {
          if (req.method === 'POST' && ++chats > REFUSE_AFTER) return void res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } }));
          const upstream = await fetch(`${sim.url}${req.url!.replace(/^\/v1/, '')}`, { method: req.method!, headers: { 'content-type': 'application/json' }, ...(req.method === 'POST' ? { body: Buffer.concat(chunks).toString('utf8') } : {}) });
          res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
        })().catch(() => res.socket?.destroy()); // the simulator closed under a call the stopped jury left behind
      });
    });
    await new Promise<void>((r) => gate.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(gate.address() as { port: number }).port}/v1`;
  });
  afterAll(async () => {
    gate?.close();
    await sim?.close();
  });

  it('errors the stream with the typed EndpointFaultError (kind endpoint); what was judged before came out', async () => {
    const cfg = {
      endpoints: { sim: { base_url: url, max_concurrency: 4, backoff_base_ms: 5, backoff_max_ms: 20 } },
      jurors: [{ id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' }, { id: 'jury-1', endpoint: 'sim', model: 'sim-juror-b' }],
      consolidator: { id: 'consolidator', endpoint: 'sim', model: 'sim-consolidator' },
      mode: 'consolidation' as const,
      cache: { enabled: false, dir: `${dir}/cache` },
    };
    const out: StreamResult[] = [];
    const err = await pipeline(syntheticRecords(30, { seed: 9 }), juryStream({ config: cfg, concurrency: 2 }), async (results: AsyncIterable<StreamResult>) => {
      for await (const r of results) out.push(r);
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'EndpointFaultError', kind: 'endpoint', endpoint: 'sim' });
    expect(out.length).toBeGreaterThan(0);
    expect(out.length).toBeLessThan(30);
    expect(out.every((r) => r.ok)).toBe(true);
  });
});
