/**
 * Where a range's files live (docs: /work/shared/ARCHITECTURE.md, "Shard layout"):
 *
 *   <table>/source=<name>/part-<first>-<last>.parquet|.arrow   one file per table and format
 *   _commits/<first>-<last>.json                                written last: the range is visible
 *
 * Names depend only on positions, so a rebuilt range lands on its own names. Shared by the
 * range commit and the connectors that find ranges by key (Kafka, S3 create-only manifests).
 */
import type { ShardFormat, ShardTableName } from '../../schemas/outputs.js';

export const COMMITS_PREFIX = '_commits/';

// Kafka Connect style "topic+partition+offset" and file "hash+row" positions both fit this.
const POSITION_RE = /^[A-Za-z0-9][A-Za-z0-9._+=~-]{0,199}$/;

export function assertPosition(p: string, what = 'position'): void {
  if (!POSITION_RE.test(p)) throw new Error(`invalid ${what} ${JSON.stringify(p)}: use [A-Za-z0-9._+=~-], at most 200 chars`);
}

/**
 * Hive partition value escaping as Spark does it (%XX for path-unsafe bytes), so that
 * `source=<name>` parses back to the same name in Spark, pyarrow and DuckDB.
 */
export function escapePartitionValue(v: string): string {
  if (v.length === 0) throw new Error('empty partition value');
  let out = '';
  for (const byte of new TextEncoder().encode(v)) {
    const ch = String.fromCharCode(byte);
    out += byte < 0x80 && /[A-Za-z0-9._+~-]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function shardKey(table: ShardTableName, source: string, first: string, last: string, format: ShardFormat): string {
  assertPosition(first, 'first position');
  assertPosition(last, 'last position');
  return `${table}/source=${escapePartitionValue(source)}/part-${first}-${last}.${format}`;
}

export function manifestKey(first: string, last: string): string {
  assertPosition(first, 'first position');
  assertPosition(last, 'last position');
  return `${COMMITS_PREFIX}${first}-${last}.json`;
}
