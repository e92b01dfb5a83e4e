// A range whose write fails mid-way leaves nothing a folder glob can pick up (issue 13): parts are
// staged under _staging/ with a non-data suffix, the manifest is the commit point, and the parts
// move to their names only after it. Run on a local folder, in memory and on the real S3 server.
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Client } from '../../connectors/s3/client.js';
import { S3ObjectStore } from '../../connectors/s3/object-store.js';
import { LocalObjectStore, MemoryObjectStore, type ObjectStore } from '../../src/pipeline/storage/object-store.js';
import { listCommitted, ShardCommitter, verifyCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { createBucket, dropBucket, ensureServices, s3Client } from '../kafka/helpers/services.js';
import { tempDir } from '../helpers/run-setup.js';
import { allTables } from './synth.js';

ensureServices();

/** Fails every put and delete after the first `failAt` of them, like a store that goes away mid-range. */
class FailingStore implements ObjectStore {
  ops = 0;
  failAt = Infinity;
  failMoves = false;
  constructor(readonly inner: ObjectStore) {}
  private tick(what: string): void {
    if (++this.ops > this.failAt) throw new Error(`simulated failure at ${what} (op ${this.ops})`);
  }
  locate = (k: string) => this.inner.locate(k);
  exists = (k: string) => this.inner.exists(k);
  list = (p: string) => this.inner.list(p);
  get = (k: string) => this.inner.get(k);
  async delete(k: string): Promise<void> {
    this.tick(`delete ${k}`);
    await this.inner.delete!(k);
  }
  async putObject(key: string, bytes: Uint8Array): Promise<void> {
    this.tick(`put ${key}`);
    await this.inner.putObject(key, bytes);
  }
  async move(from: string, to: string): Promise<void> {
    if (this.failMoves) throw new Error(`simulated failure moving ${from}`);
    await this.inner.move!(from, to);
  }
}

/** What a glob like out/<table>/*\/*.parquet or out/**\/*.parquet could find: data files anywhere. */
const dataFiles = async (store: ObjectStore) => (await store.list('')).filter((k) => /\.(parquet|arrow|jsonl)$/.test(k));

const stores: [string, () => Promise<{ store: ObjectStore; done?: () => Promise<void> }>][] = [
  ['local', async () => ({ store: new LocalObjectStore(tempDir('staged')) })],
  ['memory', async () => ({ store: new MemoryObjectStore() })],
  [
    's3',
    async () => {
      const s3: S3Client = s3Client();
      const bucket = await createBucket(s3, 'staged');
      return { store: new S3ObjectStore(createS3Client({}), { bucket, prefix: 'out' }), done: async () => (await dropBucket(s3, bucket), s3.destroy()) };
    },
  ],
];

describe.each(stores)('staged range commit on a %s store', (_kind, open) => {
  let store: ObjectStore;
  let done: (() => Promise<void>) | undefined;
  beforeAll(async () => ({ store, done } = await open()));
  afterAll(async () => done?.());

  const req = (first: string, last: string) => ({ source: 'kafka', first, last, tables: allTables(1) });

  it('a write that fails after some parts leaves no data file, no manifest, and a retry commits cleanly', async () => {
    const failing = new FailingStore(store);
    failing.failAt = 4; // 4 of the 16 parts are written, then the store is gone (puts and deletes fail)
    await expect(new ShardCommitter(failing, { formats: ['parquet', 'arrow'] }).commit(req('a+0', 'a+9'))).rejects.toThrow(/simulated failure/);
    expect(await dataFiles(store)).toEqual([]);
    expect(await listCommitted(store)).toEqual([]);
    const staged = await store.list('_staging/');
    expect(staged.length).toBe(4); // the attempt could not clean up after itself: the store was down
    expect(staged.every((k) => k.endsWith('.staged'))).toBe(true);

    // The next run: its recover drops the dead attempt, and the range commits with every part.
    const committer = new ShardCommitter(store, { formats: ['parquet', 'arrow'] });
    expect(await committer.recover({ dropUnfinished: true })).toEqual({ published: 0, removed: 1, kept: 0 });
    const { manifest } = await committer.commit(req('a+0', 'a+9'));
    expect(await verifyCommitted(store, manifest)).toEqual([]);
    expect((await dataFiles(store)).sort()).toEqual(manifest.files.map((f) => f.key).sort());
    expect(manifest.files).toHaveLength(16); // 8 tables (repairs and reviews included: allTables has every one) x 2 formats
    expect(await store.list('_staging/')).toEqual([]);
    expect(await readCommittedRows(store, 'verdicts')).toEqual(allTables(1).verdicts);
  });

  it('a writer that stops between manifest and publish: the range is finished by the next look at it', async () => {
    const failing = new FailingStore(store);
    failing.failMoves = true;
    await expect(new ShardCommitter(failing).commit(req('b+0', 'b+9'))).rejects.toThrow(/simulated failure moving/);
    const [manifest] = (await listCommitted(store)).filter((m) => m.first === 'b+0');
    expect(manifest?.staging).toMatch(/^_staging\/b\+0-b\+9\.[0-9a-f]{16}\/$/);
    expect(await verifyCommitted(store, manifest!)).not.toEqual([]); // committed, not yet published

    // Kafka-style: another attempt (not recover) finds the manifest and publishes the staged parts.
    const again = await new ShardCommitter(store).commit(req('b+0', 'b+9'));
    expect(again.alreadyCommitted).toBe(true);
    expect(await verifyCommitted(store, manifest!)).toEqual([]);
    expect(await store.list(manifest!.staging!)).toEqual([]);
  });

  it('recover publishes a committed range left staged, and keeps an unfinished one unless told to drop it', async () => {
    const failing = new FailingStore(store);
    failing.failMoves = true;
    await expect(new ShardCommitter(failing).commit(req('c+0', 'c+9'))).rejects.toThrow();
    failing.failMoves = false;
    failing.ops = 0;
    failing.failAt = 2;
    await expect(new ShardCommitter(failing).commit(req('d+0', 'd+9'))).rejects.toThrow();
    const committer = new ShardCommitter(store);
    expect(await committer.recover({ dropUnfinished: false })).toEqual({ published: 1, removed: 0, kept: 1 });
    const [c] = (await listCommitted(store)).filter((m) => m.first === 'c+0');
    expect(await verifyCommitted(store, c!)).toEqual([]);
    expect(await committer.recover({ dropUnfinished: true })).toEqual({ published: 0, removed: 1, kept: 0 });
    expect(await store.list('_staging/')).toEqual([]);
    expect((await dataFiles(store)).some((k) => k.includes('d+0'))).toBe(false);
  });
});

describe('what staging costs on the S3 server', () => {
  it('counts requests and times a range commit with and without staging (reported, not asserted on time)', async () => {
    const s3 = s3Client();
    const bucket = await createBucket(s3, 'stagecost');
    try {
      const staged = new S3ObjectStore(createS3Client({}), { bucket, prefix: 'staged' });
      const direct = new S3ObjectStore(createS3Client({}), { bucket, prefix: 'direct' });
      // Without move() the committer writes each part straight to its name (the old protocol).
      const directView: ObjectStore = { putObject: (k, b) => direct.putObject(k, b), exists: (k) => direct.exists(k), list: (p) => direct.list(p), get: (k) => direct.get(k), locate: (k) => direct.locate(k) };
      const times: Record<string, number[]> = { staged: [], direct: [] };
      for (let i = 0; i < 5; i++) {
        for (const [name, st] of [['staged', staged], ['direct', directView]] as const) {
          const t0 = performance.now();
          await new ShardCommitter(st).commit({ source: 'kafka', first: `r${i}+0`, last: `r${i}+9`, tables: allTables(1) });
          times[name]!.push(performance.now() - t0);
        }
      }
      expect(staged.stats.copies).toBe(40); // 5 ranges x 8 tables: one copy and one delete per part
      expect(staged.stats.deletes).toBe(40);
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(1);
      console.log(`[staging cost] S3 range commit of 6 parts: median ${median(times.staged!)} ms staged vs ${median(times.direct!)} ms direct; requests staged ${JSON.stringify(staged.stats)} direct ${JSON.stringify(direct.stats)}`);
      for (const st of [staged, directView]) expect((await listCommitted(st)).length).toBe(5);
    } finally {
      await dropBucket(s3, bucket);
      s3.destroy();
    }
  });
});
