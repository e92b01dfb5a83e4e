// Issue 38: two instances of one Kafka consumer group commit to the same Delta tables on S3
// (versitygw) at once. Their Delta versions are claimed create-only (If-None-Match: *), so
// each range enters each table once, no version is lost, and delta-rs reads every record once.
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { DeltaLog } from '../../src/pipeline/commit/delta/delta-log.js';
import { BIN, guardChild, type CliResult } from '../helpers/cli.js';
import { LONG_TEST_MS } from '../helpers/progress.js';
import { tempDir } from '../helpers/run-setup.js';
import { IN_CI, ROOT, findPython } from '../shards/helpers.js';
import { kafkaFixture, type KafkaFixture } from './helpers/fixture.js';
import { ensureServices } from './helpers/services.js';

ensureServices();
const probe = findPython();

function start(args: string[], progress: () => Promise<number>, name: string): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const guard = guardChild(child, { progress, what: `instance ${name}` });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) =>
    child.on('close', (code) => {
      guard.stop();
      const stalled = guard.stalled();
      resolve({ code, stdout, stderr: stalled ? `${stderr}\n[test] killed: ${stalled}` : stderr });
    }),
  );
}

describe.skipIf(Boolean(probe.error) && !IN_CI)('Delta tables shared by a consumer group on S3', () => {
  let f: KafkaFixture;
  beforeAll(async () => {
    f = await kafkaFixture('delta', { records: 2400, bad: 12 });
  }, LONG_TEST_MS);
  afterAll(async () => f?.cleanup());

  it('two instances at once: each record once in every table, one add per range, no gap', async () => {
    if (!probe.python) throw new Error(`Python environment unavailable (CI=true): ${probe.error}`);
    const dir = tempDir('kafka-delta');
    const config = f.config(dir, { session_timeout_ms: 30_000, heartbeat_interval_ms: 1000 }, { median: 3, sigma: 0.3, max: 15 }, 'single');
    const args = f.args(config, ['--range-records', '100', '--concurrency', '32', '--table-format', 'delta']);
    const [a, b] = await Promise.all([start(args, () => f.manifests(), 'A'), start(args, () => f.manifests(), 'B')]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);

    const manifests = await listCommitted(f.store);
    const ranges = manifests.map((m) => `${m.first}..${m.last}`).sort();
    for (const table of ['verdicts', 'dead_letters', 'decisions', 'corpus']) {
      // Our reader throws on a gap; every range is one add commit of this table.
      const state = await new DeltaLog(f.store, `${table}/`, { checkpointInterval: 0, engineInfo: 'test' }).current();
      const adds = [...state.txns.keys()].filter((k) => k.startsWith('rj-add:'));
      expect(adds.length, table).toBe(manifests.length);
      expect(state.version, table).toBe(manifests.length - 1);
      const keys = new Set(manifests.flatMap((m) => m.files.filter((x) => x.key.startsWith(`${table}/`) && x.format === 'parquet').map((x) => x.key.slice(table.length + 1).replace(/\+/g, '%2B'))));
      expect(new Set(state.files.keys()), table).toEqual(keys);
    }
    expect(ranges.length).toBeGreaterThan(4);

    const report = JSON.parse(
      execFileSync(probe.python, [join(ROOT, 'test/py/check_delta.py'), `s3://${f.bucket}/out`, '--tables', 'verdicts,dead_letters,corpus', '--ids'], { encoding: 'utf8', maxBuffer: 64 << 20 }),
    ) as Record<string, { rows: number; polars_rows: number; record_ids?: string[] }>;
    expect(report.verdicts!.record_ids!.length).toBe(f.produced.goodIds.length);
    expect(new Set(report.verdicts!.record_ids)).toEqual(new Set(f.produced.goodIds));
    expect(report.verdicts!.polars_rows).toBe(f.produced.goodIds.length);
    expect(report.corpus!.rows).toBe(f.produced.goodIds.length);
    expect(report.dead_letters!.rows).toBe((await readCommittedRows(f.store, 'dead_letters')).length);
    console.log(`kafka delta: ${manifests.length} ranges; A ${/ranges committed\s+(\d+)/.exec(a.stdout)?.[1]}, B ${/ranges committed\s+(\d+)/.exec(b.stdout)?.[1]}`);
  }, LONG_TEST_MS);
});
