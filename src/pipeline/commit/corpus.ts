/**
 * Encoding the curated corpus (docs/layout.md, "The curated corpus"): the curation columns of
 * schemas/outputs.ts CorpusRow, then `record`, the input record as it was read.
 *
 *   Parquet input  -> `record` is a Struct of the input's columns with their own types
 *                     (src/util/parquet-arrow.ts); nested so that no input column can collide
 *                     with ours or with the `decision=` / `source=` partition keys.
 *   JSON input     -> `record` is the record's JSON text (Utf8): a JSONL file or a topic has no
 *                     schema, and a column per field would differ from part to part.
 *   format jsonl   -> one JSON object per line: the curation fields, then `record` as an object
 *                     (Parquet values made JSON-safe: dates as ISO text, bytes base64, big ints as text).
 */
import { makeBuilder, makeData, Field, RecordBatch, Schema, Struct, Table, Utf8, type Data } from 'apache-arrow';
import { CORPUS_RECORD_COLUMN, CorpusRow, type CorpusFormat, type FilterDecision } from '../../../schemas/outputs.js';
import { jsonText, toArrowValue } from '../../util/parquet-arrow.js';
import { buildTable } from './arrow-schema.js';
import { columnData } from './arrow-columns.js';
import { toParquet, type ParquetOptions } from './shard-format.js';

export interface CorpusEntry {
  row: CorpusRow;
  /** the source item's parsed row */
  raw: unknown;
  /** the record's JSON text exactly as a corpus part held it (a part read back); else jsonText(raw) */
  text?: string;
}

/** A range's corpus: its judged records in offset order, and the input's schema if it has one. */
export interface CorpusBatch {
  format: CorpusFormat;
  columns?: Schema;
  entries: readonly CorpusEntry[];
}

function recordColumn(batch: CorpusBatch, entries: readonly CorpusEntry[]): { field: Field; data: Data } {
  if (!batch.columns) {
    const field = new Field(CORPUS_RECORD_COLUMN.name, new Utf8(), CORPUS_RECORD_COLUMN.nullable);
    return { field, data: columnData(field.type, entries.map((e) => e.text ?? jsonText(e.raw))) };
  }
  const type = new Struct(batch.columns.fields);
  const builder = makeBuilder({ type, nullValues: [null, undefined] });
  for (const e of entries) builder.append(toArrowValue(type, e.raw) as never);
  return { field: new Field(CORPUS_RECORD_COLUMN.name, type, CORPUS_RECORD_COLUMN.nullable), data: builder.finish().flush() };
}

/** The Arrow table of one decision's part (zero rows is a valid part with the full schema). */
export function corpusTable(batch: CorpusBatch, entries: readonly CorpusEntry[], metadata: Record<string, string>): Table {
  const base = buildTable(CorpusRow, entries.map((e) => e.row), { metadata });
  const rec = recordColumn(batch, entries);
  const schema = new Schema([...base.schema.fields, rec.field], base.schema.metadata);
  const children = [...(base.batches[0]?.data.children ?? []), rec.data];
  const data = makeData({ type: new Struct(schema.fields), length: entries.length, nullCount: 0, children });
  return new Table([new RecordBatch(schema, data)]);
}

function jsonSafe(v: unknown): unknown {
  return JSON.parse(jsonText(v)) as unknown;
}

/** JSON Lines of one decision's part: the curation fields and the record as an object. */
export function corpusJsonl(entries: readonly CorpusEntry[]): Uint8Array {
  let out = '';
  for (const e of entries) out += `${JSON.stringify({ ...CorpusRow.parse(e.row), record: jsonSafe(e.raw) })}\n`;
  return new TextEncoder().encode(out);
}

/** The part file bytes of one decision of a range's corpus. */
export function encodeCorpusPart(batch: CorpusBatch, decision: FilterDecision, metadata: Record<string, string>, parquet?: ParquetOptions): { bytes: Uint8Array; rows: number } {
  const entries = batch.entries.filter((e) => e.row.decision === decision);
  const bytes = batch.format === 'jsonl' ? corpusJsonl(entries) : toParquet(corpusTable(batch, entries, metadata), parquet);
  return { bytes, rows: entries.length };
}
