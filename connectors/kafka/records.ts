/**
 * One Kafka message -> one SourceItem. The value must be a UTF-8 JSON document; anything else
 * becomes a dead letter with the reason and (the start of) the original bytes. Kafka facts go
 * to the record's meta under `kafka`.
 */
import { deadItem, formatLimit, formatSize, rawTextFromBytes, type SourceItem } from '../../src/pipeline/source.js';
import type { InMessage, TopicPartition } from './port.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function messageItem(tp: TopicPartition, msg: InMessage, limits: { maxMessageBytes: number; maxRawTextBytes: number }): SourceItem {
  const position = { source: 'kafka', unit: `${tp.topic}+${tp.partition}`, offset: msg.offset };
  const value = msg.value;
  if (!value) return deadItem(position, 'message has no value (a tombstone or null record)', { rawText: '', rawTextTruncated: false });
  if (value.byteLength > limits.maxMessageBytes) {
    return deadItem(position, `message value is ${formatSize(value.byteLength)}, over the ${formatLimit(limits.maxMessageBytes)} limit`, rawTextFromBytes(value, limits.maxRawTextBytes));
  }
  let text: string;
  try {
    text = utf8.decode(value);
  } catch {
    return deadItem(position, 'message value is not valid UTF-8', rawTextFromBytes(value, limits.maxRawTextBytes));
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return deadItem(position, `invalid JSON: ${(err as Error).message}`, rawTextFromBytes(value, limits.maxRawTextBytes));
  }
  const meta = { kafka: { topic: tp.topic, partition: tp.partition, offset: msg.offset, timestamp: msg.timestamp, key: msg.key?.toString('utf8') ?? null, headers: msg.headers } };
  return { position, ok: true, raw, meta };
}
