/**
 * Whether a range of a Kafka partition may be written: the checks that make a race between a
 * revoked owner and the new one harmless.
 *
 *  - The partition is not ours any more (or a rebalance did not settle): skipped.
 *  - A manifest of a different range overlaps this one (a former owner closed a partial range,
 *    e.g. on shutdown, while we rebuilt from an older offset): conflicted, and the source
 *    re-reads the partition, skipping that range.
 *
 * A range of the same name already committed never gets here: the range commit finds its
 * manifest first.
 */
import type { ObjectStore } from '../../src/pipeline/storage/object-store.js';
import type { Clearance, RangeClaim } from '../../src/pipeline/source.js';
import { committedRangesFrom } from './manifests.js';

/** What the clearance needs to know about the partitions this instance holds. */
export interface PartitionOwner {
  mayWrite(unit: string): Promise<boolean>;
  /** lowest offset a manifest overlapping a new range of `unit` could start at */
  floor(unit: string): number;
}

export async function kafkaClearance(store: ObjectStore, owner: PartitionOwner, claim: RangeClaim): Promise<Clearance> {
  if (!(await owner.mayWrite(claim.unit))) return { write: false, outcome: 'skipped', reason: `${claim.unit} is no longer assigned here` };
  // Overlap means sharing a record, not just an interval: our range may span a committed
  // range whose offsets the source skipped.
  const overlap = (await committedRangesFrom(store, claim.unit, owner.floor(claim.unit))).find(
    (r) =>
      r.first <= claim.lastOffset &&
      r.last >= claim.firstOffset &&
      !(r.first === claim.firstOffset && r.last === claim.lastOffset) &&
      claim.offsets.some((o) => o >= r.first && o <= r.last),
  );
  if (!overlap) return { write: true };
  return {
    write: false,
    outcome: 'conflicted',
    reason: `range ${claim.firstOffset}..${claim.lastOffset} of ${claim.unit} overlaps committed range ${overlap.first}..${overlap.last} written by another instance; re-reading the partition`,
  };
}
