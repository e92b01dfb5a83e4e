/**
 * Intake: a source item becomes an envelope with a validated record, or a dead letter. It runs
 * when the record is pulled, before the others, because the record's input size decides which
 * range it falls in (src/pipeline/range-planner.ts).
 */
import type { FieldMapping, TraceRecord } from '../../../schemas/trace.js';
import { deadLetter, type Envelope } from '../envelope.js';
import { mapSourceItem } from '../record-mapping.js';
import type { SourceItem } from '../source.js';

export interface Intake {
  env: Envelope;
  /** input size for range rotation: deterministic from the input, cheap to compute */
  chars: number;
}

function recordChars(r: TraceRecord): number {
  return r.problem.length + (r.trace?.length ?? 0) + (r.steps?.reduce((a, s) => a + s.length, 0) ?? 0) + (r.final_solution?.length ?? 0);
}

export function intake(item: SourceItem, mapping: FieldMapping): Intake {
  const mapped = mapSourceItem(item, mapping);
  if (!mapped.ok) {
    const dead = deadLetter(item.position, mapped.error, mapped.rawText, mapped.rawTextTruncated);
    return { env: { position: item.position, item, dead }, chars: mapped.rawText.length };
  }
  const record = mapped.record;
  // Connector facts (Kafka topic, offset, headers) go under the record's own meta fields.
  if (item.ok && item.meta) record.meta = { ...item.meta, ...record.meta };
  return { env: { position: item.position, item, record }, chars: recordChars(record) };
}
