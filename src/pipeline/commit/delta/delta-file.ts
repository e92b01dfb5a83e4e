/**
 * What the Delta log needs to know of one Parquet part, read from the part's own footer: its
 * schema (for the table's metaData) and its statistics (row count, and min / max / null count
 * of each top-level column, for readers' data skipping). Reading the footer rather than the rows
 * we encoded means the same code serves a fresh commit and a log rebuilt from old parts.
 */
import { parquetMetadata, type FileMetaData } from 'hyparquet';
import type { Schema } from 'apache-arrow';
import { arrowSchemaOfParquet } from '../../../util/parquet-arrow.js';
import type { AddAction } from './delta-actions.js';

/** Longer strings get no min / max: a truncated bound needs care Delta readers may not take. */
const MAX_STAT_CHARS = 64;

export interface PartFacts {
  schema: Schema;
  add: AddAction;
}

type Stat = string | number;

function statValue(v: unknown): Stat | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : undefined;
  if (typeof v === 'string') return v.length <= MAX_STAT_CHARS ? v : undefined;
  return undefined;
}

interface ColumnStats {
  min?: Stat;
  max?: Stat;
  nulls: number;
  /** false once a row group lacks a bound: then the file's bound is unknown */
  bounded: boolean;
}

function fold(acc: ColumnStats | undefined, s: Record<string, unknown> | undefined): ColumnStats {
  const out: ColumnStats = acc ?? { nulls: 0, bounded: true };
  const nulls = s?.null_count;
  out.nulls += typeof nulls === 'bigint' ? Number(nulls) : typeof nulls === 'number' ? nulls : Number.NaN;
  const exactMin = s?.is_min_value_exact !== false;
  const exactMax = s?.is_max_value_exact !== false;
  const min = exactMin ? statValue(s?.min_value ?? s?.min) : undefined;
  const max = exactMax ? statValue(s?.max_value ?? s?.max) : undefined;
  if (min === undefined || max === undefined) {
    out.bounded = false;
    return out;
  }
  if (out.min === undefined || min < out.min) out.min = min;
  if (out.max === undefined || max > out.max) out.max = max;
  return out;
}

/** numRecords, then min / max / nullCount of the top-level leaf columns that are not partition columns. */
function statsJson(meta: FileMetaData, partitionColumns: readonly string[]): string {
  const cols = new Map<string, ColumnStats>();
  for (const rg of meta.row_groups) {
    for (const chunk of rg.columns) {
      const path = chunk.meta_data?.path_in_schema ?? [];
      if (path.length !== 1 || partitionColumns.includes(path[0]!)) continue; // nested leaves: no stats
      cols.set(path[0]!, fold(cols.get(path[0]!), chunk.meta_data?.statistics as Record<string, unknown> | undefined));
    }
  }
  const minValues: Record<string, Stat> = {};
  const maxValues: Record<string, Stat> = {};
  const nullCount: Record<string, number> = {};
  for (const [name, c] of cols) {
    if (Number.isFinite(c.nulls)) nullCount[name] = c.nulls;
    // An empty file has no bounds; a column of nulls only has none either.
    if (c.bounded && c.min !== undefined && c.max !== undefined && meta.row_groups.length > 0) {
      minValues[name] = c.min;
      maxValues[name] = c.max;
    }
  }
  return JSON.stringify({ numRecords: Number(meta.num_rows), minValues, maxValues, nullCount });
}

/** Facts of one part: `path` and `partitionValues` as the log will hold them. */
export function partFacts(
  bytes: Uint8Array,
  where: { path: string; partitionValues: Record<string, string> },
  modificationTime: number,
): PartFacts {
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const meta = parquetMetadata(buffer);
  const add: AddAction = {
    path: where.path,
    partitionValues: where.partitionValues,
    size: bytes.byteLength,
    modificationTime,
    dataChange: true,
    stats: statsJson(meta, Object.keys(where.partitionValues)),
  };
  return { schema: arrowSchemaOfParquet(meta), add };
}
