import { readFileSync } from 'node:fs';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

/**
 * One measured Kafka -> S3 run in a fresh process (peak RSS is this run's alone): the stage in
 * a worker thread with a 1024 MB heap limit, as `run` does, 3 instant in-process jurors +
 * consolidation, the real consumer group and the real S3 server. As in `run`, only the worker
 * loads the pipeline (kafkajs, the AWS SDK, the jury); the main thread just waits.
 *   node dist/bench/kafka-child.js <topic> <bucket> <group> [<prefix>]
 */
if (isMainThread) {
  const [topic, bucket, group, prefix = 'out'] = process.argv.slice(2) as [string, string, string, string?];
  const worker = new Worker(new URL(import.meta.url), { workerData: { topic, bucket, group, prefix }, resourceLimits: { maxOldGenerationSizeMb: 1024 } });
  const result = await new Promise<Record<string, unknown>>((resolve, reject) => {
    worker.on('message', resolve);
    worker.on('error', reject);
  });
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  process.stdout.write(JSON.stringify({ ...result, peak_rss_mb: hwm ? Number(hwm[1]) / 1024 : NaN }) + '\n');
} else {
  const { topic, bucket, group, prefix } = workerData as { topic: string; bucket: string; group: string; prefix: string };
  const { createKafkajs, KafkajsConsumer } = await import('../connectors/kafka/kafkajs-client.js');
  const { KafkaConfig } = await import('../schemas/kafka.js');
  const { KafkaSource } = await import('../connectors/kafka/source.js');
  const { createS3Client } = await import('../connectors/s3/client.js');
  const { S3ObjectStore } = await import('../connectors/s3/object-store.js');
  const { defaultConfigInput, parseConfig } = await import('../src/config/load.js');
  const { runStage } = await import('../src/pipeline/stage.js');
  const { intakeSettings, judgingSteps } = await import('../src/pipeline/steps/index.js');
  const { ShardCommitter } = await import('../src/pipeline/commit/shard-commit.js');
  const { openRuntime } = await import('../src/compose/runtime.js');
  const { createSimProvider, defaultProfile, withoutFaults } = await import('../src/sim/index.js');
  const config = parseConfig({ ...defaultConfigInput(), cache: { enabled: false, dir: '.cache/none' } });
  const sim = createSimProvider({ profile: withoutFaults(defaultProfile()), latency: 'instant' });
  const runtime = await openRuntime({ config, auditLogPath: null, providerFor: () => sim });
  const store = new S3ObjectStore(createS3Client({}), { bucket, prefix });
  const cfg = KafkaConfig.parse({ group_id: group, session_timeout_ms: 10_000, heartbeat_interval_ms: 1000, flush_idle_ms: 1000 });
  const consumer = new KafkajsConsumer(createKafkajs(cfg, (await import('../src/util/log.js')).logger('kafka')), cfg, [topic], group);
  const source = new KafkaSource({
    consumer,
    topics: [topic],
    store,
    maxBufferedMessages: cfg.max_buffered_messages,
    maxBufferedBytes: cfg.max_buffered_mb * 1024 * 1024,
    flushIdleMs: cfg.flush_idle_ms,
    maxMessageBytes: cfg.max_message_mb * 1024 * 1024,
    untilCaughtUp: true,
    quietMs: 500,
  });
  const t0 = performance.now();
  await source.start();
  let tFirst: number | undefined;
  const counters = await runStage({
    source,
    intake: intakeSettings(config),
    steps: judgingSteps({ config, jury: runtime.jury }),
    committer: new ShardCommitter(store),
    concurrency: 16,
    range: { maxRecords: 1000, maxChars: 64 << 20, sequentialUnits: false },
    onProgress: () => (tFirst ??= performance.now()),
  });
  const t1 = performance.now();
  await source.close();
  await runtime.close();
  parentPort!.postMessage({
    records: counters.read,
    committed: counters.records_committed,
    seconds: (t1 - t0) / 1000,
    // from the first record judged to the last range committed: the group join is excluded
    steady_seconds: (t1 - (tFirst ?? t0)) / 1000,
    pauses: source.stats.pauses,
    s3_puts: store.stats.puts,
  });
}
