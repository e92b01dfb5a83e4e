/**
 * The first manifest of a range wins on every store (issue 36, point 2): two writers that
 * commit one range at once get exactly one manifest, the loser drops its own staged parts and
 * reports the range as someone else's, and the committed files match the winner's manifest.
 * And the manifest's seal: an edit of rows, record_ids or range usage shows in `verify`, while
 * manifests written before the seal are still read.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Client } from '../../connectors/s3/client.js';
import { S3ObjectStore } from '../../connectors/s3/object-store.js';
import { LocalObjectStore, MemoryObjectStore, type ObjectStore } from '../../src/pipeline/storage/object-store.js';
import { ShardCommitter } from '../../src/pipeline/commit/shard-commit.js';
import { verifyOutput } from '../../src/pipeline/commit/shard-list.js';
import { createBucket, dropBucket, ensureServices, s3Client } from '../kafka/helpers/services.js';
import { tempDir } from '../helpers/run-setup.js';
import { allTables } from './synth.js';

ensureServices();

const stores: [string, () => Promise<{ store: ObjectStore; done?: () => Promise<void> }>][] = [
  ['local', async () => ({ store: new LocalObjectStore(tempDir('create-only')) })],
  ['memory', async () => ({ store: new MemoryObjectStore() })],
  [
    's3',
    async () => {
      const s3: S3Client = s3Client();
      const bucket = await createBucket(s3, 'createonly');
      return { store: new S3ObjectStore(createS3Client({}), { bucket, prefix: 'out' }), done: async () => (await dropBucket(s3, bucket), s3.destroy()) };
    },
  ],
];

const usage = { tokens_in: 100, tokens_out: 20, cost_usd: 0.5 };
const range = (first: string, last: string) => ({ unit: 'f', unit_token: 'f', first_offset: 0, last_offset: 9, records: 10, usage });

describe.each(stores)('create-only manifests on a %s store', (_kind, open) => {
  let store: ObjectStore;
  let done: (() => Promise<void>) | undefined;
  beforeAll(async () => ({ store, done } = await open()));
  afterAll(async () => done?.());

  it('two writers of one range: one manifest, the loser drops its parts and counts the range as taken', async () => {
    // Different content per writer (other row counts), so a replaced manifest or part would show.
    const a = new ShardCommitter(store).commit({ source: 'kafka', first: 'x+0', last: 'x+9', tables: allTables(1) });
    const b = new ShardCommitter(store).commit({ source: 'kafka', first: 'x+0', last: 'x+9', tables: allTables(0.5) });
    const [ra, rb] = await Promise.all([a, b]);
    expect([ra.alreadyCommitted, rb.alreadyCommitted].sort()).toEqual([false, true]);
    // Both report the same, winning, manifest; the store holds exactly that one.
    expect(ra.manifest.seal).toBe(rb.manifest.seal);
    const report = await verifyOutput(store);
    expect(report.problems).toEqual([]);
    expect(report.manifests).toBe(1);
    expect(await store.list('_staging/')).toEqual([]);
  });

  // Edits go through delete + put: S3 writes manifests create-only even through putObject.
  const rewrite = async (key: string, m: unknown) => (await store.delete!(key), await store.putObject(key, new TextEncoder().encode(JSON.stringify(m))));

  it('verify reports a manifest whose rows, record_ids or usage were edited; an unsealed old one is read and counted', async () => {
    const committer = new ShardCommitter(store);
    await committer.commit({ source: 'kafka', first: 'y+0', last: 'y+9', tables: allTables(1), range: range('y+0', 'y+9') });
    const key = '_commits/y+0-y+9.json';
    const original = JSON.parse(new TextDecoder().decode((await store.get(key))!));
    expect((await verifyOutput(store)).problems).toEqual([]);
    const edits: ((m: typeof original) => void)[] = [(m) => (m.rows.verdicts += 1), (m) => (m.record_ids -= 1), (m) => (m.range.usage.cost_usd = 0)];
    for (const edit of edits) {
      const m = structuredClone(original);
      edit(m);
      await rewrite(key, m);
      const problems = (await verifyOutput(store)).problems;
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/y\+0-y\+9\.json: its seal does not match its fields/);
    }
    // A manifest from before the seal: its files are still checked, and it is no problem by itself.
    const { seal: _seal, ...old } = original;
    await rewrite(key, old);
    const report = await verifyOutput(store);
    expect(report.problems).toEqual([]);
    expect(report.unsealed).toBe(1);
  });
});
