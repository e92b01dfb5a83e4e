// Smoke test of the local test infrastructure against REAL servers: a Kafka
// broker (kafkajs) and an S3-compatible server (@aws-sdk/client-s3). Nothing
// is mocked. Start the servers first:
//
//   eval "$(infra/services.sh start)"   # sets KAFKA_BROKERS, S3_ENDPOINT, AWS_*
//   npx vitest run test/infra
//
// Without KAFKA_BROKERS / S3_ENDPOINT the matching suite is skipped (its name
// says why), so a plain unit-test run on a machine without servers stays green.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel, Partitioners, type Admin } from 'kafkajs';
import { skipIdleRequestQueueTimer } from '../../connectors/kafka/idle-timer.js';
import { waitUntilServed } from '../kafka/helpers/services.js';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';

const KAFKA_BROKERS = process.env.KAFKA_BROKERS;
const S3_ENDPOINT = process.env.S3_ENDPOINT;
const HOW_TO = 'run `eval "$(infra/services.sh start)"` first';

if (!KAFKA_BROKERS || !S3_ENDPOINT) {
  console.warn(
    `[test/infra] skipping real-server tests: ${[
      !KAFKA_BROKERS && 'KAFKA_BROKERS',
      !S3_ENDPOINT && 'S3_ENDPOINT',
    ]
      .filter(Boolean)
      .join(' and ')} not set; ${HOW_TO}`,
  );
}

/** Rejects after `ms` so a broken server fails the test instead of hanging it. */
function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result after ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

describe.skipIf(!KAFKA_BROKERS)(
  `Kafka at KAFKA_BROKERS${KAFKA_BROKERS ? '' : ` (skipped: KAFKA_BROKERS not set; ${HOW_TO})`}`,
  () => {
    const runId = randomUUID().slice(0, 8);
    const topic = `rj-infra-test-${runId}`;
    const groupId = `rj-infra-test-group-${runId}`;
    skipIdleRequestQueueTimer(); // as the product's clients: no 1 ms wake-ups, no TimeoutNegativeWarning
    const kafka = new Kafka({
      clientId: 'rj-infra-test',
      brokers: (KAFKA_BROKERS ?? '').split(','),
      logLevel: logLevel.WARN,
      retry: { retries: 8, initialRetryTime: 200 },
    });
    let admin: Admin;

    beforeAll(async () => {
      admin = kafka.admin();
      await admin.connect();
    });

    afterAll(async () => {
      if (!admin) return;
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    });

    it('creates a topic, produces, consumes in a group and commits the offset', async () => {
      // Not waitForLeaders: it gives up while the broker's metadata does not list the topic yet.
      expect(await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: false })).toBe(true);
      await waitUntilServed(admin, topic, 1);
      expect(await admin.listTopics()).toContain(topic);

      const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
      await producer.connect();
      const [sent] = await producer.send({
        topic,
        acks: -1,
        messages: [{ key: 'trace-1', value: 'hello from reasoning-jury', headers: { run: runId } }],
      });
      await producer.disconnect();
      expect(sent?.errorCode).toBe(0);
      expect(sent?.baseOffset).toBe('0');

      const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1_000 });
      await consumer.connect();
      try {
        await consumer.subscribe({ topics: [topic], fromBeginning: true });
        const received = await withTimeout(
          new Promise<{ key: string; value: string; run: string; offset: string }>((resolve, reject) => {
            consumer
              .run({
                autoCommit: false,
                eachMessage: async ({ topic: t, partition, message }) => {
                  // Commit "next offset to read", as Kafka consumers do.
                  await consumer.commitOffsets([
                    { topic: t, partition, offset: (BigInt(message.offset) + 1n).toString() },
                  ]);
                  resolve({
                    key: message.key?.toString() ?? '',
                    value: message.value?.toString() ?? '',
                    run: message.headers?.run?.toString() ?? '',
                    offset: message.offset,
                  });
                },
              })
              .catch(reject);
          }),
          30_000,
          'consume from a fresh consumer group',
        );
        expect(received).toEqual({
          key: 'trace-1',
          value: 'hello from reasoning-jury',
          run: runId,
          offset: '0',
        });
      } finally {
        await consumer.disconnect();
      }

      const offsets = await admin.fetchOffsets({ groupId, topics: [topic] });
      expect(offsets).toEqual([{ topic, partitions: [{ partition: 0, offset: '1', metadata: null }] }]);
      await admin.deleteGroups([groupId]);
    });
  },
);

