/**
 * The one value that travels through the stage: a record's envelope. It is created from a
 * source item at intake and each step fills one more field; whichever step fails sets `dead`
 * and the later steps pass it through untouched. The range writer stores either its rows or
 * its dead letter, so every record that entered leaves one way or the other.
 *
 * A step (./steps/) takes the envelope and returns it with its own field filled, or with `dead`
 * set; `runSteps` runs them in order.
 */
import { type DeadLetterRow, truncateRaw } from '../../schemas/outputs.js';
import type { SourcePosition, TraceRecord } from '../../schemas/trace.js';
import type { Verdict } from '../../schemas/verdict.js';
import type { DerivedRows } from '../derive/rows.js';
import type { JudgeInput } from '../jury/judge.js';
import { isEndpointOutage } from '../llm/outage.js';
import type { SourceItem } from './source.js';

export interface Envelope {
  position: SourcePosition;
  /** the item as the source read it (parsed row, or why it could not be parsed) */
  item: SourceItem;
  /** after map + validate */
  record?: TraceRecord;
  /** after segmentation: what the jury reads */
  input?: JudgeInput;
  verdict?: Verdict;
  /** the four shard tables' rows for this record */
  rows?: DerivedRows;
  /** set by the step that could not go on: the record leaves as this dead letter */
  dead?: DeadLetterRow;
}

/** A dead letter for this envelope's position; `rawText` is cut to the shard column's limit. */
export function deadLetter(position: SourcePosition, error: string, rawText: string, truncated = false): DeadLetterRow {
  const t = truncateRaw(rawText);
  return { source: position.source, source_unit: position.unit, source_offset: position.offset, error, raw: t.raw, raw_truncated: truncated || t.raw_truncated };
}

/** The envelope leaving as a dead letter, with the record (or the raw row) kept as its text. */
export function fail(env: Envelope, error: string, rawText: string): Envelope {
  return { ...env, dead: deadLetter(env.position, error, rawText) };
}

/**
 * One small piece of work on a record (segment, judge, derive, assign taxonomy...). A step
 * takes the envelope and returns it with its own field filled, or with `dead` set.
 */
export interface PipelineStep {
  readonly name: string;
  run(env: Envelope): Envelope | Promise<Envelope>;
}

/**
 * Runs the steps in order until one sets `dead`. A step that throws is a bug, not bad input;
 * the record must not be lost to it, so it leaves as a dead letter that says so. The exception
 * is an endpoint outage that outlasted the run's limit: the record was never judged, so it is
 * thrown on and the stage stops without committing it.
 */
export async function runSteps(steps: readonly PipelineStep[], start: Envelope): Promise<Envelope> {
  let env = start;
  for (const step of steps) {
    if (env.dead) return env;
    try {
      env = await step.run(env);
    } catch (err) {
      if (isEndpointOutage(err)) throw err;
      return fail(env, `internal error while judging: ${(err as Error).message}`, JSON.stringify(env.record));
    }
  }
  return env;
}
