/**
 * `--input kafka://topics` as a source plus its sinks: the consumer-group source and, when
 * configured, the verdict-events and dead-letter topics. The caller runs the stage.
 */
import type { Kafka } from 'kafkajs';
import type { ObjectStore } from '../../src/pipeline/storage/object-store.js';
import type { RangeSink } from '../../src/pipeline/sink.js';
import { logger, type Logger } from '../../src/util/log.js';
import { createKafkajs, KafkajsConsumer, KafkajsProducer } from './kafkajs-client.js';
import { KafkaConfig, type KafkaConfigInput } from '../../schemas/kafka.js';
import { parseKafkaUrl, resolveBrokers } from './options.js';
import { KafkaOutputs } from './outputs.js';
import { KafkaSource } from './source.js';

/** A checked Kafka input: settings resolved, brokers reachable, topics present. */
export interface KafkaInput {
  cfg: KafkaConfig;
  topics: string[];
  group: string;
  kafka: Kafka;
  log: Logger;
}

/**
 * Resolves `kafka://...` against the config and checks the cluster before any work starts, so
 * a typo in a topic or an unreachable broker is one clear line, not a stack trace mid-run.
 */
export async function openKafkaInput(url: string, section: KafkaConfigInput | KafkaConfig | undefined, log: Logger = logger('kafka')): Promise<KafkaInput> {
  const cfg = KafkaConfig.parse(section ?? {});
  const parsed = parseKafkaUrl(url);
  const topics = parsed.topics.length ? parsed.topics : cfg.topics;
  if (topics.length === 0) throw new Error('no Kafka topics: give --input kafka://<topic>[,<topic>] or kafka.topics in the config');
  const brokers = resolveBrokers(cfg);
  const kafka = createKafkajs(cfg, log);
  const admin = kafka.admin();
  try {
    await admin.connect();
    const known = new Set(await admin.listTopics());
    const wanted = [...topics, ...(cfg.events_topic ? [cfg.events_topic] : []), ...(cfg.dlq_topic ? [cfg.dlq_topic] : [])];
    const missing = wanted.filter((t) => !known.has(t));
    if (missing.length) throw new Error(`Kafka topic(s) not found on ${brokers.join(',')}: ${missing.join(', ')} (create them first; topics are not auto-created)`);
  } catch (err) {
    const msg = (err as Error).message;
    throw new Error(msg.startsWith('Kafka topic') ? msg : `cannot reach Kafka at ${brokers.join(',')}: ${msg}`);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
  return { cfg, topics, group: parsed.group ?? cfg.group_id, kafka, log };
}

export interface KafkaSourceSetup {
  source: KafkaSource;
  sinks: RangeSink[];
  /** leaves the group (after committing what is due) and closes the producer */
  close(): Promise<void>;
}

/** The consumer-group source over `store`'s manifests, and the output topics as sinks. */
export function kafkaSourceSetup(input: KafkaInput, store: ObjectStore, opts: { untilCaughtUp: boolean; signal: AbortSignal; publishCommitted?: (manifestKey: string) => Promise<void> }): KafkaSourceSetup {
  const { cfg, topics, group, kafka, log } = input;
  const consumer = new KafkajsConsumer(kafka, cfg, topics, group);
  const producer = cfg.events_topic || cfg.dlq_topic ? new KafkajsProducer(kafka) : undefined;
  const source = new KafkaSource({
    consumer,
    topics,
    store,
    maxBufferedMessages: cfg.max_buffered_messages,
    maxBufferedBytes: cfg.max_buffered_mb * 1024 * 1024,
    flushIdleMs: cfg.flush_idle_ms,
    maxMessageBytes: cfg.max_message_mb * 1024 * 1024,
    untilCaughtUp: opts.untilCaughtUp,
    quietMs: Math.min(1000, Math.max(200, cfg.flush_idle_ms || 1000)),
    rebalanceWaitMs: cfg.rebalance_timeout_ms,
    stopTimeoutMs: cfg.session_timeout_ms + 10_000,
    signal: opts.signal,
    log,
    ...(opts.publishCommitted ? { publishCommitted: opts.publishCommitted } : {}),
  });
  const sinks: RangeSink[] = producer
    ? [
        new KafkaOutputs(producer, {
          ...(cfg.events_topic ? { eventsTopic: cfg.events_topic } : {}),
          ...(cfg.dlq_topic ? { dlqTopic: cfg.dlq_topic } : {}),
          original: (unit, offset) => source.original(unit, offset),
        }),
      ]
    : [];
  const close = async (): Promise<void> => {
    await source.close().catch((err: Error) => log.warn(`closing the consumer failed: ${err.message}`));
    await producer?.close().catch(() => undefined);
  };
  return { source, sinks, close };
}
