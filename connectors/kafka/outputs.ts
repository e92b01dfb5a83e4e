/**
 * Optional Kafka outputs of a committed range: one compact verdict event per record (keyed by
 * record id, so a compacted topic keeps the latest) and one dead-letter message per record
 * that could not be judged (the original value, key and headers, plus error headers).
 *
 * Both are sent before the range's manifest is written: a crash in between sends them again
 * on the rebuild (at least once; dedupe by key / by rj-source-* headers), never zero times.
 */
import type { DeadLetterRow, DecisionRow, StepRow, VerdictRow } from '../../schemas/outputs.js';
import type { CommitRequest, RangeSink } from '../../src/pipeline/sink.js';
import type { InMessage, KafkaProducerPort, OutMessage } from './port.js';

export interface KafkaOutputsOptions {
  eventsTopic?: string;
  dlqTopic?: string;
  /** the message behind a dead letter, when the source still holds it */
  original?: (unit: string, offset: number) => InMessage | undefined;
}

/**
 * Kafka refuses messages over the topic's max.message.bytes (1 MB by default): a bigger
 * original is cut to this many bytes and flagged, rather than blocking every commit after it.
 */
export const MAX_DLQ_VALUE_BYTES = 900 * 1024;

/** Header values stay short: a stack-length reason does not belong in a header. */
const MAX_HEADER_CHARS = 1000;
const cap = (s: string) => (s.length > MAX_HEADER_CHARS ? `${s.slice(0, MAX_HEADER_CHARS - 1)}…` : s);

export class KafkaOutputs implements RangeSink {
  events = 0;
  deadLetters = 0;

  constructor(
    private readonly producer: KafkaProducerPort,
    private readonly opts: KafkaOutputsOptions,
  ) {}

  get enabled(): boolean {
    return Boolean(this.opts.eventsTopic || this.opts.dlqTopic);
  }

  async publish(req: CommitRequest): Promise<void> {
    const range = `${req.first}-${req.last}`;
    if (this.opts.eventsTopic && req.tables.verdicts?.length) {
      const msgs = verdictEvents(req.tables.verdicts, req.tables.decisions ?? [], req.tables.steps ?? [], range);
      await this.producer.send(this.opts.eventsTopic, msgs);
      this.events += msgs.length;
    }
    if (this.opts.dlqTopic && req.tables.dead_letters?.length) {
      const msgs = req.tables.dead_letters.map((d) => this.deadLetterMessage(d, range));
      await this.producer.send(this.opts.dlqTopic, msgs);
      this.deadLetters += msgs.length;
    }
  }

  private deadLetterMessage(d: DeadLetterRow, range: string): OutMessage {
    const orig = this.opts.original?.(d.source_unit, d.source_offset);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(orig?.headers ?? {})) headers[k] = Array.isArray(v) ? v.join(',') : v;
    Object.assign(headers, {
      'rj-error': cap(d.error),
      'rj-source': d.source,
      'rj-source-unit': d.source_unit,
      'rj-source-offset': String(d.source_offset),
      'rj-range': range,
    });
    // Without the original bytes (a file or S3 input, or already released) the stored text is
    // the best there is; say so when it was cut.
    if (!orig) {
      headers['rj-value-from'] = 'dead-letter-text';
      if (d.raw_truncated) headers['rj-raw-truncated'] = 'true';
    }
    let value: Buffer | string = orig?.value ?? d.raw;
    const size = typeof value === 'string' ? Buffer.byteLength(value) : value.byteLength;
    if (size > MAX_DLQ_VALUE_BYTES) {
      value = (typeof value === 'string' ? Buffer.from(value) : value).subarray(0, MAX_DLQ_VALUE_BYTES);
      headers['rj-value-truncated'] = `${size}`;
    }
    return { key: orig?.key ? orig.key.toString('utf8') : null, value, headers };
  }
}

/** The verdict in one small JSON document; steps are reduced to the flagged indexes. */
export function verdictEvents(verdicts: readonly VerdictRow[], decisions: readonly DecisionRow[], steps: readonly StepRow[], range: string): OutMessage[] {
  const decisionOf = new Map(decisions.map((d) => [d.record_id, d]));
  const flagged = new Map<string, number[]>();
  for (const s of steps) {
    if (!s.label) continue;
    const list = flagged.get(s.record_id) ?? [];
    list.push(s.step_index);
    flagged.set(s.record_id, list);
  }
  return verdicts.map((v) => {
    const d = decisionOf.get(v.record_id);
    const event = {
      record_id: v.record_id,
      decision: d?.decision ?? null,
      reason: d?.reason ?? null,
      max_impact: v.max_impact,
      n_defects: v.n_defects,
      n_steps: v.n_steps,
      flagged_steps: flagged.get(v.record_id) ?? [],
      confidence: v.confidence,
      degraded: v.degraded,
      error: v.error,
      source: { name: v.source, unit: v.source_unit, offset: v.source_offset },
      prompt_hash: v.prompt_hash,
      config_hash: v.config_hash,
    };
    return { key: v.record_id, value: JSON.stringify(event), headers: { 'rj-range': range } };
  });
}
