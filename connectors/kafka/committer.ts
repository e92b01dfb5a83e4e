/**
 * Range commits for Kafka input: the create-only manifest of ExclusiveCommitter, plus the
 * checks that make a race between a revoked owner and the new one harmless.
 *
 *  1. Same range already committed (same name): nothing is written; the offsets may move.
 *  2. The partition is not ours any more (or a rebalance did not settle): nothing is written.
 *  3. A manifest of a different range overlaps this one (a former owner closed a partial
 *     range, e.g. on shutdown, while we rebuilt from an older offset): nothing is written and
 *     the source re-reads the partition, skipping that range.
 *  4. Otherwise the verdict events / dead letters go to Kafka, then parts and the manifest
 *     (If-None-Match: *). Losing that last race means another writer committed the very same
 *     range, which is as good as our own.
 *
 * The outcome of each range is handed to the source, which moves the partition's offset only
 * over ranges that are really in the output.
 */
import { createHash } from 'node:crypto';
import { CommitManifest } from '../../schemas/outputs.js';
import type { ObjectStore } from '../../src/pipeline/object-store.js';
import type { CommitRequest, CommitResult, CommitterOptions } from '../../src/pipeline/shard-commit.js';
import { ExclusiveCommitter } from '../s3/committer.js';
import { committedRangesFrom } from './manifests.js';
import type { KafkaOutputs } from './outputs.js';
import type { RangeOutcome } from './source.js';

/** What the committer needs from the Kafka source. */
export interface RangeOwner {
  mayWrite(unit: string): Promise<boolean>;
  floor(unit: string): number;
  /** `unit` lets the owner tell which assignment of the partition the outcome belongs to */
  noteOutcome(first: string, last: string, outcome: RangeOutcome, unit?: string): void;
}

interface KafkaExtra {
  unit: string;
  first_offset: number;
  last_offset: number;
}

function kafkaExtra(req: CommitRequest): KafkaExtra | null {
  const e = req.extra as Partial<KafkaExtra> | undefined;
  return req.source === 'kafka' && e && typeof e.unit === 'string' && typeof e.first_offset === 'number' && typeof e.last_offset === 'number' ? (e as KafkaExtra) : null;
}

/** Source offsets of the range's records: each is a verdict or a dead letter. */
function recordOffsets(req: CommitRequest): number[] {
  return [...(req.tables.verdicts ?? []).map((v) => v.source_offset), ...(req.tables.dead_letters ?? []).map((d) => d.source_offset)];
}

/** A stand-in result for a range that was deliberately not written (the stage ignores it). */
function notWritten(req: CommitRequest, why: string): CommitResult {
  const manifest = CommitManifest.parse({
    version: 1,
    source: req.source,
    first: req.first,
    last: req.last,
    committed_at: new Date().toISOString(),
    files: [],
    rows: {},
    record_ids: 0,
    checksum: createHash('sha256').update('').digest('hex'),
    extra: { not_written: why },
  });
  return { manifest, alreadyCommitted: true };
}

export class KafkaCommitter extends ExclusiveCommitter {
  readonly counts = { written: 0, existing: 0, skipped: 0, conflict: 0 };

  constructor(
    store: ObjectStore,
    opts: CommitterOptions,
    private readonly owner: RangeOwner,
    outputs?: KafkaOutputs,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    super(store, opts, outputs);
  }

  private outcome(req: CommitRequest, o: RangeOutcome, unit?: string): void {
    this.counts[o]++;
    this.owner.noteOutcome(req.first, req.last, o, unit);
  }

  override async commit(req: CommitRequest): Promise<CommitResult> {
    const k = kafkaExtra(req);
    if (!k) return super.commit(req);
    const existing = await this.committed(req.first, req.last);
    if (existing) {
      this.outcome(req, 'existing');
      return { manifest: existing, alreadyCommitted: true };
    }
    if (!(await this.owner.mayWrite(k.unit))) {
      this.outcome(req, 'skipped', k.unit);
      this.log(`reasoning-jury: kafka: range ${req.first}..${req.last} not written: ${k.unit} is no longer assigned here\n`);
      return notWritten(req, 'partition not assigned');
    }
    // Overlap means sharing a record, not just an interval: our range may span a committed
    // range whose offsets the source skipped.
    const mine = recordOffsets(req);
    const overlap = (await committedRangesFrom(this.store, k.unit, this.owner.floor(k.unit))).find(
      (r) => r.first <= k.last_offset && r.last >= k.first_offset && !(r.first === k.first_offset && r.last === k.last_offset) && mine.some((o) => o >= r.first && o <= r.last),
    );
    if (overlap) {
      this.outcome(req, 'conflict', k.unit);
      this.log(`reasoning-jury: kafka: range ${k.first_offset}..${k.last_offset} of ${k.unit} overlaps committed range ${overlap.first}..${overlap.last} written by another instance; re-reading the partition\n`);
      return notWritten(req, `overlaps ${overlap.key}`);
    }
    const res = await super.commit(req); // publishes events and dead letters first
    this.outcome(req, res.alreadyCommitted ? 'existing' : 'written');
    return res;
  }
}
