// What the Kafka source tells metrics and probes (Source.connected / Source.lag), on the real
// broker: not connected before its group assignment, per-partition lag = log end − group offset,
// moving when offsets are committed, and not connected once closed.
import { lineLogger } from '../../src/util/log.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createKafkajs, KafkajsConsumer } from '../../connectors/kafka/kafkajs-client.js';
import { KafkaSource } from '../../connectors/kafka/source.js';
import { KafkaConfig } from '../../schemas/kafka.js';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { waitForProgress } from '../helpers/progress.js';
import { tempDir } from '../helpers/run-setup.js';
import { createTopic, ensureServices, groupOffsets, kafkaClient, newProducer, runId } from './helpers/services.js';

ensureServices();

describe('Kafka source lag and connection', () => {
  const kafka = kafkaClient();
  const admin = kafka.admin();
  afterAll(() => admin.disconnect());

  it('reports log end minus the group offset per assigned partition', async () => {
    await admin.connect();
    const topic = `rjt-lag-${runId()}`;
    const group = `${topic}-group`;
    await createTopic(admin, topic, 2);
    const producer = await newProducer(kafka);
    const msgs = (n: number, partition: number) => Array.from({ length: n }, (_, i) => ({ key: `k${partition}-${i}`, value: `{"id":"r${partition}-${i}"}`, partition }));
    await producer.send({ topic, acks: -1, messages: [...msgs(30, 0), ...msgs(10, 1)] });
    await producer.disconnect();

    const cfg = KafkaConfig.parse({ brokers: process.env.KAFKA_BROKERS!.split(','), group_id: group, from_beginning: true });
    const consumer = new KafkajsConsumer(createKafkajs(cfg, lineLogger(() => undefined)), cfg, [topic], group);
    const source = new KafkaSource({ consumer, topics: [topic], store: new LocalObjectStore(tempDir('lag')), maxBufferedMessages: 1000, maxBufferedBytes: 64 << 20, flushIdleMs: 0, maxMessageBytes: 1 << 20 });
    expect(source.connected()).toBe(false);
    expect(source.lag()).toEqual([]);
    await source.start();
    try {
      const items = source[Symbol.asyncIterator]();
      for (let i = 0; i < 40; i++) await items.next();
      expect(source.connected()).toBe(true);
      const byUnit = () => Object.fromEntries(source.lag().map((l) => [l.unit, l.lag]));
      // Read is not committed: everything is still lag.
      expect(byUnit()).toEqual({ [`${topic}+0`]: 30, [`${topic}+1`]: 10 });
      await source.acknowledge([{ unit: `${topic}+0`, next: 20 }]);
      await waitForProgress(async () => ({ done: (await groupOffsets(admin, group, topic)).get(0) === 20, progress: 0 }), { what: 'the group offset' });
      expect(byUnit()).toEqual({ [`${topic}+0`]: 10, [`${topic}+1`]: 10 });
    } finally {
      await source.close();
    }
    expect(source.connected()).toBe(false);
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  });
});