describe.skipIf(!S3_ENDPOINT)(
  `S3 at S3_ENDPOINT${S3_ENDPOINT ? '' : ` (skipped: S3_ENDPOINT not set; ${HOW_TO})`}`,
  () => {
    const bucket = `rj-infra-test-${randomUUID().slice(0, 8)}`;
    const s3 = new S3Client({
      endpoint: S3_ENDPOINT,
      region: process.env.AWS_REGION ?? 'us-east-1',
      // Local servers serve buckets as http://host:port/<bucket>, not <bucket>.host.
      forcePathStyle: true,
      // AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY come from the default provider chain.
    });

    beforeAll(async () => {
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    });

    afterAll(async () => {
      // Empty and remove the bucket so repeated runs against a shared server stay clean.
      const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket })).catch(() => undefined);
      for (const o of listed?.Contents ?? []) {
        await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: o.Key })).catch(() => undefined);
      }
      await s3.send(new DeleteBucketCommand({ Bucket: bucket })).catch(() => undefined);
      s3.destroy();
    });

    const text = 'shard-0000: 0123456789abcdefghijklmnopqrstuvwxyz';

    it('puts an object and reads a byte range of it', async () => {
      const put = await s3.send(
        new PutObjectCommand({ Bucket: bucket, Key: 'shards/a.txt', Body: text, ContentType: 'text/plain' }),
      );
      expect(put.ETag).toMatch(/^"[0-9a-f]{32}"$/);

      const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'shards/a.txt' }));
      expect(head.ContentLength).toBe(Buffer.byteLength(text));

      const ranged = await s3.send(
        new GetObjectCommand({ Bucket: bucket, Key: 'shards/a.txt', Range: 'bytes=12-21' }),
      );
      expect(ranged.$metadata.httpStatusCode).toBe(206);
      expect(ranged.ContentRange).toBe(`bytes 12-21/${Buffer.byteLength(text)}`);
      expect(await ranged.Body?.transformToString()).toBe('0123456789');
    });

    it('does a small multipart upload', async () => {
      const key = 'shards/multipart.bin';
      // Every part but the last must be >= 5 MiB in S3.
      const part1 = Buffer.alloc(5 * 1024 * 1024, 0x61);
      const part2 = Buffer.from('-tail-of-the-object');
      const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }));
      expect(UploadId).toBeTruthy();
      try {
        const e1 = await s3.send(
          new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: 1, Body: part1 }),
        );
        const e2 = await s3.send(
          new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: 2, Body: part2 }),
        );
        const done = await s3.send(
          new CompleteMultipartUploadCommand({
            Bucket: bucket,
            Key: key,
            UploadId,
            MultipartUpload: {
              Parts: [
                { PartNumber: 1, ETag: e1.ETag },
                { PartNumber: 2, ETag: e2.ETag },
              ],
            },
          }),
        );
        expect(done.ETag).toMatch(/-2"$/); // multipart ETags end in -<part count>
      } catch (err) {
        await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId }));
        throw err;
      }
      const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      expect(head.ContentLength).toBe(part1.length + part2.length);
      // A range across the part boundary proves the parts were joined in order.
      const start = part1.length - 2;
      const ranged = await s3.send(
        new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${start}-${start + 6}` }),
      );
      expect(await ranged.Body?.transformToString()).toBe('aa-tail');
    });

    it('refuses a conditional put (If-None-Match: *) over an existing key', async () => {
      const key = 'shards/exclusive.txt';
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'first', IfNoneMatch: '*' }));
      const second = s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'second', IfNoneMatch: '*' }));
      await expect(second).rejects.toBeInstanceOf(S3ServiceException);
      await expect(second).rejects.toMatchObject({ $metadata: { httpStatusCode: 412 } });
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      expect(await got.Body?.transformToString()).toBe('first');
    });

    it('lists with ListObjectsV2 and deletes', async () => {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'other/b.txt', Body: 'b' }));
      const shards = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'shards/' }));
      expect((shards.Contents ?? []).map((o) => o.Key).sort()).toEqual([
        'shards/a.txt',
        'shards/exclusive.txt',
        'shards/multipart.bin',
      ]);
      const top = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Delimiter: '/' }));
      expect((top.CommonPrefixes ?? []).map((p) => p.Prefix).sort()).toEqual(['other/', 'shards/']);

      const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, MaxKeys: 2 }));
      expect(page.IsTruncated).toBe(true);
      const rest = await s3.send(
        new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: page.NextContinuationToken }),
      );
      expect((page.Contents?.length ?? 0) + (rest.Contents?.length ?? 0)).toBe(4);

      await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'other/b.txt' }));
      await expect(
        s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'other/b.txt' })),
      ).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } });
    });
  },
);
