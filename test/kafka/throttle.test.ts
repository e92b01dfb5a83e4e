// A slow S3 sink (every put delayed on purpose) must slow the Kafka consumer down, not fill
// memory: fetching pauses when the source buffer is full, the stage window holds the rest,
// RSS stays flat, and what does get committed is still exact. Real broker, real S3 server;
// only the jurors are in-process (instant simulated models).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkajs, KafkajsConsumer } from '../../connectors/kafka/kafkajs-client.js';
import { lineLogger } from '../../src/util/log.js';
import { KafkaConfig } from '../../schemas/kafka.js';
import { KafkaSource } from '../../connectors/kafka/source.js';
import type { ObjectStore } from '../../src/pipeline/storage/object-store.js';
import { defaultConfigInput, parseConfig } from '../../src/config/load.js';
import { ShardCommitter } from '../../src/pipeline/commit/shard-commit.js';
import { runStage } from '../../src/pipeline/stage.js';
import { intakeSettings, judgingSteps } from '../../src/pipeline/steps/index.js';
import { readCommittedRows } from '../../src/pipeline/commit/shard-read.js';
import { openRuntime } from '../../src/compose/runtime.js';
import { createSimProvider, defaultProfile, withoutFaults } from '../../src/sim/index.js';
import { syntheticRecords } from '../../src/sim/synthetic.js';
import { S3ObjectStore } from '../../connectors/s3/object-store.js';
import { kafkaFixture, offsetsBehindShards, type KafkaFixture } from './helpers/fixture.js';
import { ensureServices, newProducer, produce } from './helpers/services.js';

ensureServices();

/** The real S3 store, every write held back `delayMs`: a sink slower than the jury. */
class SlowStore implements ObjectStore {
  puts = 0;
  constructor(
    private readonly inner: S3ObjectStore,
    private readonly delayMs: number,
  ) {}
  async putObject(key: string, bytes: Uint8Array): Promise<void> {
    await new Promise((r) => setTimeout(r, this.delayMs));
    this.puts++;
    return this.inner.putObject(key, bytes);
  }
  exists = (k: string) => this.inner.exists(k);
  get = (k: string) => this.inner.get(k);
  list = (p: string) => this.inner.list(p);
  listAfter = (p: string, a: string | undefined) => this.inner.listAfter(p, a);
  locate = (k: string) => this.inner.locate(k);
}

const MB = 1024 * 1024;

describe('Kafka -> throttled S3 sink', () => {
  let f: KafkaFixture;
  beforeAll(async () => {
    f = await kafkaFixture('throttle', { records: 100, bad: 0 });
    // ~8 KB per message: 4,000 more of them are 32 MB waiting in the topic.
    const pad = 'x'.repeat(8000);
    const more = syntheticRecords(4000, { seed: 77, prefix: `thr${f.id}` }).map((r) => ({ key: r.id, value: JSON.stringify({ ...r, meta: { pad } }) }));
    const producer = await newProducer(f.kafka);
    await produce(producer, f.topic, more);
    await producer.disconnect();
  }, 120_000);
  afterAll(async () => f?.cleanup());

  it('pauses consumption and keeps RSS bounded while the sink crawls', async () => {
    const cfg = KafkaConfig.parse({ group_id: f.group, session_timeout_ms: 6000, heartbeat_interval_ms: 500, max_bytes_per_partition: 256 * 1024, max_wait_ms: 300 });
    const kafka = createKafkajs(cfg, lineLogger(() => undefined));
    const consumer = new KafkajsConsumer(kafka, cfg, [f.topic], f.group);
    const store = new SlowStore(f.store, 400);
    const stop = new AbortController();
    const maxBufferedBytes = 2 * MB;
    const source = new KafkaSource({ consumer, topics: [f.topic], store, maxBufferedMessages: 300, maxBufferedBytes, flushIdleMs: 0, maxMessageBytes: 16 * MB, signal: stop.signal });
    const config = parseConfig({ ...defaultConfigInput(), cache: { enabled: false, dir: '.cache/none' } });
    const sim = createSimProvider({ profile: withoutFaults(defaultProfile()), latency: 'instant' });
    const runtime = await openRuntime({ config, auditLogPath: null, providerFor: () => sim });

    const rss: number[] = [];
    const sampler = setInterval(() => rss.push(process.memoryUsage().rss), 250);
    await source.start();
    let committedSoFar = 0;
    const window = 2 * 100 + 16; // the stage's default window for these settings
    const stage = runStage({ source, intake: intakeSettings(config), steps: judgingSteps({ config, jury: runtime.jury }), committer: new ShardCommitter(store), concurrency: 16, range: { maxRecords: 100, maxChars: 64 * MB, sequentialUnits: false }, signal: stop.signal, onProgress: (c) => (committedSoFar = c.records_committed) });
    await new Promise((r) => setTimeout(r, 12_000));
    const yieldedWhileThrottled = source.progress().items;
    const committedAtStop = committedSoFar;
    const stats = { ...source.stats };
    stop.abort();
    const counters = await stage;
    clearInterval(sampler);
    await source.close();
    await runtime.close();

    const total = 4100;
    console.log(`throttled: ${yieldedWhileThrottled} of ${total} messages taken in 12 s, ${committedAtStop} committed by then (${counters.records_committed} after draining), ${stats.pauses} pauses, buffer peak ${stats.maxBuffered} msgs / ${(stats.maxBufferedBytes / MB).toFixed(2)} MB, RSS ${(Math.min(...rss) / MB).toFixed(0)}-${(Math.max(...rss) / MB).toFixed(0)} MB, ${store.puts} puts`);
    // Consumption was held back by the sink: reading never ran further ahead of the commits
    // than the stage window plus the (paused) source buffer, and most of the topic stayed in Kafka.
    expect(stats.pauses).toBeGreaterThan(0);
    expect(yieldedWhileThrottled - committedAtStop).toBeLessThanOrEqual(window + 1); // + the record waiting for a slot
    expect(yieldedWhileThrottled).toBeLessThan(total - 1000);
    expect(stats.maxBuffered).toBeLessThanOrEqual(300 + 4 * 40); // + at most one fetch per partition
    expect(stats.maxBufferedBytes).toBeLessThanOrEqual(maxBufferedBytes + 4 * 300 * 1024);
    // Flat memory: RSS peaks in the last third of the run no higher than in the middle third.
    const third = Math.floor(rss.length / 3);
    const peak = (xs: number[]) => Math.max(...xs) / MB;
    expect(peak(rss.slice(2 * third)) - peak(rss.slice(third, 2 * third))).toBeLessThan(40);
    expect(peak(rss) - rss[0]! / MB).toBeLessThan(150);

    // What was committed is exact, and the group's offsets are not ahead of it.
    const verdicts = await readCommittedRows(f.store, 'verdicts');
    expect(verdicts.length).toBe(counters.records_committed);
    expect(new Set(verdicts.map((v) => v.record_id)).size).toBe(verdicts.length);
    expect(await offsetsBehindShards(f)).toEqual([]);
    const [committed] = await f.admin.fetchOffsets({ groupId: f.group, topics: [f.topic] });
    const committedSum = committed!.partitions.reduce((n, p) => n + Math.max(0, Number(p.offset)), 0);
    expect(committedSum).toBe(counters.records_committed);
  }, 120_000);
});
