// Streaming mode (no --until-caught-up), as the Kubernetes Deployment runs it: partial ranges
// of quiet partitions get committed by the idle flush, new messages keep being picked up, and
// SIGTERM finishes and commits what is in flight before exiting.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { BIN } from '../helpers/cli.js';
import { guardProgress, LONG_TEST_MS, waitForProgress } from '../helpers/progress.js';
import { tempDir } from '../helpers/run-setup.js';
import { kafkaFixture, offsetsBehindShards, type KafkaFixture } from './helpers/fixture.js';
import { ensureServices, newProducer, produce } from './helpers/services.js';

ensureServices();

describe('Kafka streaming run', () => {
  let f: KafkaFixture;
  beforeAll(async () => {
    f = await kafkaFixture('stream', { records: 600, bad: 6 });
  }, LONG_TEST_MS);
  afterAll(async () => f?.cleanup());

  /**
   * Resolves once the group has committed every partition up to its end; fails only when
   * neither the committed offsets, the manifests nor the run's output (`output()`) move.
   */
  async function caughtUp(output: () => number): Promise<void> {
    await waitForProgress(
      async () => {
        const high = await f.admin.fetchTopicOffsets(f.topic);
        const [c] = await f.admin.fetchOffsets({ groupId: f.group, topics: [f.topic] });
        const done = high.every((p) => c!.partitions.find((x) => x.partition === p.partition)?.offset === p.high);
        return { done, progress: [c!.partitions.map((p) => p.offset), await f.manifests(), output(), high] };
      },
      { pollMs: 200, what: 'the group catching up' },
    );
  }

  it('commits partial ranges when idle, keeps consuming, and stops cleanly on SIGTERM', async () => {
    const dir = tempDir('kafka-stream');
    const config = f.config(dir, {}, 0, 'single');
    // Ranges of 1,000: nothing here ever fills one, so every commit is an idle flush.
    const args = f.args(config, ['--range-records', '1000']).filter((a) => a !== '--until-caught-up');
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const output = () => stdout.length + stderr.length;
    try {
      await caughtUp(output);
      expect(child.exitCode).toBeNull(); // still running: it streams
      const more = syntheticRecords(200, { seed: 99, prefix: `late${f.id}` });
      const producer = await newProducer(f.kafka);
      await produce(producer, f.topic, more.map((r) => ({ key: r.id, value: JSON.stringify(r) })));
      await producer.disconnect();
      await caughtUp(output);
      child.kill('SIGTERM');
      // Finishing and committing what is in flight shows in the manifests and the output.
      const code = await guardProgress(exited, async () => [await f.manifests(), output()], { what: 'run stopping on SIGTERM' }).catch((e: Error) => {
        throw new Error(`${e.message}\n${stderr.slice(-3000)}`);
      });
      expect(code, stderr.slice(-3000)).toBe(0);
      expect(stdout).toMatch(/records in\s+800/);
      expect(stdout).toMatch(/stopped early/);
      const verdicts = await readCommittedRows(f.store, 'verdicts');
      const ids = verdicts.map((v) => String(v.record_id));
      expect(ids.length).toBe(794);
      expect(new Set(ids)).toEqual(new Set([...f.produced.goodIds, ...more.map((r) => r.id)]));
      expect((await readCommittedRows(f.store, 'dead_letters')).length).toBe(6);
      expect(await offsetsBehindShards(f)).toEqual([]);
    } finally {
      child.kill('SIGKILL');
    }
  }, LONG_TEST_MS);
});
