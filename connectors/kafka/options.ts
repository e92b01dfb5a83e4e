/** Kafka URL and broker helpers; the `kafka:` config section itself is schemas/kafka.ts. */
import type { KafkaConfig } from '../../schemas/kafka.js';

/** `kafka://topic1,topic2?group=g` -> topics and an optional group override. */
export function parseKafkaUrl(url: string): { topics: string[]; group?: string } {
  const m = /^kafka:\/\/([^?]*)(?:\?(.*))?$/.exec(url);
  if (!m) throw new Error(`invalid Kafka input ${JSON.stringify(url)}: expected kafka://<topic>[,<topic>...][?group=<group id>]`);
  const topics = (m[1] ?? '').split(',').filter((t) => t.length > 0);
  for (const t of topics) {
    // Kafka's own rule; '+' never appears, which keeps "<topic>+<partition>" unambiguous.
    if (!/^[A-Za-z0-9._-]{1,249}$/.test(t)) throw new Error(`invalid Kafka topic name ${JSON.stringify(t)} in ${url}`);
  }
  const params = new URLSearchParams(m[2] ?? '');
  for (const k of params.keys()) if (k !== 'group') throw new Error(`unknown parameter "${k}" in ${url} (known: group)`);
  const group = params.get('group') ?? undefined;
  return { topics, ...(group ? { group } : {}) };
}

/** Brokers from the config, else $KAFKA_BROKERS; a clear error when neither is set. */
export function resolveBrokers(cfg: Pick<KafkaConfig, 'brokers'>, env: NodeJS.ProcessEnv = process.env): string[] {
  const brokers = cfg.brokers ?? (env.KAFKA_BROKERS ?? '').split(',').map((b) => b.trim()).filter(Boolean);
  if (brokers.length === 0) throw new Error('no Kafka brokers: set kafka.brokers in the config or KAFKA_BROKERS=host:port[,host:port]');
  return brokers;
}
