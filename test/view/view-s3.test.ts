/**
 * The viewer and the review commands on an s3:// output (the shared S3 server): `view` serves it,
 * a review from the command line and one sent the way the page sends it both land under
 * reviews/ in the bucket, and `decide` from s3:// writes them.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { createS3Client } from '../../connectors/s3/client.js';
import { S3ObjectStore } from '../../connectors/s3/object-store.js';
import { readReviews, reviewStore } from '../../src/pipeline/commit/reviews.js';
import { listCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { BIN, runCli } from '../helpers/cli.js';
import { fastSimConfig, tempDir, writeJsonl } from '../helpers/run-setup.js';
import { createBucket, dropBucket, s3Client } from '../kafka/helpers/services.js';

describe('view and review on s3://', () => {
  let s3: S3Client;
  let bucket: string;
  let view: ChildProcess | undefined;
  beforeAll(async () => {
    s3 = s3Client();
    bucket = await createBucket(s3, 'view');
  });
  afterAll(async () => {
    view?.kill('SIGTERM');
    await dropBucket(s3, bucket);
  });

  it('serves an s3:// output, commits reviews into it, and decide writes them', async () => {
    const dir = tempDir('view-s3');
    const input = writeJsonl(join(dir, 'in.jsonl'), syntheticRecords(20, { seed: 3 }));
    const out = `s3://${bucket}/judged`;
    const ran = await runCli(['run', '-c', fastSimConfig(dir), '-i', input, '-o', out, '--range-records', '8', '--progress', 'none']);
    expect(ran.code, ran.stderr).toBe(0);
    const store = new S3ObjectStore(createS3Client({}), { bucket, prefix: 'judged' });
    const ids = (await readCommittedRows(store, 'verdicts')).map((v) => String(v.record_id));

    const cli = await runCli(['review', out, '--record', ids[0]!, '--decision', 'drop', '--reviewer', 'ana']);
    expect(cli.code, cli.stderr).toBe(0);

    view = spawn(process.execPath, [BIN, 'view', out, '--port', '0', '--reviewer', 'bo'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const url = await new Promise<string>((resolve, reject) => {
      let text = '';
      view!.stdout!.on('data', (d) => {
        text += d;
        const u = /at (http:\/\/\S+)/.exec(text)?.[1];
        if (u && /ready/.test(text)) resolve(u);
      });
      view!.on('exit', (code) => reject(new Error(`view exited ${code}`)));
    });
    const records = (await (await fetch(`${url}api/records?limit=500`)).json()) as { total: number; rows: { id: string; reviewed: string | null }[] };
    expect(records.total).toBe(ids.length);
    expect(records.rows.filter((r) => r.reviewed).map((r) => [r.id, r.reviewed])).toEqual([[ids[0], 'drop']]);
    const posted = await fetch(`${url}api/review`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-rj-review': '1' }, body: JSON.stringify({ record_id: ids[1], decision: 'keep', note: 'fine' }) });
    expect(posted.status, await posted.clone().text()).toBe(200);

    expect((await readReviews(store)).map((r) => [r.record_id, r.decision, r.reviewer])).toEqual([[ids[0], 'drop', 'ana'], [ids[1], 'keep', 'bo']]);
    expect((await listCommitted(reviewStore(store))).map((m) => m.source).sort()).toEqual(['cli', 'view']);

    const policy = join(dir, 'policy.yaml');
    writeFileSync(policy, YAML.stringify({ rules: [], default: 'review' }));
    const decided = await runCli(['decide', '--policy', policy, '--shards', out, '--out', `s3://${bucket}/decided`]);
    expect(decided.code, decided.stderr).toBe(0);
    const rows = await readCommittedRows(new S3ObjectStore(createS3Client({}), { bucket, prefix: 'decided' }), 'decisions');
    const byId = new Map(rows.map((r) => [r.record_id, r]));
    expect(byId.get(ids[0])).toMatchObject({ decision: 'drop', reason: 'review:ana' });
    expect(byId.get(ids[1])).toMatchObject({ decision: 'keep', reason: 'review:bo' });
    expect(rows.filter((r) => r.decision === 'review')).toHaveLength(ids.length - 2);
  });
});
