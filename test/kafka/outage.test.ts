// The model server down 60 s in the middle of a 4,000-record Kafka -> S3 run (real broker, real
// S3 server, the juror simulator as its own process, SIGKILLed and started again on its port):
// the partitions pause instead of the stage committing unjudged records; at the end every record
// is judged exactly once, none with an error or degraded, and the group's offsets are at the end.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { runCli } from '../helpers/cli.js';
import { LONG_TEST_MS, waitForProgress } from '../helpers/progress.js';
import { tempDir } from '../helpers/run-setup.js';
import { simProfile, startSimProcess, type SimProcess } from '../helpers/sim-process.js';
import { kafkaFixture, offsetsBehindShards, type KafkaFixture } from './helpers/fixture.js';
import { ensureServices } from './helpers/services.js';

ensureServices();

describe('Kafka -> S3: endpoint outage', () => {
  let f: KafkaFixture;
  let sim: SimProcess | undefined;
  beforeAll(async () => {
    f = await kafkaFixture('outage', { records: 4000, bad: 0 });
  }, LONG_TEST_MS);
  afterAll(async () => {
    await sim?.kill();
    await f?.cleanup();
  });

  it('simulator down 60 s mid-run: partitions pause, every record judged once, none errored, offsets at the end', async () => {
    const dir = tempDir('kafka-outage');
    sim = await startSimProcess(simProfile(dir, { median: 4, sigma: 0.3, max: 20 }));
    const config = join(dir, 'jury.yaml');
    // One juror keeps the run CPU-light on a shared box; the outage protocol is what is tested.
    writeFileSync(
      config,
      YAML.stringify({
        endpoints: { sim: { base_url: sim.url, max_concurrency: 16, max_retries: 2, backoff_base_ms: 50, backoff_max_ms: 200, breaker: { failures: 3, probe_interval_ms: 250, probe_max_interval_ms: 2000 } } },
        mode: 'single',
        jurors: [{ id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' }],
        cache: { enabled: false, dir: join(dir, 'cache') },
        kafka: { group_id: f.group, session_timeout_ms: 6000, heartbeat_interval_ms: 500, rebalance_timeout_ms: 15000, flush_idle_ms: 500 },
      }),
    );
    const args = ['run', '--config', config, '--input', `kafka://${f.topic}`, '--out', `s3://${f.bucket}/out`, '--until-caught-up', '--progress', 'log', '--range-records', '100', '--concurrency', '16'];
    const run = runCli(args, { progress: () => f.manifests() });
    await waitForProgress(async () => {
      const n = await f.manifests();
      return { done: n >= 4, progress: n };
    }, { what: '4 committed ranges' });
    const before = await f.manifests();
    await sim.kill();
    await new Promise((r) => setTimeout(r, 60_000));
    const during = await f.manifests();
    await sim.start();
    const r = await run;
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    console.log(`manifests at the kill ${before}, after 60 s down ${during}\n${r.stdout}`);
    expect(before).toBeLessThan(40); // 4,000 records are 40 ranges: the kill was mid-run
    // Nothing was committed once the in-flight records met the outage: at most the ranges that were already complete.
    expect(during - before).toBeLessThanOrEqual(8);

    const verdicts = await readCommittedRows(f.store, 'verdicts');
    const ids = verdicts.map((v) => String(v.record_id));
    expect(ids.length).toBe(f.produced.goodIds.length);
    expect(new Set(ids)).toEqual(new Set(f.produced.goodIds));
    expect(verdicts.filter((v) => v.error !== null || v.degraded)).toEqual([]);
    expect(await readCommittedRows(f.store, 'dead_letters')).toEqual([]);
    expect(await offsetsBehindShards(f)).toEqual([]);
    const high = await f.admin.fetchTopicOffsets(f.topic);
    const [committed] = await f.admin.fetchOffsets({ groupId: f.group, topics: [f.topic] });
    for (const p of high) expect(committed!.partitions.find((c) => c.partition === p.partition)?.offset).toBe(p.high);

    expect(r.stderr).toMatch(/intake paused: endpoint "sim"/);
    expect(r.stderr).toMatch(/kafka: partitions paused while the stage waits for an endpoint/);
    expect(r.stderr).toMatch(/kafka: the stage goes on: partitions resume/);
    const paused = /paused \(an endpoint was down\)\s+(\d+) time\(s\), ([\d.]+) s in all/.exec(r.stdout);
    expect(paused, r.stdout).not.toBeNull();
    expect(Number(paused![2])).toBeGreaterThanOrEqual(55);
    // The group kept its member through the pause: no partition was revoked.
    expect(r.stderr).not.toMatch(/revoked/);
  }, LONG_TEST_MS);
});
