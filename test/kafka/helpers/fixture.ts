/**
 * A Kafka -> S3 run fixture: a fresh topic (plus DLQ and events topics), a fresh bucket, and
 * 5,000-ish messages of which a known set are bad in different ways.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { Admin, Kafka } from 'kafkajs';
import { createS3Client } from '../../../connectors/s3/client.js';
import { S3ObjectStore } from '../../../connectors/s3/object-store.js';
import { listCommitted } from '../../../src/pipeline/commit/shard-commit.js';
import { syntheticRecords } from '../../../src/sim/synthetic.js';
import { fastSimConfig } from '../../helpers/run-setup.js';
import { createBucket, createTopic, kafkaClient, newProducer, produce, runId, s3Client } from './services.js';

export interface Produced {
  goodIds: string[];
  /** message keys of the bad messages (their record ids or stand-ins) */
  badKeys: string[];
  total: number;
}

export interface KafkaFixture {
  id: string;
  topic: string;
  dlq: string;
  events: string;
  group: string;
  bucket: string;
  kafka: Kafka;
  admin: Admin;
  s3: S3Client;
  store: S3ObjectStore;
  produced: Produced;
  /** `single`: one juror, no phase 2 — keeps long protocol tests CPU-light on a shared box */
  config(dir: string, kafka?: Record<string, unknown>, latency?: unknown, jury?: 'single'): string;
  args(config: string, extra?: string[]): string[];
  manifests(): Promise<number>;
  cleanup(): Promise<void>;
}

/** Bad messages, one kind per index: not JSON, not UTF-8, no value, valid JSON but not a record. */
function badMessage(i: number): { key: string; value: string | Buffer | null } {
  const key = `bad-${i}`;
  switch (i % 4) {
    case 0:
      return { key, value: `{"id": "${key}", "problem": ` };
    case 1:
      return { key, value: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) };
    case 2:
      return { key, value: null };
    default:
      return { key, value: JSON.stringify({ id: key, problem: 'no trace and no steps' }) };
  }
}

export async function kafkaFixture(name: string, opts: { records: number; bad: number; partitions?: number }): Promise<KafkaFixture> {
  const id = runId();
  const kafka = kafkaClient();
  const admin = kafka.admin();
  await admin.connect();
  const topic = `rjt-${name}-${id}`;
  const dlq = `${topic}-dlq`;
  const events = `${topic}-events`;
  await createTopic(admin, topic, opts.partitions ?? 4);
  await createTopic(admin, dlq, 1);
  await createTopic(admin, events, 1);
  const s3 = s3Client();
  const bucket = await createBucket(s3, name);
  const store = new S3ObjectStore(createS3Client({}), { bucket, prefix: 'out' });

  const good = syntheticRecords(opts.records - opts.bad, { seed: 4242, prefix: `${name}${id}` });
  const messages: Array<{ key: string; value: string | Buffer | null; headers?: Record<string, string> }> = good.map((r, i) => ({
    key: r.id,
    value: JSON.stringify(r),
    ...(i % 10 === 0 ? { headers: { 'trace-origin': `batch-${i % 3}` } } : {}),
  }));
  const badKeys: string[] = [];
  for (let i = 0; i < opts.bad; i++) {
    const m = badMessage(i);
    badKeys.push(m.key);
    messages.splice(Math.floor(((i + 0.5) * messages.length) / opts.bad), 0, m);
  }
  const producer = await newProducer(kafka);
  await produce(producer, topic, messages);
  await producer.disconnect();

  const group = `rjt-${name}-group-${id}`;
  return {
    id,
    topic,
    dlq,
    events,
    group,
    bucket,
    kafka,
    admin,
    s3,
    store,
    produced: { goodIds: good.map((r) => r.id), badKeys, total: messages.length },
    config: (dir, k = {}, latency = 0, jury) =>
      fastSimConfig(
        dir,
        {
          kafka: { group_id: group, session_timeout_ms: 6000, heartbeat_interval_ms: 500, rebalance_timeout_ms: 15000, flush_idle_ms: 500, dlq_topic: dlq, events_topic: events, ...k },
          ...(jury === 'single' ? { mode: 'single', jurors: [{ id: 'jury-0', endpoint: 'sim', model: 'sim-juror-a' }] } : {}),
        },
        { latency_ms: latency },
      ),
    args: (config, extra = []) => ['run', '--config', config, '--input', `kafka://${topic}`, '--out', `s3://${bucket}/out`, '--until-caught-up', '--progress', 'none', ...extra],
    manifests: async () => (await store.list('_commits/').catch(() => [])).length,
    cleanup: async () => {
      await admin.deleteTopics({ topics: [topic, dlq, events] }).catch(() => undefined);
      await admin.deleteGroups([group]).catch(() => undefined);
      await admin.disconnect();
      const { dropBucket } = await import('./services.js');
      await dropBucket(s3, bucket);
      s3.destroy();
    },
  };
}

/** Every message offset below the group's committed offset must be inside some committed range. */
export async function offsetsBehindShards(f: KafkaFixture): Promise<string[]> {
  const problems: string[] = [];
  const [t] = await f.admin.fetchOffsets({ groupId: f.group, topics: [f.topic] });
  const manifests = await listCommitted(f.store);
  for (const p of t?.partitions ?? []) {
    const committed = Number(p.offset);
    if (committed <= 0) continue;
    const unit = `${f.topic}+${p.partition}`;
    const spans = manifests
      .flatMap((m) => (m.range ? [m.range] : []))
      .filter((r) => r.unit === unit)
      .map((r) => [r.first_offset, r.last_offset] as const)
      .sort((a, b) => a[0] - b[0]);
    // The topic has no transactions or compaction: offsets 0..n-1 are all messages.
    let next = 0;
    for (const [a, b] of spans) if (a <= next) next = Math.max(next, b + 1);
    if (next < committed) problems.push(`${unit}: group committed ${committed} but shards cover only up to ${next - 1}`);
  }
  return problems;
}
