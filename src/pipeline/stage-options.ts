/** What the stage is given (./stage.ts `runStage`). */
import type { DuplicateIdPolicy } from '../../schemas/config.js';
import type { Logger } from '../util/log.js';
import type { Admitted, Derived, StepChain } from './envelope.js';
import type { IdentityOptions } from './input-identity.js';
import type { IntakeGate } from './intake-gate.js';
import type { RangeTiming } from './range-committer.js';
import type { RangeLimits } from './range-planner.js';
import type { IntakeSettings } from './record-mapping.js';
import type { ShardCommitter } from './commit/shard-commit.js';
import type { RangeSink } from './sink.js';
import type { CommittedRanges, Source } from './source.js';
import type { StageCounters } from './stage-counters.js';

export interface StageOptions {
  source: Source;
  /** how a source row becomes a record (./record-mapping.ts `intakeSettings(config)`) */
  intake: IntakeSettings;
  /** what happens to a record after intake, in order (./steps/index.ts `judgingSteps`) */
  steps: StepChain<Admitted, Derived>;
  committer: ShardCommitter;
  /** receive each range's rows before it becomes visible (Kafka verdict events, DLQ topic) */
  sinks?: readonly RangeSink[];
  /** ranges already committed (from manifests): skipped, not re-judged */
  committed?: CommittedRanges;
  concurrency: number;
  range: RangeLimits;
  /** records held between pull and commit; default 2 * range.maxRecords + concurrency */
  window?: number;
  onProgress?: (p: StageCounters) => void;
  /** the stage counts into this object (so metrics can read it live); default a fresh one */
  counters?: StageCounters;
  /** told after each range leaves the commit protocol, with how long that took */
  onRangeDone?: (e: RangeTiming) => void;
  /** stop pulling new records; what is in flight still finishes and is committed */
  signal?: AbortSignal;
  /** the stage's events (ranges not written); default: this thread's `stage` logger */
  log?: Logger;
  /** while this returns a promise (the output store is down), no new record is pulled */
  intakeHold?: IntakeHold;
  /** holds intake while it says so (./intake-gate.ts `endpointGate`: a model endpoint is down) */
  gate?: IntakeGate;
  /** what a later copy of a record id becomes (./duplicate-ids.ts); default dead_letter */
  duplicateIds?: DuplicateIdPolicy;
  /** check that committed ranges still hold what was judged (./input-identity.ts); file and S3 runs */
  identity?: IdentityOptions;
}

export interface IntakeHold {
  /** null while intake may go on; else settles when it may go on again */
  blocked(): Promise<void> | null;
  /** outages so far and their total length, for the counters */
  readonly stats: { readonly outages: number; readonly outageMs: number };
}
