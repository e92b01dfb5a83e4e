// Fair partitions: with 4 partitions, every partition has records committed early in the run,
// not one partition's whole fetch first and the others after it. "Early" is measured in
// committed records (manifests in commit order), not wall time, so a busy machine cannot
// change the verdict.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS } from '../helpers/progress.js';
import { tempDir } from '../helpers/run-setup.js';
import { kafkaFixture, offsetsBehindShards, type KafkaFixture } from './helpers/fixture.js';
import { ensureServices } from './helpers/services.js';

ensureServices();

/** Records committed before each unit's first range, in commit order (manifest `committed_at`). */
function committedBeforeFirst(ranges: Array<{ unit: string; records: number; at: string; first: number }>): Map<string, number> {
  const ordered = [...ranges].sort((a, b) => a.at.localeCompare(b.at) || a.first - b.first);
  const before = new Map<string, number>();
  let total = 0;
  for (const r of ordered) {
    if (!before.has(r.unit)) before.set(r.unit, total);
    total += r.records;
  }
  return before;
}

describe('Kafka fair partitions', () => {
  let f: KafkaFixture;
  beforeAll(async () => {
    // ~200 records per partition: one fetch (512 KB per partition) holds a whole partition.
    f = await kafkaFixture('fair', { records: 800, bad: 0, partitions: 4 });
  }, LONG_TEST_MS);
  afterAll(async () => f?.cleanup());

  it('each of 4 partitions has records committed within the first 20 % of the run', async () => {
    const dir = tempDir('kafka-fair');
    const res = await runCli(f.args(f.config(dir, {}, 0, 'single'), ['--range-records', '20', '--concurrency', '8']), { progress: () => f.manifests() });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`records in\\s+${f.produced.total}\\b`));

    const ranges = (await listCommitted(f.store)).flatMap((m) => (m.range ? [{ unit: m.range.unit, records: m.range.records, at: m.committed_at, first: m.range.first_offset }] : []));
    const total = ranges.reduce((n, r) => n + r.records, 0);
    expect(total).toBe(f.produced.total);
    const before = committedBeforeFirst(ranges);
    expect([...before.keys()].sort()).toEqual([0, 1, 2, 3].map((p) => `${f.topic}+${p}`));
    const late = [...before].filter(([, n]) => n >= 0.2 * total);
    expect(late, `records committed before each partition's first range: ${JSON.stringify([...before])}`).toEqual([]);
    expect(await offsetsBehindShards(f)).toEqual([]);
    console.log(`fair partitions: records committed before each partition's first range, of ${total}: ${[...before].map(([u, n]) => `${u.split('+')[1]}:${n}`).join(' ')}`);
  }, LONG_TEST_MS);
});
