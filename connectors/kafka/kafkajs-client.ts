/**
 * The kafkajs implementation of port.ts. Deliberately thin: it only translates types and
 * events; every decision (what to pause, when to commit, what a revocation means) is made in
 * source.ts against the port, so another client library can replace this file alone.
 */
import { Kafka, logLevel, Partitioners, type Admin, type Consumer, type IHeaders, type LogEntry, type Producer, type SASLOptions } from 'kafkajs';
import { addLogSecrets, type LogFields, type Logger, type LogLevel } from '../../src/util/log.js';
import { createRedactor } from '../../src/util/redact.js';
import { limitedLog, type LimitedLog } from '../../src/util/repeat-limiter.js';
import type { KafkaConfig } from '../../schemas/kafka.js';
import { skipIdleRequestQueueTimer } from './idle-timer.js';
import { resolveBrokers } from './options.js';
import type { ConsumerHandlers, InBatch, KafkaConsumerPort, KafkaProducerPort, OutMessage, PartitionOffsets, TopicPartition } from './port.js';

/** kafkajs' level labels as our level names (kafkajs NOTHING never reaches a log creator). */
const LEVELS: Record<string, LogLevel> = { ERROR: 'error', WARN: 'warn', INFO: 'info', DEBUG: 'debug' };

/** One kafkajs log entry as an event of ours: named level, `kafka.<namespace>` component. */
export interface KafkaLogEvent {
  level: LogLevel;
  /** the namespace kafkajs gives (Connection, BrokerPool, Consumer, ...) */
  namespace: string;
  msg: string;
  fields: LogFields;
  /** identical entries share it: what the repeat limiter counts */
  key: string;
}

/**
 * Group membership going through its protocol, which kafkajs logs as errors or warnings though
 * nothing is wrong: a rebalance answers heartbeats, commits and fetches with "rebalancing", an
 * older generation's request is refused, the coordinator moved or is loading. The consumer
 * rejoins by itself; these are info, so an error alert means something a person must look at.
 */
const GROUP_CHURN = [
  'The group is rebalancing',
  'Specified group generation id is not valid',
  'The coordinator is not aware of this member',
  'This is not the correct coordinator for this group',
  "The coordinator is loading and hence can't process requests",
];

const isGroupChurn = (text: string): boolean => GROUP_CHURN.some((m) => text.includes(m));

export function kafkaLogEvent(e: LogEntry, withStack = false): KafkaLogEvent {
  const { message, error, broker, groupId, topic, partition, stack } = e.log as Record<string, unknown>;
  const named = LEVELS[e.label] ?? (e.level <= logLevel.ERROR ? 'error' : e.level === logLevel.WARN ? 'warn' : e.level === logLevel.INFO ? 'info' : 'debug');
  const namespace = e.namespace || 'kafkajs';
  const msg = `${String(message ?? '')}${typeof error === 'string' && error && !String(message).includes(error) ? ` (${error})` : ''}`;
  const level = (named === 'error' || named === 'warn') && isGroupChurn(msg) ? 'info' : named;
  const fields: LogFields = {
    ...(typeof broker === 'string' ? { endpoint: broker } : {}),
    ...(groupId !== undefined ? { group: groupId } : {}),
    ...(topic !== undefined ? { topic } : {}),
    ...(partition !== undefined ? { partition } : {}),
    ...(withStack && typeof stack === 'string' ? { stack } : {}),
  };
  return { level, namespace, msg, fields, key: `${level} ${namespace} ${msg} ${String(broker ?? '')}` };
}

/**
 * kafkajs' logCreator: every entry through our logger, redacted, with repeats of an identical
 * entry (a broker that refuses connections is retried many times a second) held back and
 * summarised by `limited`.
 */
export function kafkaLogCreator(log: Logger, limited: LimitedLog, redact: (s: string) => string = (s) => s): () => (e: LogEntry) => void {
  return () => (e: LogEntry) => {
    const ev = kafkaLogEvent(e, log.enabled('debug'));
    const child = log.child(ev.namespace);
    limited.write(ev.level, ev.key, redact(ev.msg), ev.fields, child);
  };
}

