/**
 * Intake: a source item becomes an envelope with a validated record, or a dead letter. It runs
 * when the record is pulled, before the others, because the record's input size decides which
 * range it falls in (src/pipeline/range-planner.ts).
 */
import type { JuryConfig } from '../../../schemas/config.js';
import type { FieldMapping, TraceRecord } from '../../../schemas/trace.js';
import { deadLetter, type Envelope } from '../envelope.js';
import { mapSourceItem } from '../record-mapping.js';
import type { SourceItem } from '../source.js';

export interface IntakeSettings {
  /** where the record's fields live in the source rows */
  mapping: FieldMapping;
  /** a record's own steps list over this is a dead letter before it is parsed (segmentation.max_steps) */
  maxSteps: number;
}

export const intakeSettings = (config: Pick<JuryConfig, 'input' | 'segmentation'>): IntakeSettings => ({ mapping: config.input.mapping, maxSteps: config.segmentation.max_steps });

export interface Intake {
  env: Envelope;
  /** input size for range rotation: deterministic from the input, cheap to compute */
  chars: number;
}

function recordChars(r: TraceRecord): number {
  return r.problem.length + (r.trace?.length ?? 0) + (r.steps?.reduce((a, s) => a + s.length, 0) ?? 0) + (r.final_solution?.length ?? 0);
}

export function intake(item: SourceItem, settings: IntakeSettings): Intake {
  const mapped = mapSourceItem(item, settings.mapping, { maxSteps: settings.maxSteps });
  if (!mapped.ok) {
    const dead = deadLetter(item.position, mapped.error, mapped.rawText, mapped.rawTextTruncated);
    return { env: { position: item.position, item, dead }, chars: mapped.rawText.length };
  }
  const record = mapped.record;
  // Connector facts (Kafka topic, offset, headers) go under the record's own meta fields.
  if (item.ok && item.meta) record.meta = { ...item.meta, ...record.meta };
  return { env: { position: item.position, item, record }, chars: recordChars(record) };
}
