// `shards list|verify` against an output on the real S3 server: the listing is the manifests'
// files as s3:// URLs, and verify catches an object overwritten after its range committed.
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Client } from '../../connectors/s3/client.js';
import { S3ObjectStore } from '../../connectors/s3/object-store.js';
import { listCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/run-setup.js';
import { createBucket, dropBucket, ensureServices, s3Client } from '../kafka/helpers/services.js';

ensureServices();

describe('shards list and verify on S3', () => {
  let s3: S3Client;
  let bucket: string;

  beforeAll(async () => {
    s3 = s3Client();
    bucket = await createBucket(s3, 'shards');
  });
  afterAll(async () => {
    await dropBucket(s3, bucket);
    s3.destroy();
  });

  it('lists the committed objects, verifies them, and names an object tampered with', async () => {
    const out = `s3://${bucket}/runs/a`;
    const run = await runCli(['run', '-o', out, '--range-records', '4', '--progress', 'none']);
    expect(run.code, run.stderr).toBe(0);
    const store = new S3ObjectStore(createS3Client({}), { bucket, prefix: 'runs/a' });
    const manifests = await listCommitted(store);
    expect(manifests).toHaveLength(2);
    // Something a failed write could have left: in the bucket, in no manifest.
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'runs/a/verdicts/source=file/part-zz-zz.parquet', Body: 'stray' }));

    const listed = await runCli(['shards', 'list', out]);
    expect(listed.code, listed.stderr).toBe(0);
    const expected = manifests.flatMap((m) => m.files.map((f) => `s3://${bucket}/runs/a/${f.key}`)).sort();
    expect(listed.stdout.trim().split('\n').sort()).toEqual(expected);

    const ok = await runCli(['shards', 'verify', out]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stderr).toMatch(/in 2 committed ranges checked under s3:\/\/.*: all match their manifests/);

    const victim = manifests[1]!.files.find((f) => f.table === 'verdicts')!;
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `runs/a/${victim.key}` }));
    const bytes = Buffer.from(await got.Body!.transformToByteArray());
    const mid = Math.floor(bytes.length / 2);
    bytes[mid] = bytes[mid]! ^ 0x01;
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `runs/a/${victim.key}`, Body: bytes }));

    const bad = await runCli(['shards', 'verify', out]);
    expect(bad.code).toBe(1);
    expect(bad.stdout.trim().split('\n')).toHaveLength(1);
    expect(bad.stdout.trim()).toMatch(new RegExp(`^s3://${bucket}/runs/a/${victim.key.replace(/[.+]/g, '\\$&')}: sha256 [0-9a-f]{12}…, manifest says ${victim.sha256.slice(0, 12)}… \\(range .+\\)$`));
  }, 300_000);

  it('rejudging a changed input retracts its S3 ranges: the listing holds each range once and verifies', async () => {
    const dir = tempDir('shards-s3-rejudge');
    const input = join(dir, 'traces.jsonl');
    copyFileSync(join(process.cwd(), 'examples', 'traces', 'demo.jsonl'), input);
    const out = `s3://${bucket}/runs/b`;
    const args = ['run', '-i', input, '-o', out, '--range-records', '4', '--progress', 'none'];
    expect((await runCli(args)).code).toBe(0);
    const store = new S3ObjectStore(createS3Client({}), { bucket, prefix: 'runs/b' });
    const before = await listCommitted(store);
    const lines = readFileSync(input, 'utf8').split('\n');
    lines[6] = JSON.stringify({ ...JSON.parse(lines[6]!), problem: 'edited in place' });
    writeFileSync(input, lines.join('\n'));
    const r = await runCli([...args, '--on-changed-input', 'rejudge']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/ranges retracted \(their input changed; judged again\)\s+1/);
    const after = await listCommitted(store);
    expect(after.map((m) => m.first)).toEqual(before.map((m) => m.first));
    expect(after[1]!.range!.content_sha256).not.toBe(before[1]!.range!.content_sha256);
    expect(after[0]).toEqual(before[0]);
    const ids = (await readCommittedRows(store, 'verdicts')).map((v) => v.record_id);
    expect(ids).toHaveLength(8);
    expect(new Set(ids).size).toBe(8);
    const ok = await runCli(['shards', 'verify', out]);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
  }, 300_000);
});
