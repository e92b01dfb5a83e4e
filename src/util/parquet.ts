/**
 * Parquet helpers the file and S3 connectors share: reading a footer through range reads, and
 * turning hyparquet's values into what JSON and zod accept.
 */
import { parquetMetadataAsync, type AsyncBuffer, type FileMetaData } from 'hyparquet';

/** The footer is usually small; hyparquet's 512 KB default would over-read small files. */
const FOOTER_FETCH_BYTES = 64 * 1024;

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * INT64 columns arrive as BigInt, which JSON and zod reject: numbers when exact, else decimal
 * strings. Typed arrays (numeric lists) become plain arrays; binary (Uint8Array) and Date stay.
 * Mutates in place: hyparquet hands us fresh row objects.
 */
export function normalizeParquetValue(v: unknown): unknown {
  if (typeof v === 'bigint') return v >= MIN_SAFE && v <= MAX_SAFE ? Number(v) : v.toString();
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = normalizeParquetValue(v[i]);
    return v;
  }
  if (ArrayBuffer.isView(v)) {
    if (v instanceof Uint8Array || v instanceof DataView) return v;
    return Array.from(v as unknown as ArrayLike<unknown>, normalizeParquetValue);
  }
  if (v instanceof Date) return v;
  const obj = v as Record<string, unknown>;
  for (const k of Object.keys(obj)) obj[k] = normalizeParquetValue(obj[k]);
  return obj;
}

export async function readParquetMetadata(reader: AsyncBuffer): Promise<FileMetaData> {
  return parquetMetadataAsync(reader, { initialFetchSize: FOOTER_FETCH_BYTES });
}
