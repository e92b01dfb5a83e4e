/**
 * The commit protocol for one complete range, in one place:
 *
 *   1. its manifest is already there        → existing (a restart, or another writer won)
 *   2. a streaming source refuses the write → skipped | conflicted, nothing written
 *   3. sinks publish the range (Kafka verdict events, dead-letter topic), then its part files
 *      and manifest are written             → committed (or existing, if a racer's manifest won)
 *   4. the source is told the outcome, and the positions that are now safe are pulled from it
 *      and handed back to be acknowledged (Kafka: committed to the group)
 *
 * Sinks publish before the manifest, so a crash repeats a publication rather than skip it.
 */
import type { RangeSettings } from '../../schemas/outputs.js';
import type { RangeWriter } from './range-writer.js';
import type { ShardCommitter } from './shard-commit.js';
import type { CommitRequest, RangeSink } from './sink.js';
import type { RangeOutcome, Source } from './source.js';

export interface RangeCommitDeps {
  committer: ShardCommitter;
  source: Source;
  sinks: readonly RangeSink[];
  settings: RangeSettings;
  log: (line: string) => void;
}

export function commitRequest(w: RangeWriter, settings: RangeSettings): CommitRequest {
  const p = w.plan;
  return {
    source: w.source,
    first: w.first,
    last: w.last,
    tables: w.tables(),
    range: { unit: p.unit, unit_token: p.unitToken, first_offset: p.firstOffset, last_offset: p.lastOffset, records: p.items },
    settings,
  };
}

async function write(w: RangeWriter, deps: RangeCommitDeps): Promise<RangeOutcome> {
  if (await deps.committer.committed(w.first, w.last)) return 'existing';
  const clearance = (await deps.source.streaming?.clearance(w.claim())) ?? { write: true };
  if (!clearance.write) {
    deps.log(`reasoning-jury: range ${w.first}..${w.last} not written (${clearance.outcome}): ${clearance.reason}`);
    return clearance.outcome;
  }
  const req = commitRequest(w, deps.settings);
  for (const sink of deps.sinks) await sink.publish(req);
  const res = await deps.committer.commit(req);
  return res.alreadyCommitted ? 'existing' : 'committed';
}

/** Runs the protocol for a complete range and returns how it ended. */
export async function commitRange(w: RangeWriter, deps: RangeCommitDeps): Promise<RangeOutcome> {
  w.startWriting();
  const outcome = await write(w, deps);
  w.finish(outcome);
  const streaming = deps.source.streaming;
  if (streaming) {
    streaming.rangeDone({ ...w.claim(), first: w.first, last: w.last, records: w.plan.items, outcome });
    const safe = streaming.safeOffsets();
    if (safe.length) await streaming.acknowledge(safe);
  }
  return outcome;
}
