/**
 * Sinks (Kafka verdict events, the dead-letter topic) publish a range before its manifest is
 * written. What a range looks like, CommitRequest, belongs to the commit
 * (./commit/commit-request.ts) and is re-exported here, so a connector needs only this contract.
 */
import type { CommitRequest } from './commit/commit-request.js';

export type { CommitRequest, ShardRows } from './commit/commit-request.js';

/** Something that receives a range's rows before the range becomes visible. */
export interface RangeSink {
  publish(req: CommitRequest): Promise<void>;
}