/** A kafkajs client from the config; SASL credentials are read from the named env variables. */
export function createKafkajs(cfg: KafkaConfig, log: Logger, env: NodeJS.ProcessEnv = process.env): Kafka {
  let sasl: SASLOptions | undefined;
  const secrets: string[] = [];
  if (cfg.sasl) {
    const username = env[cfg.sasl.username_env];
    const password = env[cfg.sasl.password_env];
    if (!username || !password) throw new Error(`kafka.sasl needs the environment variables ${cfg.sasl.username_env} and ${cfg.sasl.password_env} to be set`);
    secrets.push(password);
    sasl = { mechanism: cfg.sasl.mechanism, username, password } as SASLOptions;
  }
  const redact = createRedactor(env, secrets);
  // The password's variable can have any name: every other event of this thread hides it too.
  addLogSecrets(secrets);
  skipIdleRequestQueueTimer();
  return new Kafka({
    clientId: cfg.client_id,
    brokers: resolveBrokers(cfg, env),
    ssl: cfg.ssl,
    ...(sasl ? { sasl } : {}),
    retry: { retries: 8, initialRetryTime: 200 },
    // kafkajs' info lines (joins, commits) only with --debug; its debug level is a protocol dump.
    logLevel: log.enabled('debug') ? logLevel.INFO : logLevel.WARN,
    logCreator: kafkaLogCreator(log, limitedLog(log), redact.text),
  });
}

function offsetNumber(s: string, what: string): number {
  const n = Number(s);
  if (!Number.isSafeInteger(n)) throw new Error(`${what} ${s} is beyond 2^53`);
  return n;
}

function headerStrings(h: IHeaders | undefined): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(h ?? {})) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.map((x) => x.toString()) : v.toString();
  }
  return out;
}

const flatten = (a: Record<string, number[]>): TopicPartition[] => Object.entries(a).flatMap(([topic, ps]) => ps.map((partition) => ({ topic, partition })));

const byTopic = (tps: TopicPartition[]) => {
  const m = new Map<string, number[]>();
  for (const tp of tps) m.set(tp.topic, [...(m.get(tp.topic) ?? []), tp.partition]);
  return [...m].map(([topic, partitions]) => ({ topic, partitions }));
};

export class KafkajsConsumer implements KafkaConsumerPort {
  private readonly consumer: Consumer;
  private admin: Admin | undefined;
  /**
   * What this adapter paused, by unit. kafkajs keeps a pause per partition across assignments:
   * a partition revoked while paused and assigned again later would never be fetched, so the
   * pauses of revoked partitions are dropped at each join.
   */
  private readonly pausedHere = new Map<string, TopicPartition>();

  constructor(
    private readonly kafka: Kafka,
    private readonly cfg: KafkaConfig,
    private readonly topics: string[],
    private readonly groupId: string,
  ) {
    this.consumer = kafka.consumer({
      groupId,
      sessionTimeout: cfg.session_timeout_ms,
      heartbeatInterval: cfg.heartbeat_interval_ms,
      rebalanceTimeout: cfg.rebalance_timeout_ms,
      maxBytesPerPartition: cfg.max_bytes_per_partition,
      maxWaitTimeInMs: cfg.max_wait_ms,
      allowAutoTopicCreation: false,
    });
  }

  async start(h: ConsumerHandlers): Promise<void> {
    const c = this.consumer;
    c.on(c.events.REBALANCING, () => h.onRebalancing());
    c.on(c.events.GROUP_JOIN, (e) => {
      const assignment = flatten(e.payload.memberAssignment);
      this.forgetRevoked(assignment);
      h.onAssigned(assignment);
    });
    c.on(c.events.CRASH, (e) => {
      if (!e.payload.restart) h.onCrash(e.payload.error);
    });
    await c.connect();
    await c.subscribe({ topics: this.topics, fromBeginning: this.cfg.from_beginning });
    await c.run({
      autoCommit: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: async ({ batch, isStale }) => {
        // Fetched before a seek: its messages are not the ones asked for.
        if (isStale()) return;
        const b: InBatch = {
          topic: batch.topic,
          partition: batch.partition,
          fetchedOffset: offsetNumber((batch as unknown as { fetchedOffset: string }).fetchedOffset, 'offset'),
          highWatermark: offsetNumber(batch.highWatermark, 'high watermark'),
          messages: batch.messages.map((m) => ({
            offset: offsetNumber(m.offset, 'offset'),
            key: m.key,
            value: m.value,
            headers: headerStrings(m.headers),
            timestamp: Number(m.timestamp),
          })),
        };
        await h.onBatch(b);
      },
    });
  }

