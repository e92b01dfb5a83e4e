/**
 * The `kafka:` section of the config. Secrets are named, never given: SASL credentials come
 * from the environment variables listed here, as endpoint API keys do.
 */
import { z } from 'zod';

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');

export const KafkaConfig = z
  .object({
    brokers: z.array(z.string().min(1)).min(1).optional().describe('`host:port` list. Absent: `$KAFKA_BROKERS` (comma-separated).'),
    client_id: z.string().min(1).default('reasoning-jury').describe('Kafka client id (shows in broker logs and quotas).'),
    group_id: z.string().min(1).default('reasoning-jury').describe('Consumer group: instances with the same group share the partitions. `kafka://topic?group=...` overrides.'),
    topics: z.array(z.string().min(1)).default([]).describe('Input topics; `--input kafka://a,b` overrides.'),
    from_beginning: z.boolean().default(true).describe('A new group starts at the earliest offset (`true`) or only sees new messages (`false`).'),
    session_timeout_ms: z.int().min(1000).default(30_000).describe('A consumer that sends no heartbeat for this long leaves the group and its partitions are reassigned.'),
    heartbeat_interval_ms: z.int().min(100).default(3_000).describe('How often the consumer heartbeats; must be lower than `session_timeout_ms`.'),
    rebalance_timeout_ms: z.int().min(1000).default(60_000).describe('How long the group waits for its members to rejoin during a rebalance.'),
    max_wait_ms: z.int().positive().default(500).describe('Longest a fetch waits for data; also how quickly a paused consumer notices a rebalance.'),
    max_bytes_per_partition: z.int().positive().default(512 * 1024).describe('Fetch size per partition in bytes; also the most the buffer can overshoot by.'),
    max_buffered_messages: z.int().positive().default(1000).describe('Pause fetching when this many messages wait in the buffer (or `max_buffered_mb` is reached); resume once drained to half.'),
    max_buffered_mb: z.number().positive().default(16).describe('Pause fetching when this many MB wait in the buffer (or `max_buffered_messages` is reached); resume once drained to half.'),
    flush_idle_ms: z.int().nonnegative().default(5_000).describe('Commit a partition\'s partial range after it has been caught up and quiet this long (0: never).'),
    max_message_mb: z.number().positive().default(16).describe('A message value bigger than this becomes a dead letter.'),
    events_topic: z.string().min(1).optional().describe('Topic for one compact JSON verdict event per record, keyed by record id; absent: no events.'),
    dlq_topic: z.string().min(1).optional().describe('Topic for records that could not be judged (original value + error headers); absent: dead letters go to the shards only.'),
    ssl: z.boolean().default(false).describe('Connect to the brokers over TLS.'),
    sasl: z
      .object({
        mechanism: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']).describe('SASL mechanism.'),
        username_env: envName.describe('Name of the environment variable holding the SASL user name.'),
        password_env: envName.describe('Name of the environment variable holding the SASL password.'),
      })
      .strict()
      .optional()
      .describe('SASL authentication; absent: none. The credentials themselves come from the environment.'),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.heartbeat_interval_ms >= c.session_timeout_ms) ctx.addIssue({ code: 'custom', path: ['heartbeat_interval_ms'], message: 'must be lower than session_timeout_ms' });
  })
  .describe('Kafka input and outputs (docs/kafka-s3.md). Operational: not part of config_hash.');
export type KafkaConfig = z.infer<typeof KafkaConfig>;
export type KafkaConfigInput = z.input<typeof KafkaConfig>;
