/**
 * A ShardCommitter for stores whose manifests are create-only (S3 with If-None-Match: *).
 *
 * Two writers can build the same range (a revoked Kafka owner finishing while the new owner
 * rebuilds it; two backfill ranks given the same object). Names are deterministic, so both
 * aim at the same manifest key: the first put wins, and the loser reports the winner's
 * manifest as "already committed" instead of failing or replacing it.
 */
import type { ObjectStore } from '../../src/pipeline/object-store.js';
import { ShardCommitter, type CommitRequest, type CommitResult, type CommitterOptions } from '../../src/pipeline/shard-commit.js';
import { ObjectExistsError } from './object-store.js';

/** Sends a range's rows elsewhere (Kafka topics) before its manifest makes it visible. */
export interface RangePublisher {
  publish(req: CommitRequest): Promise<void>;
}

export class ExclusiveCommitter extends ShardCommitter {
  /** ranges whose manifest another writer put first */
  lostRaces = 0;

  constructor(
    store: ObjectStore,
    opts: CommitterOptions = {},
    private readonly publisher?: RangePublisher,
  ) {
    super(store, opts);
  }

  override async commit(req: CommitRequest): Promise<CommitResult> {
    // Published before the manifest, so a crash repeats the publication rather than skip it.
    if (this.publisher && !(await this.committed(req.first, req.last))) await this.publisher.publish(req);
    try {
      return await super.commit(req);
    } catch (err) {
      if (!(err instanceof ObjectExistsError)) throw err;
      const winner = await this.committed(req.first, req.last);
      if (!winner) throw new Error(`manifest ${err.key} was reported as existing but cannot be read`);
      this.lostRaces++;
      return { manifest: winner, alreadyCommitted: true };
    }
  }
}
