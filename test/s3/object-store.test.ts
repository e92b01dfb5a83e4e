// S3ObjectStore and the create-only commit protocol against the real S3 server (versitygw).
import { ListMultipartUploadsCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Client } from '../../connectors/s3/client.js';
import { S3ObjectStore } from '../../connectors/s3/object-store.js';
import { ObjectExistsError } from '../../src/pipeline/storage/object-store.js';
import { openS3Output } from '../../connectors/s3/output.js';
import { listCommitted, ShardCommitter, verifyCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { manifestKey } from '../../src/pipeline/commit/layout.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { createBucket, dropBucket, ensureServices, s3Client } from '../kafka/helpers/services.js';

ensureServices();
const MB = 1024 * 1024;
const dead = (offset: number, error = 'bad') => ({ source: 'file', source_unit: 'in.jsonl', source_offset: offset, error, raw: `raw ${offset}`, raw_truncated: false });

describe('S3ObjectStore on a real S3 server', () => {
  let s3: S3Client;
  let bucket: string;
  let store: S3ObjectStore;

  beforeAll(async () => {
    s3 = s3Client();
    bucket = await createBucket(s3, 'store');
    store = new S3ObjectStore(createS3Client({}), { bucket, prefix: 'runs/a' }, { multipartThresholdBytes: 6 * MB, partSizeBytes: 5 * MB });
  });
  afterAll(async () => {
    await dropBucket(s3, bucket);
    s3.destroy();
  });

  it('puts, gets, lists under its prefix and says where a key lives', async () => {
    await store.putObject('verdicts/source=file/part-1.parquet', new Uint8Array([1, 2, 3]));
    await store.putObject('verdicts/source=file/part-2.parquet', new Uint8Array([4]));
    await store.putObject('defects/source=file/part-1.parquet', new Uint8Array([5]));
    expect(await store.get('verdicts/source=file/part-1.parquet')).toEqual(new Uint8Array([1, 2, 3]));
    expect(await store.get('missing/key')).toBeNull();
    expect(await store.exists('defects/source=file/part-1.parquet')).toBe(true);
    expect(await store.exists('defects/source=file/part-9.parquet')).toBe(false);
    expect(await store.list('verdicts/')).toEqual(['verdicts/source=file/part-1.parquet', 'verdicts/source=file/part-2.parquet']);
    expect(await store.listAfter('verdicts/', 'verdicts/source=file/part-1.parquet')).toEqual(['verdicts/source=file/part-2.parquet']);
    expect(store.locate('verdicts/x.parquet')).toBe(`s3://${bucket}/runs/a/verdicts/x.parquet`);
    expect(() => store.locate('../escape')).toThrow(/invalid object key/);
  });

  it('big files go up as multipart uploads that are never visible half-done', async () => {
    const bytes = new Uint8Array(13 * MB);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = (i / 4096) % 251;
    const key = 'verdicts/source=file/part-big.parquet';
    let done = false;
    let hiddenPolls = 0;
    let visibleBeforeAllParts = false;
    const put = store.putObject(key, bytes).then(() => (done = true));
    while (!done) {
      if (await store.exists(key)) visibleBeforeAllParts ||= store.stats.parts < 3;
      else hiddenPolls++;
    }
    await put;
    // Polled all through the upload: absent while parts went up, present only at the end.
    expect(hiddenPolls).toBeGreaterThan(0);
    expect(visibleBeforeAllParts).toBe(false);
    expect(store.stats.multipartUploads).toBe(1);
    expect(store.stats.parts).toBe(3);
    expect(Buffer.compare(Buffer.from((await store.get(key))!), Buffer.from(bytes))).toBe(0);
    const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
    expect(uploads.Uploads ?? []).toEqual([]);
  });

  it('manifests are create-only: a second put of the same manifest is refused and changes nothing', async () => {
    const key = '_commits/a+000000000000-a+000000000009.json';
    await store.putObject(key, new TextEncoder().encode('first'));
    await expect(store.putObject(key, new TextEncoder().encode('second'))).rejects.toBeInstanceOf(ObjectExistsError);
    expect(new TextDecoder().decode((await store.get(key))!)).toBe('first');
  });

  it('two writers racing on one range: exactly one manifest wins and both see the range committed', async () => {
    const race = new S3ObjectStore(createS3Client({}), { bucket, prefix: 'race' });
    const tables = { dead_letters: [dead(0), dead(1), dead(2)] };
    const writers = [new ShardCommitter(race), new ShardCommitter(race), new ShardCommitter(race)];
    const results = await Promise.all(writers.map((w) => w.commit({ source: 'file', first: 'aa+000000000000', last: 'aa+000000000002', tables })));
    expect(results.filter((r) => !r.alreadyCommitted)).toHaveLength(1);
    const winner = results.find((r) => !r.alreadyCommitted)!.manifest;
    for (const r of results) expect(r.manifest.checksum).toBe(winner.checksum);
    expect(await race.list('_commits/')).toEqual([manifestKey('aa+000000000000', 'aa+000000000002')]);
    const manifests = await listCommitted(race);
    expect(await verifyCommitted(race, manifests[0]!)).toEqual([]);
    expect((await readCommittedRows(race, 'dead_letters')).map((r) => r.source_offset)).toEqual([0, 1, 2]);
  });

  it('a missing bucket is a clear error before anything runs', async () => {
    await expect(openS3Output(`s3://${bucket}-missing/out`)).rejects.toThrow(/cannot use S3 bucket "rjt-store-[0-9a-f]+-missing": NoSuchBucket/);
  });
});
