/**
 * Record ids seen in this run, and what a later copy of one becomes (`input.duplicate_ids`):
 *   dead_letter  a dead letter "duplicate record_id ... (first seen at <unit>:<offset>)", unjudged
 *   keep_first   dropped unjudged, listed in its range's manifest (`range.duplicates`)
 *   keep_all     judged like any record (the behaviour before the policy existed)
 *
 * Memory: one map entry per distinct id of the run (id -> first position), about 100-200 bytes
 * each: ~1-2 GB per 10 million ids, so a run of a few million records fits the default heap.
 * Records skipped because their range is committed are remembered too, so a resumed file run
 * flags the same copies as an uninterrupted one. A copy read again at its own position (Kafka
 * redelivery of one offset) is the same record, not a duplicate.
 */
import type { DuplicateIdPolicy } from '../../schemas/config.js';
import type { Admitted, Dead } from './envelope.js';

export interface Duplicate {
  record_id: string;
  /** `<unit>:<offset>` of the first copy */
  first_seen: string;
}

export class DuplicateIds {
  private readonly first = new Map<string, string>();

  constructor(readonly policy: DuplicateIdPolicy) {}

  /** Remembers the record's id; returns the first copy when this one is a later copy. */
  see(env: Admitted | Dead): Duplicate | null {
    if (this.policy === 'keep_all' || !env.record) return null;
    const id = env.record.id;
    const here = `${env.position.unit}:${env.position.offset}`;
    const seen = this.first.get(id);
    if (seen === undefined) {
      this.first.set(id, here);
      return null;
    }
    return seen === here ? null : { record_id: id, first_seen: seen };
  }

  /** How many distinct ids are held (the memory bound above). */
  get size(): number {
    return this.first.size;
  }
}

export const duplicateReason = (d: Duplicate): string => `duplicate record_id ${JSON.stringify(d.record_id)} (first seen at ${d.first_seen})`;
