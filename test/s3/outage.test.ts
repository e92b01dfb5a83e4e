// The S3 output goes away for 30 s in the middle of a run (its own versitygw, stopped and
// started again on the same port and data): the run waits with intake held, completes with
// exit 0, and every record is committed once and judged once.
import { spawn } from 'node:child_process';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../connectors/s3/object-store.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { listCommitted, verifyCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { okCallsPerRecord } from '../helpers/audit.js';
import { BIN, guardChild } from '../helpers/cli.js';
import { LONG_TEST_MS, waitForProgress } from '../helpers/progress.js';
import { fastSimConfig, tempDir, writeJsonl } from '../helpers/run-setup.js';
import { ensureServices } from '../kafka/helpers/services.js';
import { privateS3, type PrivateS3 } from './private-server.js';

ensureServices(); // the AWS_* credentials the shared server uses; this test's server takes the same

const OUTAGE_MS = 30_000;
const singleJuror = { mode: 'single', jurors: [{ id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' }] };

describe('S3 output down for 30 s mid-run', () => {
  let s3: PrivateS3;
  const bucket = 'rjt-outage';

  beforeAll(async () => {
    s3 = await privateS3(tempDir('s3-outage-server'));
    await s3.client.send(new CreateBucketCommand({ Bucket: bucket }));
  }, LONG_TEST_MS);
  afterAll(() => {
    s3?.client.destroy();
    s3?.stop();
  });

  it('waits it out with intake held: exit 0, every record committed once, none judged twice', async () => {
    const dir = tempDir('s3-outage');
    const records = syntheticRecords(240, { seed: 41, prefix: 'outage' });
    const input = writeJsonl(join(dir, 'in.jsonl'), records);
    const audit = join(dir, 'audit.jsonl');
    // ~25 records/s: the run is far from done when the first ranges are committed.
    const config = fastSimConfig(dir, singleJuror, { latency_ms: { median: 60, sigma: 0.1 } });
    const args = ['run', '--config', config, '--input', input, '--out', `s3://${bucket}/out`, '--range-records', '20', '--concurrency', '2', '--progress', 'none', '--audit-log', audit, '--max-storage-outage', '5m'];
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, S3_ENDPOINT: s3.endpoint }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    let running = true;
    void exited.then(() => (running = false));
    const guard = guardChild(child, { what: 'run during an S3 outage', progress: () => okCallsPerRecord(audit).size });

    const store = new S3ObjectStore(s3.client, { bucket, prefix: 'out' });
    await waitForProgress(async () => {
      const n = (await store.list('_commits/')).length;
      return { done: n >= 1 || !running, progress: [n, okCallsPerRecord(audit).size] };
    }, { what: 'a first committed range' });
    expect(running, `the run ended before the outage:\n${stderr}`).toBe(true);
    const judgedBefore = okCallsPerRecord(audit).size;
    expect(judgedBefore).toBeLessThan(records.length / 2);

    s3.stop();
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    expect(running, `the run ended during the outage:\n${stderr}`).toBe(true);
    // Intake was held: only what was already pulled (the window) got judged meanwhile.
    expect(stderr).toMatch(/storage unavailable: could not \w+ s3:\/\/rjt-outage\/out\/.*holding intake/);
    const judgedDuring = okCallsPerRecord(audit).size;
    expect(judgedDuring - judgedBefore).toBeLessThanOrEqual(2 * 20 + 2 + 2); // window + concurrency + the one being pulled
    s3.start();

    const code = await exited;
    guard.stop();
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(/storage available again after \d+s; resuming intake/);
    expect(stdout).toMatch(/output store outages waited out\s+[1-9]\d* \((\d+)\.\d s, intake held\)/);
    expect(Number(/outages waited out\s+\d+ \((\d+)\./.exec(stdout)![1])).toBeGreaterThanOrEqual(OUTAGE_MS / 1000 - 5);
    expect(stderr).not.toContain('Error:');

    const manifests = await listCommitted(store);
    for (const m of manifests) expect(await verifyCommitted(store, m)).toEqual([]);
    const ids = (await readCommittedRows(store, 'verdicts')).map((r) => r.record_id as string);
    expect(ids.length).toBe(records.length);
    expect(new Set(ids)).toEqual(new Set(records.map((r) => r.id)));
    const calls = okCallsPerRecord(audit);
    expect(calls.size).toBe(records.length);
    expect([...calls.values()].every((n) => n === 1)).toBe(true);
  }, LONG_TEST_MS);
});
