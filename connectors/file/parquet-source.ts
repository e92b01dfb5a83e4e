/**
 * Parquet → SourceItems, one row group at a time, one object per row.
 *
 * hyparquet reads through an AsyncBuffer of range reads over one file handle, so only the
 * footer and the current row group's column chunks are ever in memory (a row group is the
 * memory unit: pyarrow writes up to 1M rows per group, Spark ~128 MB). hyparquet-compressors
 * supplies ZSTD, GZIP, BROTLI, LZ4 (SNAPPY is built into hyparquet).
 */
import { open, type FileHandle } from 'node:fs/promises';
import { parquetMetadataAsync, parquetReadObjects, type AsyncBuffer, type FileMetaData } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import type { SourcePosition } from '../../schemas/trace.js';
import { deadItem, type SourceItem } from '../../src/pipeline/source.js';
import type { ByteCounter } from './byte-stream.js';

export interface ParquetReadOptions {
  sourceName: string;
}

/** The footer is usually small; hyparquet's 512 KB default would over-read small files. */
const FOOTER_FETCH_BYTES = 64 * 1024;

/** An AsyncBuffer doing positional reads on an open handle; counts bytes for progress/tests. */
export class FileRangeReader implements AsyncBuffer {
  private constructor(
    private readonly fh: FileHandle,
    readonly byteLength: number,
    private readonly counter: ByteCounter,
  ) {}

  static async open(path: string, counter: ByteCounter): Promise<FileRangeReader> {
    const fh = await open(path, 'r');
    try {
      const { size } = await fh.stat();
      return new FileRangeReader(fh, size, counter);
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  async slice(start: number, end?: number): Promise<ArrayBuffer> {
    const stop = Math.min(end ?? this.byteLength, this.byteLength);
    const length = Math.max(0, stop - start);
    const buf = new Uint8Array(length);
    let done = 0;
    while (done < length) {
      const { bytesRead } = await this.fh.read(buf, done, length - done, start + done);
      if (bytesRead === 0) throw new Error(`unexpected end of file at byte ${start + done}`);
      done += bytesRead;
    }
    this.counter.bytesRead += length;
    return buf.buffer;
  }

  close(): Promise<void> {
    return this.fh.close();
  }
}

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

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

const NO_RAW = { rawText: '', rawTextTruncated: false };

export async function readParquetMetadata(reader: AsyncBuffer): Promise<FileMetaData> {
  return parquetMetadataAsync(reader, { initialFetchSize: FOOTER_FETCH_BYTES });
}

/** Total rows from the footer alone (for size hints). */
export async function parquetRowCount(path: string, counter: ByteCounter = { bytesRead: 0 }): Promise<number> {
  const reader = await FileRangeReader.open(path, counter);
  try {
    return Number((await readParquetMetadata(reader)).num_rows);
  } finally {
    await reader.close();
  }
}

/**
 * Streams a Parquet file's rows; offset = row index in the file. An unreadable file yields one
 * dead letter at offset 0; an unreadable row group yields one dead letter at its first row
 * (naming the lost row range) and reading continues with the next group.
 */
export async function* readParquet(
  path: string,
  unit: string,
  counter: ByteCounter,
  opts: ParquetReadOptions,
): AsyncGenerator<SourceItem> {
  const pos = (offset: number): SourcePosition => ({ source: opts.sourceName, unit, offset });
  let reader: FileRangeReader;
  try {
    reader = await FileRangeReader.open(path, counter);
  } catch (e) {
    yield deadItem(pos(0), `read failed: ${errorMessage(e)}`, NO_RAW);
    return;
  }
  try {
    let metadata: FileMetaData;
    try {
      metadata = await readParquetMetadata(reader);
    } catch (e) {
      yield deadItem(pos(0), `not a readable Parquet file: ${errorMessage(e)}`, NO_RAW);
      return;
    }
    let groupStart = 0;
    for (let g = 0; g < metadata.row_groups.length; g++) {
      const groupRows = Number(metadata.row_groups[g]!.num_rows);
      const groupEnd = groupStart + groupRows;
      if (groupRows === 0) continue;
      let rows: Record<string, unknown>[];
      try {
        rows = await parquetReadObjects({ file: reader, metadata, rowStart: groupStart, rowEnd: groupEnd, compressors });
      } catch (e) {
        yield deadItem(
          pos(groupStart),
          `row group ${g} (rows ${groupStart}-${groupEnd - 1}, ${groupRows} rows lost) unreadable: ${errorMessage(e)}`,
          NO_RAW,
        );
        groupStart = groupEnd;
        continue;
      }
      for (let i = 0; i < rows.length; i++) {
        const row = normalizeParquetValue(rows[i]);
        rows[i] = undefined as never; // release rows already handed out
        yield { position: pos(groupStart + i), ok: true, raw: row };
      }
      groupStart = groupEnd;
    }
  } finally {
    await reader.close();
  }
}