  pause(tps: TopicPartition[]): void {
    for (const tp of tps) this.pausedHere.set(`${tp.topic}+${tp.partition}`, tp);
    if (tps.length) this.consumer.pause(byTopic(tps));
  }

  resume(tps: TopicPartition[]): void {
    for (const tp of tps) this.pausedHere.delete(`${tp.topic}+${tp.partition}`);
    if (tps.length) this.consumer.resume(byTopic(tps));
  }

  private forgetRevoked(assignment: TopicPartition[]): void {
    const kept = new Set(assignment.map((tp) => `${tp.topic}+${tp.partition}`));
    const revoked = [...this.pausedHere].filter(([unit]) => !kept.has(unit)).map(([, tp]) => tp);
    this.resume(revoked);
  }

  seek(tp: TopicPartition, offset: number): void {
    this.consumer.seek({ topic: tp.topic, partition: tp.partition, offset: String(offset) });
  }

  async commit(offsets: Array<TopicPartition & { offset: number }>): Promise<void> {
    if (offsets.length) await this.consumer.commitOffsets(offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: String(o.offset) })));
  }

  async offsets(topics: string[]): Promise<PartitionOffsets[]> {
    if (!this.admin) {
      this.admin = this.kafka.admin();
      await this.admin.connect();
    }
    const admin = this.admin;
    const committed = new Map<string, number>();
    for (const t of await admin.fetchOffsets({ groupId: this.groupId, topics })) {
      for (const p of t.partitions) committed.set(`${t.topic}+${p.partition}`, Number(p.offset));
    }
    const out: PartitionOffsets[] = [];
    for (const topic of topics) {
      for (const p of await admin.fetchTopicOffsets(topic)) {
        out.push({ topic, partition: p.partition, committed: committed.get(`${topic}+${p.partition}`) ?? -1, low: Number(p.low), high: Number(p.high) });
      }
    }
    return out;
  }

  async stop(): Promise<void> {
    await this.admin?.disconnect().catch(() => undefined);
    await this.consumer.disconnect();
  }
}

/** Bytes per produce request: brokers refuse batches over max.message.bytes (1 MB default). */
const SEND_CHUNK_BYTES = 512 * 1024;

export class KafkajsProducer implements KafkaProducerPort {
  private producer: Producer | undefined;
  private connecting: Promise<void> | undefined;

  constructor(private readonly kafka: Kafka) {}

  private async ready(): Promise<Producer> {
    if (!this.producer) {
      const p = this.kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
      this.producer = p;
      this.connecting = p.connect();
    }
    await this.connecting;
    return this.producer;
  }

  async send(topic: string, messages: OutMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const p = await this.ready();
    let chunk: OutMessage[] = [];
    let bytes = 0;
    const flush = async () => {
      if (chunk.length) await p.send({ topic, acks: -1, messages: chunk.map((m) => ({ key: m.key, value: m.value, ...(m.headers ? { headers: m.headers } : {}) })) });
      chunk = [];
      bytes = 0;
    };
    for (const m of messages) {
      const size = (typeof m.value === 'string' ? Buffer.byteLength(m.value) : m.value.byteLength) + 256;
      if (bytes + size > SEND_CHUNK_BYTES) await flush();
      chunk.push(m);
      bytes += size;
    }
    await flush();
  }

  async close(): Promise<void> {
    if (this.producer) await this.producer.disconnect();
  }
}
