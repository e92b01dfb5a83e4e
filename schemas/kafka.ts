/**
 * The `kafka:` section of the config. Secrets are named, never given: SASL credentials come
 * from the environment variables listed here, as endpoint API keys do.
 */
import { z } from 'zod';

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');

export const KafkaConfig = z
  .object({
    /** host:port list. Default: $KAFKA_BROKERS (comma-separated). */
    brokers: z.array(z.string().min(1)).min(1).optional(),
    client_id: z.string().min(1).default('reasoning-jury'),
    /** Consumer group: instances with the same group share the partitions. */
    group_id: z.string().min(1).default('reasoning-jury'),
    /** Input topics; `--input kafka://a,b` overrides. */
    topics: z.array(z.string().min(1)).default([]),
    /** A new group starts at the earliest offset (true) or only sees new messages (false). */
    from_beginning: z.boolean().default(true),
    session_timeout_ms: z.int().min(1000).default(30_000),
    heartbeat_interval_ms: z.int().min(100).default(3_000),
    rebalance_timeout_ms: z.int().min(1000).default(60_000),
    /** Longest a fetch waits for data; also how quickly a paused consumer notices a rebalance. */
    max_wait_ms: z.int().positive().default(500),
    /** Fetch size per partition; also the most the buffer can overshoot by. */
    max_bytes_per_partition: z.int().positive().default(512 * 1024),
    /** Pause fetching when this many messages, or this many MB, wait in the buffer. */
    max_buffered_messages: z.int().positive().default(1000),
    max_buffered_mb: z.number().positive().default(16),
    /** Commit a partition's partial range after it has been caught up and quiet this long (0: never). */
    flush_idle_ms: z.int().nonnegative().default(5_000),
    /** A message value bigger than this becomes a dead letter. */
    max_message_mb: z.number().positive().default(16),
    /** Optional topic for one compact JSON verdict event per record, keyed by record id. */
    events_topic: z.string().min(1).optional(),
    /** Optional topic for records that could not be judged: original value + error headers. */
    dlq_topic: z.string().min(1).optional(),
    ssl: z.boolean().default(false),
    sasl: z
      .object({
        mechanism: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']),
        username_env: envName,
        password_env: envName,
      })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.heartbeat_interval_ms >= c.session_timeout_ms) ctx.addIssue({ code: 'custom', path: ['heartbeat_interval_ms'], message: 'must be lower than session_timeout_ms' });
  });
export type KafkaConfig = z.infer<typeof KafkaConfig>;
export type KafkaConfigInput = z.input<typeof KafkaConfig>;
