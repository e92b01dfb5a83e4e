/**
 * Where a range's files live (docs/layout.md):
 *
 *   <table>/source=<name>/part-<first>-<last>.parquet          Parquet: at the root
 *   arrow/<table>/source=<name>/part-<first>-<last>.arrow      each other format under its own root,
 *   jsonl/corpus/decision=<d>/source=<name>/part-….jsonl       so a dataset reader never mixes formats
 *   corpus/decision=<d>/source=<name>/part-<first>-<last>.parquet
 *   _staging/<first>-<last>.<nonce>/<final key>.staged          a range's parts before they are published
 *   _commits/<first>-<last>.json                                the manifest: the range is committed
 *
 * Names depend only on positions, so a rebuilt range lands on its own names. Shared by the
 * range commit and the connectors that find ranges by key (Kafka, S3 create-only manifests).
 */
import type { FileFormat, FilterDecision, ShardTableName } from '../../../schemas/outputs.js';

export const COMMITS_PREFIX = '_commits/';
/**
 * Parts are written here first and moved to their names only once the manifest is in place.
 * The leading '_' hides it from pyarrow.dataset and Spark; the '.staged' suffix keeps it out of
 * every `*.parquet` glob too (DuckDB's `**` and `*` match '_' and '.' names).
 */
export const STAGING_PREFIX = '_staging/';
const STAGED_SUFFIX = '.staged';

/** The folder under the output root that holds one format's tables ('' for Parquet). */
export function formatRoot(format: FileFormat): string {
  return format === 'parquet' ? '' : `${format}/`;
}

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

/** `tag` (outputs with Delta tables): a range judged again gets new names, as an older table version still reads the old ones. */
const partName = (first: string, last: string, format: FileFormat, tag: string | undefined): string => {
  assertPosition(first, 'first position');
  assertPosition(last, 'last position');
  if (tag !== undefined && !/^[0-9a-f]{8,32}$/.test(tag)) throw new Error(`invalid part tag ${JSON.stringify(tag)}`);
  return `part-${first}-${last}${tag ? `.${tag}` : ''}.${format}`;
};

export function shardKey(table: ShardTableName, source: string, first: string, last: string, format: FileFormat, tag?: string): string {
  return `${formatRoot(format)}${table}/source=${escapePartitionValue(source)}/${partName(first, last, format, tag)}`;
}

/** The curated corpus: one part per decision, `decision=` before `source=` so a filter on it prunes folders. */
export function corpusKey(decision: FilterDecision, source: string, first: string, last: string, format: FileFormat, tag?: string): string {
  return `${formatRoot(format)}corpus/decision=${decision}/source=${escapePartitionValue(source)}/${partName(first, last, format, tag)}`;
}

/** A range attempt's own staging folder (the nonce keeps racing writers of one range apart). */
export function stagingPrefix(first: string, last: string, nonce: string): string {
  assertPosition(first, 'first position');
  assertPosition(last, 'last position');
  if (!/^[0-9a-f]{8,32}$/.test(nonce)) throw new Error(`invalid staging nonce ${JSON.stringify(nonce)}`);
  return `${STAGING_PREFIX}${first}-${last}.${nonce}/`;
}

/** Every staging folder of one range starts with this. */
export function rangeStagingPrefix(first: string, last: string): string {
  return `${STAGING_PREFIX}${first}-${last}.`;
}

export const stagedKey = (staging: string, key: string): string => `${staging}${key}${STAGED_SUFFIX}`;

/** The final key a staged key stands for, or null when `staged` is not under `staging`. */
export function unstagedKey(staging: string, staged: string): string | null {
  if (!staged.startsWith(staging) || !staged.endsWith(STAGED_SUFFIX)) return null;
  return staged.slice(staging.length, -STAGED_SUFFIX.length);
}

export function manifestKey(first: string, last: string): string {
  assertPosition(first, 'first position');
  assertPosition(last, 'last position');
  return `${COMMITS_PREFIX}${first}-${last}.json`;
}
