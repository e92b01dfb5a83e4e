/**
 * Reading a committed corpus part back, for `decide` (src/compose/redecide.ts), which writes the
 * corpus again with new decisions. Apart from ./corpus.ts because reading goes through
 * ./shard-read.ts, which needs the committer, which needs the encoder.
 */
import { parquetMetadata } from 'hyparquet';
import { DataType, Schema } from 'apache-arrow';
import { CORPUS_RECORD_COLUMN, CorpusRow, type CorpusFormat } from '../../../schemas/outputs.js';
import { arrowSchemaOfParquet } from '../../util/parquet-arrow.js';
import type { CorpusBatch } from './corpus.js';
import { readParquetRows } from './shard-read.js';

/**
 * A committed corpus part read back (`decide` rewrites the corpus with new decisions): each
 * row's curation columns and its `record` as the part held it, and, for a Parquet part whose
 * `record` is a Struct, that Struct's fields. They are mapped from the part's own Parquet schema
 * the way the input's were (src/util/parquet-arrow.ts), so the rewritten part gets the same types.
 */
export async function readCorpusPart(bytes: Uint8Array, format: CorpusFormat): Promise<Omit<CorpusBatch, 'format'>> {
  if (format === 'jsonl') {
    const lines = new TextDecoder().decode(bytes).split('\n').filter((l) => l.length > 0);
    const entries = lines.map((l) => {
      const { record, ...row } = JSON.parse(l) as Record<string, unknown>;
      return { row: CorpusRow.parse(row), raw: record };
    });
    return { entries };
  }
  const schema = arrowSchemaOfParquet(parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer));
  const type = schema.fields.find((f) => f.name === CORPUS_RECORD_COLUMN.name)?.type;
  if (!type) throw new Error('corpus part has no record column');
  const struct = DataType.isStruct(type);
  const entries = (await readParquetRows(bytes)).map(({ record, ...row }) => {
    const parsed = CorpusRow.parse(row);
    if (struct) return { row: parsed, raw: record };
    if (typeof record !== 'string') throw new Error(`corpus part holds a ${typeof record} record column, expected its JSON text`);
    return { row: parsed, raw: undefined, text: record };
  });
  return { entries, ...(struct ? { columns: new Schema(type.children) } : {}) };
}
