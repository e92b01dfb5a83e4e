/**
 * The little the Kafka connector needs from a client library. kafkajs-client.ts implements it
 * with kafkajs; another client (e.g. librdkafka bindings) only has to implement these calls.
 * Offsets are JS numbers: exact up to 2^53, far beyond any real partition.
 */

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface InMessage {
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, string | string[]>;
  /** broker or producer timestamp, ms since the epoch */
  timestamp: number;
}

/** One fetch's messages of one partition, in offset order. */
export interface InBatch {
  topic: string;
  partition: number;
  /**
   * Where the fetch started. Messages between it and the first message (control records,
   * aborted transactions, compacted-away records) do not exist for a consumer.
   */
  fetchedOffset: number;
  /** log end offset when fetched: offset of the next message to be written */
  highWatermark: number;
  messages: InMessage[];
}

export interface ConsumerHandlers {
  /** Called for each non-empty batch, one at a time; may await (the fetch loop waits). */
  onBatch(batch: InBatch): Promise<void>;
  /** The group began a rebalance: what is assigned may change. */
  onRebalancing(): void;
  /** A (re)join completed; the full new assignment. */
  onAssigned(assignment: TopicPartition[]): void;
  /** The consumer stopped for good on an error it could not recover from. */
  onCrash(err: Error): void;
}

export interface PartitionOffsets {
  topic: string;
  partition: number;
  /** next offset to read as committed by the group, or -1 when it has none */
  committed: number;
  /** earliest offset still in the log */
  low: number;
  /** log end offset */
  high: number;
}

export interface KafkaConsumerPort {
  /** Joins the group and starts fetching (auto-commit off; offsets reset to earliest). */
  start(handlers: ConsumerHandlers): Promise<void>;
  pause(tps: TopicPartition[]): void;
  resume(tps: TopicPartition[]): void;
  /** Fetch this partition from `offset` next; batches fetched before are not delivered. */
  seek(tp: TopicPartition, offset: number): void;
  /** Commits "next offset to read" per partition for the current group generation. */
  commit(offsets: Array<TopicPartition & { offset: number }>): Promise<void>;
  /** Committed offsets and watermarks, for lag and "caught up" checks. */
  offsets(topics: string[]): Promise<PartitionOffsets[]>;
  /** Leaves the group and disconnects. */
  stop(): Promise<void>;
}

export interface OutMessage {
  key: string | null;
  value: Buffer | string;
  headers?: Record<string, string>;
}

export interface KafkaProducerPort {
  /** Sends and waits for all in-sync replicas to have the messages. */
  send(topic: string, messages: OutMessage[]): Promise<void>;
  close(): Promise<void>;
}
