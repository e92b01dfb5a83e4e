// `run` end to end with S3 on both sides (the real server), read back by pyarrow from S3.
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Client } from '../../connectors/s3/client.js';
import { S3ObjectStore } from '../../connectors/s3/object-store.js';
import { listCommitted, verifyCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, type Probe } from '../helpers/progress.js';
import { fastSimConfig, tempDir } from '../helpers/run-setup.js';
import { createBucket, dropBucket, ensureServices, s3Client } from '../kafka/helpers/services.js';
import { pyarrowReport, tracesParquet } from './helpers.js';

ensureServices();

/** Objects under s3://bucket/prefix: moves with every part and manifest a run writes. */
function s3Probe(bucket: string, prefix: string): Probe {
  const store = new S3ObjectStore(createS3Client({}), { bucket, prefix });
  return async () => (await store.list('')).length;
}

/** One juror, no phase 2: these tests are about S3 in and out, not the jury (a third of the CPU). */
const singleJuror = { mode: 'single', jurors: [{ id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' }] };

describe('run with S3 input and output', () => {
  let s3: S3Client;
  let bucket: string;
  const records = syntheticRecords(900, { seed: 31, prefix: 's3run' });

  beforeAll(async () => {
    s3 = s3Client();
    bucket = await createBucket(s3, 'run');
    for (let i = 0; i < 3; i++) {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `in/day=${i}/part-0.parquet`, Body: tracesParquet(records.slice(i * 300, (i + 1) * 300), 100) }));
    }
  });
  afterAll(async () => {
    await dropBucket(s3, bucket);
    s3.destroy();
  });

  it('two ranks of a backfill split the objects; a rerun finds everything committed', async () => {
    const dir = tempDir('s3run');
    const config = fastSimConfig(dir, singleJuror);
    const progress = s3Probe(bucket, 'out');
    const args = (rank?: number) => ['run', '--config', config, '--input', `s3://${bucket}/in`, '--out', `s3://${bucket}/out`, '--world-size', '2', ...(rank === undefined ? [] : ['--rank', String(rank)]), '--range-records', '120', '--progress', 'none'];
    // Rank 1 as a Kubernetes indexed Job gives it: from JOB_COMPLETION_INDEX.
    const runs = await Promise.all([runCli(args(0), { progress }), runCli(args(), { progress, env: { JOB_COMPLETION_INDEX: '1' } })]);
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    // Rank 0 has objects 0 and 2, rank 1 object 1.
    expect(runs[0]!.stdout).toMatch(/records in\s+600/);
    expect(runs[1]!.stdout).toMatch(/records in\s+300/);
    expect(runs[0]!.stdout).toContain(`shards: s3://${bucket}/out/`);

    const report = pyarrowReport(bucket, 'out');
    expect(report.verdicts.rows).toBe(900);
    expect(new Set(report.verdicts.record_ids)).toEqual(new Set(records.map((r) => r.id)));
    expect(report.verdicts.sources).toEqual(['s3']);
    expect(report.decisions.rows).toBe(900);

    const store = new S3ObjectStore(createS3Client({}), { bucket, prefix: 'out' });
    const before = await listCommitted(store);
    for (const m of before) expect(await verifyCommitted(store, m)).toEqual([]);
    const again = await runCli(args(0), { progress });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/records in\s+0/);
    expect((await listCommitted(store)).length).toBe(before.length);
  }, LONG_TEST_MS);

  it('file input to an S3 output: verdicts and dead letters reconcile, as pyarrow reads them', async () => {
    const dir = tempDir('s3out');
    const good = syntheticRecords(300, { seed: 32, prefix: 'fileout' });
    const lines = good.map((r) => JSON.stringify(r));
    for (let i = 0; i < 20; i++) lines.splice(i * 15, 0, i % 2 ? '{"id": "broken",' : JSON.stringify({ id: `nope${i}` }));
    const input = join(dir, 'in.jsonl');
    writeFileSync(input, lines.join('\n') + '\n');
    const res = await runCli(['run', '--config', fastSimConfig(dir, singleJuror), '--input', input, '--out', `s3://${bucket}/fileout/`, '--range-records', '100', '--progress', 'none'], { progress: s3Probe(bucket, 'fileout') });
    expect(res.code, res.stderr).toBe(0);
    const report = pyarrowReport(bucket, 'fileout');
    expect(report.verdicts.rows).toBe(300);
    expect(report.dead_letters.rows).toBe(20);
    expect(new Set(report.verdicts.record_ids)).toEqual(new Set(good.map((r) => r.id)));
  }, LONG_TEST_MS);
});
