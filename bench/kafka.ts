import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { syntheticRecords } from '../src/sim/synthetic.js';
import { fmt } from './common.js';

/** KAFKA_BROKERS / S3_ENDPOINT, starting (or reusing) the local services when unset. */
function services(): void {
  if (process.env.KAFKA_BROKERS && process.env.S3_ENDPOINT) return;
  const out = execFileSync('bash', ['infra/services.sh', 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  for (const m of out.matchAll(/^export ([A-Z_0-9]+)=(.*)$/gm)) process.env[m[1]!] ??= m[2]!.replace(/^'(.*)'$/, '$1');
}

async function produce(kafka: Kafka, topic: string, n: number): Promise<void> {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  for (let i = 0; i < n; i += 1000) {
    // Same records as the file memory benchmark (bench/memory.ts), keyed by id over 4 partitions.
    const chunk = syntheticRecords(Math.min(1000, n - i), { seed: 1000 + i, prefix: `mem${i}` });
    for (let j = 0; j < chunk.length; j += 200) {
      await producer.send({ topic, acks: -1, messages: chunk.slice(j, j + 200).map((r) => ({ key: r.id, value: JSON.stringify(r) })) });
    }
  }
  await producer.disconnect();
}

async function dropBucket(s3: S3Client, bucket: string): Promise<void> {
  for (;;) {
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    const keys = (listed.Contents ?? []).map((o) => ({ Key: o.Key! }));
    if (keys.length === 0) break;
    await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys } }));
  }
  await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Kafka -> S3 shards, one instance, 3 instant jurors + consolidation: records/s and peak RSS at
 * 10k and 100k records (4-partition topic, ranges of 1,000, concurrency 16). Each size is
 * consumed `repeats` times, each time by a fresh consumer group into a fresh prefix, and the
 * median is reported: peak RSS moves by ±20 MB from run to run on a shared machine.
 */
export async function benchKafka(sizes = [10_000, 100_000], repeats = 3): Promise<string> {
  services();
  const id = randomBytes(3).toString('hex');
  const kafka = new Kafka({ clientId: 'rj-bench', brokers: process.env.KAFKA_BROKERS!.split(','), logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  await admin.connect();
  const s3 = new S3Client({ endpoint: process.env.S3_ENDPOINT, region: process.env.AWS_REGION ?? 'us-east-1', forcePathStyle: true });
  const child = fileURLToPath(new URL('./kafka-child.js', import.meta.url));
  const rows: Array<{ n: number; rss: number[]; secs: number[]; steady: number[]; puts: number }> = [];
  try {
    for (const n of sizes) {
      const topic = `rjb-${id}-${n}`;
      const bucket = `rjb-${id}-${n}`;
      await admin.createTopics({ topics: [{ topic, numPartitions: 4, replicationFactor: 1 }], waitForLeaders: true });
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
      try {
        await produce(kafka, topic, n);
        const row = { n, rss: [] as number[], secs: [] as number[], steady: [] as number[], puts: 0 };
        for (let r = 0; r < repeats; r++) {
          const res = JSON.parse(execFileSync(process.execPath, [child, topic, bucket, `${topic}-group-${r}`, `run-${r}`], { encoding: 'utf8', maxBuffer: 1 << 20, stdio: ['ignore', 'pipe', 'inherit'] }));
          if (res.committed !== n) throw new Error(`kafka bench: ${res.committed} of ${n} records committed`);
          row.rss.push(res.peak_rss_mb);
          row.secs.push(res.seconds);
          row.steady.push(res.steady_seconds);
          row.puts = res.s3_puts;
        }
        rows.push(row);
      } finally {
        await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
        await admin.deleteGroups(Array.from({ length: repeats }, (_, r) => `${topic}-group-${r}`)).catch(() => undefined);
        await dropBucket(s3, bucket).catch(() => undefined);
      }
    }
  } finally {
    await admin.disconnect();
    s3.destroy();
  }
  const lines = [
    'Kafka (4 partitions, one consumer) -> 3 instant jurors + consolidation -> Parquet shards on the S3 server, concurrency 16, ranges of 1,000:',
    '',
    `| records | peak RSS (MB), median of ${repeats} (runs) | seconds incl. group join, median | records/s | records/s after the first record | S3 puts per run |`,
    '|---|---|---|---|---|---|',
  ];
  const list = (xs: number[], d: number) => xs.map((x) => fmt(x, d)).join(', ');
  for (const r of rows) {
    lines.push(`| ${r.n.toLocaleString('en-US')} | **${fmt(median(r.rss), 1)}** (${list(r.rss, 1)}) | ${fmt(median(r.secs), 1)} (${list(r.secs, 1)}) | **${fmt(r.n / median(r.secs), 0)}** | ${fmt(r.n / median(r.steady), 0)} | ${r.puts} |`);
  }
  if (rows.length >= 2) lines.push('', `Ratio of median peak RSS, ${rows.at(-1)!.n.toLocaleString('en-US')} vs ${rows[0]!.n.toLocaleString('en-US')}: **${fmt(median(rows.at(-1)!.rss) / median(rows[0]!.rss), 3)}** (target ≤ 1.1; each ≤ 300 MB); target ≥ 1,000 records/s per instance.`);
  return lines.join('\n');
}
