// SIGKILL the Kafka -> S3 run 10 times at points chosen by progress (committed manifests, not
// wall time), restart it each time, and check after every kill that the group's committed
// offsets never run ahead of the committed shards; at the end, each record id exactly once.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCommitted, verifyCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { createRng } from '../../src/util/prng.js';
import { BIN, guardChild, runCli } from '../helpers/cli.js';
import { LONG_TEST_MS } from '../helpers/progress.js';
import { tempDir } from '../helpers/run-setup.js';
import { kafkaFixture, offsetsBehindShards, type KafkaFixture } from './helpers/fixture.js';
import { ensureServices } from './helpers/services.js';

ensureServices();

/**
 * Starts `run`; once `ready()` holds, waits `delayMs` and SIGKILLs it. `progress()` (committed
 * manifests) must keep moving until then: a run that stops committing is killed and reported
 * as stalled instead of being waited on forever.
 */
function runAndKill(args: string[], ready: () => Promise<boolean>, progress: () => Promise<unknown>, delayMs: number): Promise<{ killed: boolean; stderr: string; stalled?: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    const guard = guardChild(child, { progress, what: 'run (to be killed)' });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    let exited = false;
    child.on('exit', (_code, signal) => {
      exited = true;
      guard.stop();
      const stalled = guard.stalled();
      resolve({ killed: signal === 'SIGKILL' && !stalled, stderr, ...(stalled ? { stalled } : {}) });
    });
    const poll = async () => {
      if (exited) return;
      // Kill points come from progress, so poll often enough that the delay below dominates.
      if (await ready()) setTimeout(() => !exited && child.kill('SIGKILL'), delayMs);
      else setTimeout(poll, 100);
    };
    void poll();
  });
}

describe('Kafka -> S3 crash safety', () => {
  let f: KafkaFixture;
  beforeAll(async () => {
    f = await kafkaFixture('crash', { records: 5000, bad: 40 });
  }, LONG_TEST_MS);
  afterAll(async () => f?.cleanup());

  it('10 SIGKILLs during a 5,000-record run, then to the end: nothing lost, nothing twice, offsets never ahead', async () => {
    const dir = tempDir('kafka-crash');
    // One simulated juror keeps the run CPU-light on a shared box; the protocol is what is tested.
    const config = f.config(dir, {}, { median: 3, sigma: 0.3, max: 20 }, 'single');
    const args = f.args(config, ['--range-records', '100', '--concurrency', '32']);
    const rng = createRng(['kafka-crash', 1]);
    const after: number[] = [];
    let kills = 0;
    for (let i = 0; i < 10; i++) {
      const before = await f.manifests();
      const more = 1 + Math.floor(rng.next() * 2);
      const delay = Math.floor(rng.next() * 400);
      const r = await runAndKill(args, async () => (await f.manifests()) >= before + more, () => f.manifests(), delay);
      if (r.stalled) throw new Error(`run ${i} stalled: ${r.stalled}\n${r.stderr.slice(-2000)}`);
      if (r.killed) kills++;
      else throw new Error(`run ${i} ended by itself before the kill:\n${r.stderr.slice(-2000)}`);
      after.push(await f.manifests());
      expect(await offsetsBehindShards(f), `after kill ${i + 1}`).toEqual([]);
    }
    expect(kills).toBe(10);
    const final = await runCli(args, { progress: () => f.manifests() });
    expect(final.code, final.stderr).toBe(0);
    console.log(`manifests after each kill: ${after.join(', ')}\n${final.stdout}`);
    expect(after[after.length - 1]!).toBeLessThan(50); // the kills really were mid-run

    const manifests = await listCommitted(f.store);
    for (const m of manifests) expect(await verifyCommitted(f.store, m)).toEqual([]);
    const verdicts = await readCommittedRows(f.store, 'verdicts');
    const dead = await readCommittedRows(f.store, 'dead_letters');
    const ids = verdicts.map((v) => String(v.record_id));
    expect(ids.length).toBe(f.produced.goodIds.length);
    expect(new Set(ids)).toEqual(new Set(f.produced.goodIds));
    expect(dead.length).toBe(40);
    expect(verdicts.length + dead.length).toBe(f.produced.total);
    expect(await offsetsBehindShards(f)).toEqual([]);
    const high = await f.admin.fetchTopicOffsets(f.topic);
    const [committed] = await f.admin.fetchOffsets({ groupId: f.group, topics: [f.topic] });
    for (const p of high) expect(committed!.partitions.find((c) => c.partition === p.partition)?.offset).toBe(p.high);
    // Dead letters reach their topic at least once each (a kill between publish and manifest repeats them).
    const dlqCount = (await f.admin.fetchTopicOffsets(f.dlq)).reduce((n, p) => n + Number(p.high), 0);
    expect(dlqCount).toBeGreaterThanOrEqual(40);
  }, LONG_TEST_MS);
});
