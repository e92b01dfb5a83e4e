/**
 * The zero-row Parquet file the dataset card lists for a table that has no committed part yet
 * (./dataset-card.ts, schemaPartKey): the table's full schema and no row group, encoded exactly as
 * a zero-row range part is, so a loader gets the same columns before and after the first range.
 */
import { SHARD_TABLES } from '../../../schemas/outputs.js';
import { buildTable } from './arrow-schema.js';
import { encodeCorpusPart } from './corpus.js';
import type { CardTableName } from './dataset-card.js';
import { SHARD_SCHEMA_VERSION } from './shard-commit.js';
import { toParquet } from './shard-format.js';

/**
 * Bytes of `table`'s schema-only part. The corpus's `record` column is Utf8 here, the type of
 * JSON input; a Parquet input's struct is known only from its first committed part, and once a
 * part exists the card stops listing this file.
 */
export function schemaPart(table: CardTableName): Uint8Array {
  const metadata = { reasoning_jury: JSON.stringify({ table, schema_version: SHARD_SCHEMA_VERSION }) };
  if (table === 'corpus') return encodeCorpusPart({ format: 'parquet', entries: [] }, 'keep', metadata).bytes;
  return toParquet(buildTable(SHARD_TABLES[table], [], { metadata }));
}
