/**
 * Two, then four, `run`s started at once on one output (a local folder, then an S3 prefix on
 * the shared server), issue 36: exactly one takes the output's lease and writes; every other
 * one stops before its first model call with one line naming the holder and exit code 4. The
 * jurors sit behind a gate that holds every model call until the losers have exited, so the
 * writer is alive and mid-run when they start on any machine; without the lease every run
 * would get past its start and wait at the gate, and the test would stall and fail.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Client } from '../../connectors/s3/client.js';
import { S3ObjectStore } from '../../connectors/s3/object-store.js';
import { LocalObjectStore, type ObjectStore } from '../../src/pipeline/storage/object-store.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { okCallsPerRecord } from '../helpers/audit.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { gatedEndpoint, type GatedEndpoint } from '../helpers/gated-endpoint.js';
import { LONG_TEST_MS, waitForProgress } from '../helpers/progress.js';
import { tempDir, writeJsonl } from '../helpers/run-setup.js';
import { simProfile, startSimProcess, type SimProcess } from '../helpers/sim-process.js';
import { createBucket, dropBucket, ensureServices, s3Client } from '../kafka/helpers/services.js';
import type { S3Client } from '@aws-sdk/client-s3';

ensureServices();

const N = 40;
const records = syntheticRecords(N, { seed: 36, prefix: 'lease' });

/** One juror on the gated endpoint: one model call per judged record (test/helpers/audit.ts). */
function config(dir: string, url: string): string {
  const path = join(dir, 'jury.yaml');
  writeFileSync(
    path,
    YAML.stringify({
      mode: 'single',
      endpoints: { sim: { base_url: url, max_concurrency: 8 } },
      jurors: [{ id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' }],
      cache: { enabled: false, dir: join(dir, 'cache') },
    }),
  );
  return path;
}

const HELD = /is being written by run \(pid \d+ on [^,]+, since [^,]+, lease expires .+\); nothing was changed\. Wait for it with --wait-for-lease, or if that process is gone, run again with --take-over$/;

/** Starts `n` runs at once on `out`; opens the gate once all but one have exited. */
async function race(n: number, out: string, dir: string, gate: GatedEndpoint): Promise<{ results: CliResult[]; audits: string[] }> {
  const input = writeJsonl(join(dir, 'in.jsonl'), records);
  const cfg = config(dir, gate.url);
  const audits = Array.from({ length: n }, (_, i) => join(dir, `audit-${n}-${i}.jsonl`));
  let settled = 0;
  const runs = audits.map((audit) =>
    runCli(['run', '--config', cfg, '--input', input, '--out', out, '--range-records', '5', '--concurrency', '4', '--progress', 'none', '--audit-log', audit]).finally(() => settled++),
  );
  try {
    await waitForProgress(() => ({ done: settled >= n - 1, progress: settled }), { what: `${n - 1} of ${n} runs refused` });
  } finally {
    gate.open(); // on a failure too: the runs finish instead of waiting at the gate for ever
  }
  return { results: await Promise.all(runs), audits };
}

async function check(n: number, out: string, store: ObjectStore, dir: string, gate: GatedEndpoint): Promise<void> {
  const { results, audits } = await race(n, out, dir, gate);
  const winners = results.filter((r) => r.code === 0);
  expect(winners, results.map((r) => r.stderr).join('\n---\n')).toHaveLength(1);
  const losers = results.filter((r) => r.code !== 0);
  for (const l of losers) {
    expect(l.code, l.stderr).toBe(4);
    // Our own lines only: on Node 20 the AWS SDK adds its version notice (issue 36, point 4).
    const lines = l.stderr.split('\n').filter((s) => s.startsWith('reasoning-jury'));
    expect(lines, l.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(HELD);
    expect(l.stdout).toBe('');
  }
  expect(winners[0]!.stdout).toMatch(new RegExp(`judged\\s+${N}\\n`));
  // Every record once in the committed verdicts.
  const ids = (await readCommittedRows(store, 'verdicts')).map((v) => String(v.record_id)).sort();
  expect(ids).toEqual(records.map((r) => r.id).sort());
  // Model calls: each record paid once, all by the writer; the refused runs called nothing.
  const calls = audits.map((a) => okCallsPerRecord(a));
  const winner = results.findIndex((r) => r.code === 0);
  calls.forEach((c, i) => {
    if (i === winner) {
      expect(c.size).toBe(N);
      expect([...c.values()].every((k) => k === 1)).toBe(true);
    } else {
      expect(existsSync(audits[i]!) ? readFileSync(audits[i]!, 'utf8') : '').toBe('');
    }
  });
  const verify = await runCli(['shards', 'verify', out]);
  expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  expect(verify.stderr).toMatch(new RegExp(`in ${N / 5} committed ranges checked .*: all match their manifests`));
  // The writer released its lease at its clean end: the next command need not wait.
  const leases = (await store.list('_lease/')).filter((k) => k.endsWith('.json'));
  expect(leases).toHaveLength(1);
  expect(JSON.parse(new TextDecoder().decode((await store.get(leases[0]!))!))).toMatchObject({ command: 'run', released: true });
}

describe('concurrent runs on one output', () => {
  let sim: SimProcess;
  let s3: S3Client;
  let bucket: string;
  const gates: GatedEndpoint[] = [];
  const gate = async () => {
    const g = await gatedEndpoint(sim.url);
    gates.push(g);
    return g;
  };

  beforeAll(async () => {
    sim = await startSimProcess(simProfile(tempDir('lease-sim'), 0));
    s3 = s3Client();
    bucket = await createBucket(s3, 'lease');
  });
  afterAll(async () => {
    for (const g of gates) await g.close();
    await sim?.kill();
    await dropBucket(s3, bucket);
    s3.destroy();
  });

  for (const n of [2, 4]) {
    it(`${n} runs on one local folder: one writes, ${n - 1} stop with exit 4 before any model call`, { timeout: LONG_TEST_MS }, async () => {
      const dir = tempDir(`lease-local-${n}`);
      const out = join(dir, 'out');
      await check(n, out, new LocalObjectStore(out), dir, await gate());
    });

    it(`${n} runs on one S3 prefix: one writes, ${n - 1} stop with exit 4 before any model call`, { timeout: LONG_TEST_MS }, async () => {
      const dir = tempDir(`lease-s3-${n}`);
      await check(n, `s3://${bucket}/out-${n}`, new S3ObjectStore(createS3Client({}), { bucket, prefix: `out-${n}` }), dir, await gate());
    });
  }
});
