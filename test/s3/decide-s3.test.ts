import type { S3Client } from '@aws-sdk/client-s3';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { createS3Client } from '../../connectors/s3/client.js';
import { S3ObjectStore } from '../../connectors/s3/object-store.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { listCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { runCli } from '../helpers/cli.js';
import { fastSimConfig, tempDir, writeJsonl } from '../helpers/run-setup.js';
import { createBucket, dropBucket, s3Client } from '../kafka/helpers/services.js';

describe('decide over S3', () => {
  let s3: S3Client;
  let bucket: string;
  beforeAll(async () => {
    s3 = s3Client();
    bucket = await createBucket(s3, 'decide');
  });
  afterAll(async () => {
    await dropBucket(s3, bucket);
  });

  it('reads committed ranges from s3:// and commits decisions to s3://, equal to a local decide', async () => {
    const dir = tempDir('decide-s3');
    const config = fastSimConfig(dir);
    const input = writeJsonl(join(dir, 'in.jsonl'), syntheticRecords(40, { seed: 8 }));
    const ran = await runCli(['run', '-c', config, '-i', input, '-o', join(dir, 'out'), '--range-records', '15', '--progress', 'none']);
    expect(ran.code, ran.stderr).toBe(0);
    const ranS3 = await runCli(['run', '-c', config, '-i', input, '-o', `s3://${bucket}/judged`, '--range-records', '15', '--progress', 'none']);
    expect(ranS3.code, ranS3.stderr).toBe(0);
    const policy = join(dir, 'policy.yaml');
    writeFileSync(policy, YAML.stringify({ rules: [{ name: 'any', min_impact: 'minor', decision: 'drop' }, { name: 'weak', all: [{ votes_below: 3 }, { confidence_below: 1 }], decision: 'review' }], default: 'keep' }));
    const local = await runCli(['decide', '--policy', policy, '--shards', join(dir, 'out'), '--out', join(dir, 'decided')]);
    expect(local.code, local.stderr).toBe(0);
    const remote = await runCli(['decide', '--policy', policy, '--shards', `s3://${bucket}/judged`, '--out', `s3://${bucket}/decided`]);
    expect(remote.code, remote.stderr).toBe(0);
    const store = new S3ObjectStore(createS3Client({}), { bucket, prefix: 'decided' });
    expect((await listCommitted(store)).map((m) => `${m.first}-${m.last}`)).toEqual((await listCommitted(new LocalObjectStore(join(dir, 'decided')))).map((m) => `${m.first}-${m.last}`));
    const byId = (rows: Array<Record<string, unknown>>) => [...rows].sort((a, b) => String(a.record_id).localeCompare(String(b.record_id)));
    const fromS3 = byId(await readCommittedRows(store, 'decisions'));
    expect(fromS3).toHaveLength(40);
    expect(fromS3).toEqual(byId(await readCommittedRows(new LocalObjectStore(join(dir, 'decided')), 'decisions')));
  });
});
