/**
 * The commit protocol for a complete range, in one place; each step moves the range's state
 * (./range-state.ts):
 *
 *   0. the commit begins: the range can no longer be dropped                 → checking
 *   1. its manifest is already there        → existing (a restart, or another writer won)
 *   2. a streaming source refuses the write → refused (skipped | conflicted), nothing written
 *      otherwise                            → cleared
 *   3. sinks publish the range (Kafka verdict events, dead-letter topic)         → published
 *   4. its parts are staged, its manifest written, the parts moved to their names
 *      (./commit/shard-commit.ts)           → staged → manifest_written → committed
 *                                             (or existing, if a racer's manifest won)
 *   5. the source is told the outcome, and the positions that are now safe are pulled from it
 *      and handed back to be acknowledged (Kafka: committed to the group)
 *
 * Sinks publish before the manifest, so a crash repeats a publication rather than skip it.
 */
import type { RangeSettings } from '../../schemas/outputs.js';
import type { Logger } from '../util/log.js';
import type { RangeWriter } from './range-writer.js';
import { RangeState } from './range-state.js';
import type { ShardCommitter } from './commit/shard-commit.js';
import { StorageError } from './storage/storage-error.js';
import type { CommitRequest, RangeSink } from './sink.js';
import type { RangeOutcome, Source } from './source.js';

export interface RangeCommitDeps {
  committer: ShardCommitter;
  source: Source;
  sinks: readonly RangeSink[];
  settings: RangeSettings;
  log: Logger;
}

export function commitRequest(w: RangeWriter, settings: RangeSettings): CommitRequest {
  const p = w.plan;
  return {
    source: w.source,
    first: w.first,
    last: w.last,
    tables: w.tables(),
    ...(settings.corpus && settings.corpus !== 'off' ? { corpus: w.corpus(settings.corpus) } : {}),
    range: { unit: p.unit, unit_token: p.unitToken, first_offset: p.firstOffset, last_offset: p.lastOffset, records: p.items, ...w.rangeFacts() },
    settings,
  };
}

/** Steps 1 to 4: the range ends committed, existing or refused. */
async function write(w: RangeWriter, deps: RangeCommitDeps): Promise<void> {
  const life = w.lifecycle;
  life.to(RangeState.Checking);
  if (await deps.committer.committed(w.first, w.last)) return life.to(RangeState.Existing);
  const clearance = (await deps.source.streaming?.clearance(w.claim())) ?? { write: true };
  if (!clearance.write) {
    deps.log.info(`range ${w.first}..${w.last} not written (${clearance.outcome}): ${clearance.reason}`, { range: `${w.first}..${w.last}`, unit: w.plan.unit });
    return life.refuse(clearance.outcome);
  }
  life.to(RangeState.Cleared);
  const req = commitRequest(w, deps.settings);
  for (const sink of deps.sinks) await sink.publish(req);
  life.to(RangeState.Published);
  const res = await deps.committer.commit(req, {
    staged: () => life.to(RangeState.Staged),
    manifestWritten: () => life.to(RangeState.ManifestWritten),
  });
  life.to(res.alreadyCommitted ? RangeState.Existing : RangeState.Committed);
}

/**
 * Runs the protocol for a complete range and returns how it ended. A store that is down is
 * waited out below (the committer's store retries, ./storage/storage-retry.ts); a StorageError that
 * gets here ends the stage, and it names this range.
 */
export async function commitRange(w: RangeWriter, deps: RangeCommitDeps): Promise<RangeOutcome> {
  await write(w, deps).catch((err: unknown) => {
    throw err instanceof StorageError ? err.inRange(`${w.first}..${w.last}`) : err;
  });
  const outcome = w.lifecycle.outcome;
  if (outcome === null) throw new Error(`range ${w.first}..${w.last} left the commit protocol as ${w.state}`);
  const streaming = deps.source.streaming;
  if (streaming) {
    streaming.rangeDone({ ...w.claim(), first: w.first, last: w.last, records: w.plan.items, outcome });
    const safe = streaming.safeOffsets();
    if (safe.length) await streaming.acknowledge(safe);
  }
  return outcome;
}
