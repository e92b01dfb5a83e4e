/**
 * The one value that travels through the stage: a record's envelope. Its type says how far the
 * record has come, and each step adds one field:
 *
 *   Admitted   (intake: mapped and validated)      + record
 *   Segmented  (steps/segment.ts)                  + input    what the jury reads
 *   Judged     (steps/judge.ts)                    + verdict
 *   Derived    (steps/derive.ts; taxonomy and repair refine it)  + rows   the shard tables' rows
 *   Dead       whichever step could not go on: the record leaves as this dead letter
 *
 * A step declares the envelope it needs and the one it returns (`Step<Needs, Gives>`), and a
 * `StepChain` accepts a step only after one that gives what it needs: the order is checked by
 * the compiler, so no step has to assert that a field is there. The range writer stores either
 * a Derived record's rows or a Dead one's dead letter, so every record that entered leaves one
 * way or the other.
 */
import { type DeadLetterRow, truncateRaw } from '../../schemas/outputs.js';
import type { SourcePosition, TraceRecord } from '../../schemas/trace.js';
import type { Verdict } from '../../schemas/verdict.js';
import type { DerivedRows } from '../derive/rows.js';
import type { JudgeInput } from '../jury/judge.js';
import { isEndpointOutage } from '../llm/outage.js';
import type { SourceItem } from './source.js';

interface Carried {
  position: SourcePosition;
  /** the item as the source read it (parsed row, or why it could not be parsed) */
  item: SourceItem;
}

/** A record that passed intake (map + validate) and goes on to the steps. */
export interface Admitted extends Carried {
  record: TraceRecord;
  dead?: undefined;
}

export interface Segmented extends Admitted {
  /** what the jury reads: the record's steps per the configured segmentation */
  input: JudgeInput;
}

export interface Judged extends Segmented {
  verdict: Verdict;
}

export interface Derived extends Judged {
  /** the shard tables' rows for this record */
  rows: DerivedRows;
}

/** A record leaving as a dead letter, with whatever it had gained before (read only for its log line). */
export interface Dead extends Carried, Partial<Pick<Derived, 'record' | 'input' | 'verdict' | 'rows'>> {
  dead: DeadLetterRow;
}

/** How a record leaves the steps: its rows, or its dead letter. */
export type Finished = Derived | Dead;

/** Any envelope, at whatever point it is. */
export type Envelope = Admitted | Segmented | Judged | Derived | Dead;

/** A dead letter for this envelope's position; `rawText` is cut to the shard column's limit. */
export function deadLetter(position: SourcePosition, error: string, rawText: string, truncated = false): DeadLetterRow {
  const t = truncateRaw(rawText);
  return { source: position.source, source_unit: position.unit, source_offset: position.offset, error, raw: t.raw, raw_truncated: truncated || t.raw_truncated };
}

/** The envelope leaving as a dead letter, with the record (or the raw row) kept as its text. */
export function fail(env: Envelope, error: string, rawText: string): Dead {
  return { ...env, dead: deadLetter(env.position, error, rawText) };
}

/**
 * One small piece of work on a record (segment, judge, derive, assign taxonomy...): it needs
 * an envelope that has come at least as far as `Needs`, and returns one that has come as far as
 * `Gives`, or a dead letter. `run` is a property, not a method, so TypeScript checks the
 * envelope it takes strictly (a method parameter would be accepted in either direction).
 */
export interface Step<Needs extends Admitted, Gives extends Needs> {
  readonly name: string;
  readonly run: (env: Needs) => Gives | Dead | Promise<Gives | Dead>;
}

/** A step of a chain once its types have been checked: what `runSteps` runs. */
type AnyStep = Step<Admitted, Admitted>;

/**
 * The steps after intake, in order, built one `then` at a time: `then` takes only a step whose
 * needs the chain so far gives, so `deriveStep` before `judgeStep` does not compile.
 */
export class StepChain<Start extends Admitted, End extends Start> {
  private constructor(readonly steps: readonly AnyStep[]) {}

  /** The empty chain: records come out as they went in. */
  static from<S extends Admitted>(): StepChain<S, S> {
    return new StepChain<S, S>([]);
  }

  then<Next extends End>(step: Step<End, Next>): StepChain<Start, Next> {
    return new StepChain<Start, Next>([...this.steps, step as unknown as AnyStep]);
  }

  /** A step that refines what the chain gives without adding to it (taxonomy, repair), when configured. */
  thenIf(step: Step<End, End> | null): StepChain<Start, End> {
    return step ? this.then(step) : this;
  }

  get names(): string[] {
    return this.steps.map((s) => s.name);
  }

  /** Runs the record through every step (see `runSteps`). */
  run(start: Start): Promise<End | Dead> {
    return runSteps(this.steps, start) as Promise<End | Dead>;
  }
}

/**
 * Runs the steps in order until one returns a dead letter. A step that throws is a bug, not bad
 * input; the record must not be lost to it, so it leaves as a dead letter that says so. The
 * exception is an endpoint outage that outlasted the run's limit: the record was never judged,
 * so it is thrown on and the stage stops without committing it.
 */
async function runSteps(steps: readonly AnyStep[], start: Admitted): Promise<Admitted | Dead> {
  let env: Admitted | Dead = start;
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
