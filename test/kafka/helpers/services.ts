/**
 * Real Kafka + S3 for integration tests. When KAFKA_BROKERS / S3_ENDPOINT are not set (a plain
 * `npx vitest run test/kafka`), infra/services.sh starts or reuses the local services, so no
 * test needs anything started by hand. Every test uses its own topics and buckets.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Kafka, logLevel, Partitioners, type Admin, type Producer } from 'kafkajs';
import { skipIdleRequestQueueTimer } from '../../../connectors/kafka/idle-timer.js';
import { waitForProgress } from '../../helpers/progress.js';

export function ensureServices(): { brokers: string; endpoint: string } {
  if (!process.env.KAFKA_BROKERS || !process.env.S3_ENDPOINT) {
    const out = execFileSync('bash', ['infra/services.sh', 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 600_000 });
    for (const line of out.split('\n')) {
      const m = /^export ([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
      // Values are printf %q-quoted; the ones we need carry no special characters.
      if (m && !process.env[m[1]!]) process.env[m[1]!] = m[2]!.replace(/^'(.*)'$/, '$1');
    }
  }
  return { brokers: process.env.KAFKA_BROKERS!, endpoint: process.env.S3_ENDPOINT! };
}

export const runId = (): string => randomBytes(4).toString('hex');

export function s3Client(): S3Client {
  return new S3Client({ endpoint: process.env.S3_ENDPOINT, region: process.env.AWS_REGION ?? 'us-east-1', forcePathStyle: true });
}

export async function createBucket(s3: S3Client, prefix: string): Promise<string> {
  const bucket = `rjt-${prefix}-${runId()}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

export async function dropBucket(s3: S3Client, bucket: string): Promise<void> {
  for (;;) {
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket })).catch(() => undefined);
    const keys = (listed?.Contents ?? []).map((o) => ({ Key: o.Key! }));
    if (keys.length === 0) break;
    await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys } }));
  }
  await s3.send(new DeleteBucketCommand({ Bucket: bucket })).catch(() => undefined);
}

export function kafkaClient(): Kafka {
  skipIdleRequestQueueTimer(); // the product's clients do too: no 1 ms wake-ups in the test worker
  return new Kafka({ clientId: 'rj-test', brokers: process.env.KAFKA_BROKERS!.split(','), logLevel: logLevel.ERROR, retry: { retries: 8, initialRetryTime: 200 } });
}

/**
 * Creates a topic and returns once the broker serves every partition. Not kafkajs'
 * `waitForLeaders`: for a moment after CreateTopics returns, a KRaft broker's metadata does not
 * list the new topic yet (UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this
 * topic-partition"), and that wait gives up on the first such answer instead of asking again
 * (3 of 20 creations on this machine).
 */
export async function createTopic(admin: Admin, name: string, partitions: number): Promise<void> {
  await admin.createTopics({ topics: [{ topic: name, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: false });
  await waitUntilServed(admin, name, partitions);
}

/** Until the leader of each partition answers ListOffsets, which it checks as it checks Produce. */
export async function waitUntilServed(admin: Admin, topic: string, partitions: number): Promise<void> {
  await waitForProgress(
    async () => {
      try {
        const served = (await admin.fetchTopicOffsets(topic)).length;
        return { done: served === partitions, progress: served };
      } catch (e) {
        return { done: false, progress: (e as Error).message };
      }
    },
    { what: `the broker serving the ${partitions} partitions of ${topic}`, pollMs: 50 },
  );
}

export async function newProducer(kafka: Kafka): Promise<Producer> {
  const p = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await p.connect();
  return p;
}

/** Sends values in requests of at most ~512 KB (the broker refuses batches over 1 MB). */
export async function produce(producer: Producer, topic: string, messages: Array<{ key: string; value: string | Buffer | null; headers?: Record<string, string> }>): Promise<void> {
  let chunk: typeof messages = [];
  let bytes = 0;
  for (const m of messages) {
    chunk.push(m);
    bytes += (m.value?.length ?? 0) + m.key.length;
    if (bytes > 512 * 1024 || chunk.length >= 500) {
      await producer.send({ topic, acks: -1, messages: chunk });
      chunk = [];
      bytes = 0;
    }
  }
  if (chunk.length) await producer.send({ topic, acks: -1, messages: chunk });
}

/** Committed offset per partition of a group ("next offset to read"; -1 = none). */
export async function groupOffsets(admin: Admin, groupId: string, topic: string): Promise<Map<number, number>> {
  const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
  return new Map((t?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
}
