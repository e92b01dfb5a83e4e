/**
 * The output lease (src/pipeline/commit/output-lease.ts) on a local folder and on the shared S3 server:
 * of many starters exactly one wins, a held lease is refused naming its holder, an expired or
 * released one is taken, --take-over takes a live one and the old holder learns it has lost.
 * Expiry is driven by an injected clock, so nothing here waits on wall time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { createS3Client } from '../../connectors/s3/client.js';
import { S3ObjectStore } from '../../connectors/s3/object-store.js';
import { LocalObjectStore, type ObjectStore } from '../../src/pipeline/storage/object-store.js';
import { acquireLease, LeaseHeldError, LeaseLostError } from '../../src/pipeline/commit/output-lease.js';
import { leaseKey, parseLease } from '../../src/pipeline/commit/lease-record.js';
import { waitForProgress } from '../helpers/progress.js';
import { tempDir } from '../helpers/run-setup.js';
import { createBucket, dropBucket, ensureServices, runId, s3Client } from '../kafka/helpers/services.js';

ensureServices();

const EXPIRY = 60_000;

function clock(start = Date.parse('2026-12-05T10:00:00Z')) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

const base = (now: () => number, command = 'run') => ({ scope: 'output', command, expiryMs: EXPIRY, now });

async function record(store: ObjectStore, generation: number, scope = 'output') {
  const bytes = await store.get(leaseKey(scope, generation));
  return bytes ? parseLease(bytes, leaseKey(scope, generation)) : null;
}

function suite(name: string, makeStore: () => ObjectStore) {
  describe(`output lease on ${name}`, () => {
    it('of eight starters at once exactly one wins; the others are refused naming it', async () => {
      const store = makeStore();
      const c = clock();
      const tries = await Promise.allSettled(Array.from({ length: 8 }, () => acquireLease(store, 'OUT', base(c.now))));
      const won = tries.filter((t) => t.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const t of tries.filter((x): x is PromiseRejectedResult => x.status === 'rejected')) {
        expect(t.reason).toBeInstanceOf(LeaseHeldError);
        expect((t.reason as Error).message).toMatch(/^OUT is being written by run \(pid \d+ on .+, since 2026-12-05T10:00:00.000Z, lease expires 2026-12-05T10:01:00.000Z unless renewed\)/);
      }
      expect(await store.list('_lease/')).toEqual([leaseKey('output', 1)]);
    });

    it('a released lease is taken at once; an expired one after its expiry; older generations are removed', async () => {
      const store = makeStore();
      const c = clock();
      const first = await acquireLease(store, 'OUT', base(c.now));
      await first.release();
      expect(await record(store, 1)).toMatchObject({ released: true });
      await acquireLease(store, 'OUT', base(c.now, 'decide')); // generation 2, never released: the holder "died"
      await expect(acquireLease(store, 'OUT', base(c.now))).rejects.toThrow(/being written by decide/);
      c.advance(EXPIRY - 1);
      await expect(acquireLease(store, 'OUT', base(c.now))).rejects.toBeInstanceOf(LeaseHeldError);
      c.advance(1);
      const third = await acquireLease(store, 'OUT', base(c.now));
      expect(await store.list('_lease/')).toEqual([leaseKey('output', 3)]);
      await expect(third.confirmHeld()).resolves.toBeUndefined();
    });

    it('--take-over takes a live lease; the old holder finds it lost on its next renewal and may not commit', async () => {
      const store = makeStore();
      const c = clock();
      const old = await acquireLease(store, 'OUT', base(c.now));
      const taker = await acquireLease(store, 'OUT', { ...base(c.now), takeOver: true });
      await old.renew();
      expect(old.lost.aborted).toBe(true);
      await expect(old.confirmHeld()).rejects.toBeInstanceOf(LeaseLostError);
      expect((old.lost.reason as Error).message).toMatch(/lease was taken over by run \(pid \d+/);
      await expect(taker.confirmHeld()).resolves.toBeUndefined();
    });

    it('a holder past its own expiry renews before a manifest when nobody took over, and writes none when someone did', async () => {
      const store = makeStore();
      const c = clock();
      const lease = await acquireLease(store, 'OUT', base(c.now));
      c.advance(EXPIRY / 2);
      await lease.renew();
      expect((await record(store, 1))!.expires_at).toBe(new Date(c.now() + EXPIRY).toISOString());
      // Past its expiry (a store outage, say), nobody took over: confirmed, and renewed on the way.
      c.advance(EXPIRY);
      await expect(lease.confirmHeld()).resolves.toBeUndefined();
      expect((await record(store, 1))!.expires_at).toBe(new Date(c.now() + EXPIRY).toISOString());
      // Past it again, and this time another writer took the expired lease first.
      c.advance(EXPIRY);
      await acquireLease(store, 'OUT', base(c.now, 'decide'));
      await expect(lease.confirmHeld()).rejects.toThrow(/taken over by decide/);
    });

    it('waits for a held lease when asked, and gets it once the holder releases', async () => {
      const store = makeStore();
      let looks = 0;
      const watched: ObjectStore = { ...store, locate: (k) => store.locate(k), get: (k) => store.get(k), putObject: (k, b) => store.putObject(k, b), exists: (k) => store.exists(k), createObject: (k, b) => store.createObject!(k, b), delete: (k) => store.delete!(k), list: (p) => (looks++, store.list(p)) };
      const holder = await acquireLease(store, 'OUT', { scope: 'output', command: 'run', expiryMs: EXPIRY });
      let got = false;
      const waiting = acquireLease(watched, 'OUT', { scope: 'output', command: 'run', expiryMs: EXPIRY, waitMs: 10 * EXPIRY, pollMs: 20 }).then((l) => ((got = true), l));
      // The waiter looked three times and still waits; then the holder lets go.
      await waitForProgress(() => ({ done: looks >= 3, progress: looks }), { what: 'the waiter polling' });
      expect(got).toBe(false);
      await holder.release();
      const lease = await waiting;
      await expect(lease.confirmHeld()).resolves.toBeUndefined();
    });

    it('ranks of one split hold their scopes together; a whole-output writer conflicts with them', async () => {
      const store = makeStore();
      const c = clock();
      const r0 = await acquireLease(store, 'OUT', { ...base(c.now), scope: 'rank-0-of-2' });
      const r1 = await acquireLease(store, 'OUT', { ...base(c.now), scope: 'rank-1-of-2' });
      expect(r1.peersLive).toBe(true);
      await expect(acquireLease(store, 'OUT', base(c.now))).rejects.toThrow(/being written by run rank-[01]-of-2/);
      await expect(acquireLease(store, 'OUT', { ...base(c.now), scope: 'rank-0-of-3' })).rejects.toBeInstanceOf(LeaseHeldError);
      await r0.release();
      await r1.release();
      expect((await acquireLease(store, 'OUT', base(c.now))).peersLive).toBe(false);
    });
  });
}

suite('a local folder', () => new LocalObjectStore(tempDir('lease')));

let s3: S3Client;
let bucket: string;
beforeAll(async () => {
  s3 = s3Client();
  bucket = await createBucket(s3, 'leaseunit');
});
afterAll(async () => {
  await dropBucket(s3, bucket);
  s3.destroy();
});
suite('S3', () => new S3ObjectStore(createS3Client({}), { bucket, prefix: `l-${runId()}` }));
