// Two `run` instances in one consumer group: the second joins mid-run, the group rebalances,
// the partitions are split, and the committed output still has each record exactly once.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCommitted, verifyCommitted } from '../../src/pipeline/commit/shard-commit.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { BIN, guardChild, type CliResult } from '../helpers/cli.js';
import { LONG_TEST_MS, waitForProgress, type Probe } from '../helpers/progress.js';
import { tempDir } from '../helpers/run-setup.js';
import { kafkaFixture, offsetsBehindShards, type KafkaFixture } from './helpers/fixture.js';
import { ensureServices } from './helpers/services.js';

ensureServices();

/** Starts `run`; it is killed only if neither its output nor `progress` moves for the stall window. */
function start(args: string[], progress: Probe, name: string): { done: Promise<CliResult>; stderr: () => string } {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const guard = guardChild(child, { progress, what: `instance ${name}` });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code) => {
      guard.stop();
      const stalled = guard.stalled();
      resolve({ code, stdout, stderr: stalled ? `${stderr}\n[test] killed: ${stalled}` : stderr });
    }),
  );
  return { done, stderr: () => stderr };
}

const assignments = (stderr: string) => [...stderr.matchAll(/kafka: assigned (.*)/g)].map((m) => (m[1] === 'no partitions' ? [] : m[1]!.split(', ')));
const rangesCommitted = (stdout: string) => Number(/ranges committed\s+(\d+)/.exec(stdout)?.[1] ?? 0);

describe('Kafka scale-out in one consumer group', () => {
  let f: KafkaFixture;
  beforeAll(async () => {
    f = await kafkaFixture('scale', { records: 4000, bad: 20 });
  }, LONG_TEST_MS);
  afterAll(async () => f?.cleanup());

  it('a second instance joining mid-run takes half the partitions; no loss, no duplicate', async () => {
    const dir = tempDir('kafka-scale');
    // A rebalance, not a session timeout, moves the partitions here: a long session keeps a
    // starved heartbeat on a very busy machine from evicting a live instance over and over.
    const config = f.config(dir, { session_timeout_ms: 30_000, heartbeat_interval_ms: 1000 }, { median: 4, sigma: 0.3, max: 20 }, 'single');
    const args = f.args(config, ['--range-records', '100', '--concurrency', '32']);

    const progress = () => f.manifests();
    const a = start(args, progress, 'A');
    // Before its first commit A only joins the group and reads: its stderr shows that much.
    await waitForProgress(async () => {
      const n = await f.manifests();
      return { done: n >= 4, progress: [n, a.stderr().length] };
    }, { pollMs: 100, what: 'instance A committing its first 4 ranges' }).catch((e: Error) => {
      throw new Error(`${e.message}\n${a.stderr().slice(-2000)}`);
    });
    const atJoin = await f.manifests();
    const b = start(args, progress, 'B');
    const [ra, rb] = await Promise.all([a.done, b.done]);
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    console.log(`A: ${assignments(ra.stderr).map((x) => x.length).join(' -> ')} partitions, ${rangesCommitted(ra.stdout)} ranges; B: ${assignments(rb.stderr).map((x) => x.length).join(' -> ')} partitions, ${rangesCommitted(rb.stdout)} ranges; manifests when B joined: ${atJoin}`);

    // A started with all 4; after B joined, the group split them 2 + 2.
    expect(assignments(ra.stderr)[0]).toHaveLength(4);
    const bFirst = assignments(rb.stderr)[0]!;
    expect(bFirst).toHaveLength(2);
    const aAfter = assignments(ra.stderr).find((x) => x.length === 2);
    expect(aAfter, ra.stderr.slice(-3000)).toBeDefined();
    expect(new Set([...aAfter!, ...bFirst]).size).toBe(4);
    expect(ra.stderr).toMatch(/revoked: \d+ uncommitted record/);
    expect(rangesCommitted(rb.stdout)).toBeGreaterThan(0);

    const manifests = await listCommitted(f.store);
    for (const m of manifests) expect(await verifyCommitted(f.store, m)).toEqual([]);
    const verdicts = await readCommittedRows(f.store, 'verdicts');
    const dead = await readCommittedRows(f.store, 'dead_letters');
    const ids = verdicts.map((v) => String(v.record_id));
    expect(ids.length).toBe(f.produced.goodIds.length);
    expect(new Set(ids)).toEqual(new Set(f.produced.goodIds));
    expect(dead.length).toBe(20);
    expect(await offsetsBehindShards(f)).toEqual([]);
    const high = await f.admin.fetchTopicOffsets(f.topic);
    const [committed] = await f.admin.fetchOffsets({ groupId: f.group, topics: [f.topic] });
    for (const p of high) expect(committed!.partitions.find((c) => c.partition === p.partition)?.offset).toBe(p.high);
  }, LONG_TEST_MS);
});
