// S3 Parquet source against the real S3 server: ranged reads, resume from committed ranges,
// rank/world_size sharding, and dead letters for broken or replaced objects.
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Client } from '../../connectors/s3/client.js';
import { listParquetObjects, openS3ParquetSource, S3ParquetSource } from '../../connectors/s3/parquet-source.js';
import { S3RangeReader } from '../../connectors/s3/range-reader.js';
import type { SourceItem } from '../../src/pipeline/source.js';
import { unitToken } from '../../src/pipeline/positions.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { createBucket, dropBucket, ensureServices, s3Client } from '../kafka/helpers/services.js';
import { tracesParquet } from './helpers.js';

ensureServices();

async function collect(source: S3ParquetSource): Promise<SourceItem[]> {
  const out: SourceItem[] = [];
  for await (const item of source) out.push(item);
  await source.close();
  return out;
}

describe('S3 Parquet source', () => {
  let s3: S3Client;
  let bucket: string;
  const client = createS3Client({});
  const records = syntheticRecords(600, { seed: 5 });
  const put = (key: string, body: Uint8Array | string) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));

  beforeAll(async () => {
    s3 = s3Client();
    bucket = await createBucket(s3, 'src');
    // 3 objects of 200 rows in row groups of 50; plus things a folder reader must ignore.
    for (let i = 0; i < 3; i++) await put(`in/part-${i}.parquet`, tracesParquet(records.slice(i * 200, (i + 1) * 200), 50));
    await put('in/_SUCCESS', '');
    await put('in/_temporary/0/part-9.parquet', 'half written');
    await put('in/README.txt', 'not data');
    await put('other/part-0.parquet', tracesParquet(records.slice(0, 10), 10));
  });
  afterAll(async () => {
    await dropBucket(s3, bucket);
    s3.destroy();
  });

  it('lists only the data objects and reads every row with ranged GETs', async () => {
    const objects = await listParquetObjects(client, { bucket, prefix: 'in' });
    expect(objects.map((o) => o.key)).toEqual(['in/part-0.parquet', 'in/part-1.parquet', 'in/part-2.parquet']);
    const source = await openS3ParquetSource(client, `s3://${bucket}/in`);
    expect(await source.sizeHint()).toMatchObject({ totalRows: 600 });
    const items = await collect(source);
    expect(items.every((i) => i.ok)).toBe(true);
    expect(items.map((i) => (i.ok ? (i.raw as { id: string }).id : ''))).toEqual(records.map((r) => r.id));
    expect(items[250]!.position).toEqual({ source: 's3', unit: `s3://${bucket}/in/part-1.parquet`, offset: 50 });
    // Footer + column chunks, never one whole-object GET per row group.
    const reader = new S3RangeReader(client, objects[0]!);
    await reader.slice(objects[0]!.size - 8);
    expect(reader.requests).toBe(1);
    expect(source.progress().bytesRead).toBeGreaterThan(0);
  });

  it('resumes from the committed ranges: finished objects and row groups are not fetched', async () => {
    const objects = await listParquetObjects(client, { bucket, prefix: 'in' });
    const tok = (key: string) => unitToken({ source: 's3', unit: `s3://${bucket}/${key}` });
    const committed = new Map([
      [tok('in/part-0.parquet'), new Map([[0, 99], [100, 199]])], // done
      [tok('in/part-1.parquet'), new Map([[0, 119]])], // 2 row groups and 20 rows done
    ]);
    const source = new S3ParquetSource(client, { bucket, prefix: 'in' }, objects, { committed });
    const items = await collect(source);
    expect(source.objectsDone).toBe(1);
    expect(source.rowGroupsSkipped).toBe(2);
    expect(items.map((i) => i.position.offset).slice(0, 3)).toEqual([120, 121, 122]);
    expect(items).toHaveLength(80 + 200);
  });

  it('rank/world_size: two workers read disjoint shares that cover everything', async () => {
    const [a, b] = await Promise.all([0, 1].map((rank) => openS3ParquetSource(client, `s3://${bucket}/in/`, { rank, worldSize: 2 })));
    const ids = [...(await collect(a!)), ...(await collect(b!))].map((i) => (i.ok ? (i.raw as { id: string }).id : ''));
    expect(ids).toHaveLength(600);
    expect(new Set(ids)).toEqual(new Set(records.map((r) => r.id)));
    expect(a!.objects.map((o) => o.key)).toEqual(['in/part-0.parquet', 'in/part-2.parquet']);
  });

  it('a broken object and an object replaced mid-read become dead letters, not crashes', async () => {
    await put('bad/a-broken.parquet', 'PAR1 this is not parquet at all PAR1');
    await put('bad/b-good.parquet', tracesParquet(records.slice(0, 100), 50));
    const source = await openS3ParquetSource(client, `s3://${bucket}/bad`);
    // Replace the second object after listing: reads carry If-Match on the listed ETag.
    await put('bad/b-good.parquet', tracesParquet(records.slice(100, 200), 50));
    const items = await collect(source);
    expect(items.map((i) => (i.ok ? 'ok' : i.error.slice(0, 40)))).toEqual([
      expect.stringMatching(/^not a readable Parquet object/),
      expect.stringMatching(/^not a readable Parquet object/),
    ]);
    expect(items[1]!.ok === false && items[1]!.error).toMatch(/changed while being read/);
  });
});
