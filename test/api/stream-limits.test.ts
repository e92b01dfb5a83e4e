/**
 * juryStream at its limits (issue 41): a reader far slower than the jury holds the records in
 * flight at the bound and the memory retained flat while megabyte records stream through; an
 * endpoint that goes down and comes back pauses the stream, which then finishes every record
 * with a full verdict; a record id written twice comes out judged once.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { rmSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJury, juryStream, type Jury, type JuryStream, type StreamResult } from '../../src/api/index.js';
import { defaultProfile, startSimulator, withoutFaults, type RunningSimulator } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { fastSimConfig, tempDir } from '../helpers/run-setup.js';
import { feed } from '../helpers/stream-feed.js';

const dir = tempDir('api-stream-limits');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A full garbage collection, so the heap measured is what is still held. */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const retained = () => {
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external, rss: m.rss };
};

/** Resolves once `cond` holds, checking after every turn of the event loop (progress, not time). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await sleep(1);
}

const MB = 1 << 20;

describe('juryStream under a reader far slower than the jury', () => {
  let jury: Jury;
  beforeAll(async () => {
    jury = await createJury(fastSimConfig(dir));
  });
  afterAll(() => jury?.close());

  it('keeps the records in flight at the bound and the memory held flat while 120 one-megabyte records pass', async () => {
    const concurrency = 4;
    const total = 120;
    // Made as they are pulled, each with a fresh megabyte: a source that ran ahead of the
    // reader would hold them all (120 MB) where the bound holds concurrency + 3.
    const base = syntheticRecords(total, { seed: 11 });
    const records = (function* () {
      for (const r of base) yield { ...r, attachment: String(r.id).padEnd(MB, '.') };
    })();
    const before = retained();
    const stream = juryStream({ jury, concurrency });
    const source = feed(stream, records);
    let consumed = 0;
    let worstAhead = 0;
    let worstHeap = 0;
    let worstRss = 0;
    for await (const r of stream as AsyncIterable<StreamResult>) {
      expect(r.ok).toBe(true);
      consumed++;
      // The reader is slow without end: before taking the next result it waits until the
      // stream is full (every slot held; near the end, once the source is spent), so the jury
      // has had every chance to run ahead; for the first three it also sleeps a second, as a
      // reader taking one result a second would.
      await until(() => stream.inFlight === concurrency || source.pulled() === total);
      if (consumed <= 3) await sleep(1000);
      expect(stream.inFlight).toBeLessThanOrEqual(concurrency);
      // in flight + one in the writable buffer + one in the readable buffer + the one being written
      worstAhead = Math.max(worstAhead, source.pulled() - consumed);
      if (consumed % 10 === 0) {
        const now = retained();
        worstHeap = Math.max(worstHeap, now.heap - before.heap);
        worstRss = Math.max(worstRss, now.rss - before.rss);
      }
    }
    await source.done;
    expect(consumed).toBe(total);
    expect(stream.maxInFlight).toBe(concurrency);
    expect(worstAhead).toBeLessThanOrEqual(concurrency + 3);
    // What stays held is the records in flight (~7 MB) and the jury's own state, far from the
    // 120 MB that went through; RSS likewise stays within a few tens of MB of where it began.
    expect(worstHeap).toBeLessThan(32 * MB);
    expect(worstRss).toBeLessThan(96 * MB);
  }, 120_000);
});

describe('juryStream while an endpoint is down and comes back', () => {
  let sim: RunningSimulator;
  let gate: Server;
  let url = '';
  const state = { chats: 0, down: false, downAt: 12, probesWhileDown: 0, resetsWhileDown: 0, healed: false };

  beforeAll(async () => {
    sim = await startSimulator({ profile: withoutFaults(defaultProfile()) });
    // In front of the simulator: from the 12th chat call the server is gone (every connection
    // reset, model calls and GET /models probes alike, the calls it was answering too) until it
    // has refused two probes; then it is back. Gone means gone: no answer arrives while it is
    // down, so the jury sees an outage, not one unlucky call among answered ones.
    const answering = new Set<ServerResponse>();
    gate = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method === 'POST' && ++state.chats === state.downAt) {
          state.down = true;
          for (const r of answering) r.socket?.destroy();
        }
        if (state.down) {
          if (req.method === 'GET' && ++state.probesWhileDown >= 2) [state.down, state.healed] = [false, true];
          state.resetsWhileDown++;
          return void req.socket.destroy();
        }
        answering.add(res);
        void (async () => {
          const upstream = await fetch(`${sim.url}${req.url!.replace(/^\/v1/, '')}`, { method: req.method!, headers: { 'content-type': 'application/json' }, ...(req.method === 'POST' ? { body: Buffer.concat(chunks).toString('utf8') } : {}) });
          const body = await upstream.text();
          if (state.down) return void res.socket?.destroy();
          res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(body);
        })()
          .catch(() => res.socket?.destroy())
          .finally(() => answering.delete(res));
      });
    });
    await new Promise<void>((r) => gate.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(gate.address() as { port: number }).port}/v1`;
  });
  afterAll(async () => {
    gate?.closeAllConnections();
    gate?.close();
    await sim?.close();
  });

  it('pauses, then judges every record with every juror: no error, no degraded verdict', async () => {
    const cfg = {
      endpoints: { sim: { base_url: url, max_concurrency: 4, max_retries: 3, backoff_base_ms: 5, backoff_max_ms: 20, breaker: { failures: 2, probe_interval_ms: 20, probe_max_interval_ms: 50 } } },
      jurors: [{ id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' }, { id: 'jury-1', endpoint: 'sim', model: 'sim-juror-b' }],
      consolidator: { id: 'consolidator', endpoint: 'sim', model: 'sim-consolidator' },
      mode: 'consolidation' as const,
      cache: { enabled: false, dir: `${dir}/cache-outage` },
      preflight: false,
      max_outage_ms: 600_000,
    };
    const records = syntheticRecords(20, { seed: 12 });
    const stream = juryStream({ config: cfg, concurrency: 3 });
    const source = feed(stream, records);
    const out: StreamResult[] = [];
    for await (const r of stream as AsyncIterable<StreamResult>) out.push(r);
    await source.done;
    // The outage happened and was seen: the endpoint was probed while it was down.
    expect(state.healed).toBe(true);
    expect(state.probesWhileDown).toBeGreaterThanOrEqual(2);
    expect(out.map((r) => r.index)).toEqual(records.map((_, i) => i));
    for (const r of out) {
      expect(r.ok, r.ok ? '' : r.reason).toBe(true);
      if (!r.ok) continue;
      expect(r.verdict.jurors_ok).toBe(2);
      expect(r.verdict.degraded, r.verdict.degraded_reason ?? '').toBe(false);
      expect(r.verdict.error).toBeNull();
    }
  }, 120_000);
});

describe('juryStream and a record id written twice', () => {
  const records = syntheticRecords(4, { seed: 13 });
  const twice = [records[0], records[1], records[0], records[2], { ...records[1]!, problem: 'another problem' }, records[3]];
  const judgeAll = async (config: string) => {
    const out: StreamResult[] = [];
    const stream = juryStream({ config, concurrency: 2 });
    const source = feed(stream, twice);
    for await (const r of stream as AsyncIterable<StreamResult>) out.push(r);
    await source.done;
    return out;
  };

  it('by default a later copy is a dead letter naming the first, unjudged', async () => {
    const out = await judgeAll(fastSimConfig(tempDir('api-dup-default')));
    expect(out.map((r) => r.ok)).toEqual([true, true, false, true, false, true]);
    const [third, fifth] = [out[2]!, out[4]!];
    if (third.ok || fifth.ok) throw new Error('expected dead letters');
    expect(third.reason).toBe(`duplicate record_id ${JSON.stringify(records[0]!.id)} (first seen at records:0)`);
    expect(fifth.reason).toBe(`duplicate record_id ${JSON.stringify(records[1]!.id)} (first seen at records:1)`);
    expect(fifth.deadLetter).toMatchObject({ source_offset: 4, error: fifth.reason });
  });

  it('keep_first does the same (a stream has no manifest to list a dropped copy in); keep_all judges every copy', async () => {
    const first = await judgeAll(fastSimConfig(tempDir('api-dup-first'), { input: { duplicate_ids: 'keep_first' } }));
    expect(first.map((r) => r.ok)).toEqual([true, true, false, true, false, true]);
    const all = await judgeAll(fastSimConfig(tempDir('api-dup-all'), { input: { duplicate_ids: 'keep_all' } }));
    expect(all.every((r) => r.ok)).toBe(true);
    expect(all.map((r) => (r.ok ? r.verdict.record_id : ''))).toEqual(twice.map((r) => r!.id));
  });
});
