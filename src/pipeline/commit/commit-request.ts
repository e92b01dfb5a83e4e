/**
 * What a range looks like to whoever stores or publishes it: the shard committer writes it,
 * sinks (Kafka verdict events, the dead-letter topic, ../sink.ts) publish it before it becomes
 * visible. It lives here, beside the committer, so commit/ needs nothing of the executor;
 * ../sink.ts re-exports it for connectors.
 */
import type { ManifestRange, RangeSettings, ShardRowOf, ShardTableName } from '../../../schemas/outputs.js';
import type { CorpusBatch } from './corpus.js';

export type ShardRows = { [K in ShardTableName]?: readonly ShardRowOf<K>[] };

export interface CommitRequest {
  /** Partition value for `source=<name>` (connector name, e.g. "kafka" or "file"). */
  source: string;
  first: string;
  last: string;
  tables: ShardRows;
  /** the curated corpus of the range; absent: none is written */
  corpus?: CorpusBatch;
  /** the unit and offsets the range covers: how a resumed run knows what is done */
  range?: ManifestRange;
  /** the range settings the boundaries came from, checked when a run resumes */
  settings?: RangeSettings;
  /** Passed through into the manifest as it is. */
  extra?: Record<string, unknown>;
}
