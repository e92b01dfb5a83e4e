/**
 * kafkajs re-armed its queue timer with a delay of -1 - Date.now() after every broker reply
 * (connectors/kafka/idle-timer.ts): an idle connection woke its process every millisecond and
 * Node 24+ printed TimeoutNegativeWarning. A client made the product's way must arm no timer
 * with a negative delay while it connects, asks, and disconnects.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKafkajs } from '../../connectors/kafka/kafkajs-client.js';
import { KafkaConfig } from '../../schemas/kafka.js';
import { lineLogger } from '../../src/util/log.js';
import { ensureServices } from './helpers/services.js';

const realSetTimeout = globalThis.setTimeout;
afterEach(() => {
  globalThis.setTimeout = realSetTimeout;
});

/** Delays below 0 that anything in this process passes to setTimeout from now on. */
function negativeDelays(): number[] {
  const seen: number[] = [];
  globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...rest: unknown[]) => {
    if (typeof ms === 'number' && ms < 0) seen.push(ms);
    return realSetTimeout(fn, ms, ...rest);
  }) as typeof setTimeout;
  return seen;
}

describe('kafkajs request queue', () => {
  beforeAll(() => void ensureServices());

  it('arms no timer with a negative delay while a client connects, fetches metadata and disconnects', async () => {
    const admin = createKafkajs(KafkaConfig.parse({ group_id: 'rj-idle-timer' }), lineLogger(() => undefined)).admin();
    const seen = negativeDelays();
    await admin.connect();
    for (let i = 0; i < 5; i++) await admin.listTopics();
    await admin.disconnect();
    globalThis.setTimeout = realSetTimeout;
    expect(seen).toEqual([]);
  });
});
