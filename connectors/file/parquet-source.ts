/**
 * Parquet → SourceItems, one row group at a time, one object per row.
 *
 * hyparquet reads through an AsyncBuffer of range reads over one file handle, so only the
 * footer and the current row group's column chunks are ever in memory (a row group is the
 * memory unit: pyarrow writes up to 1M rows per group, Spark ~128 MB). hyparquet-compressors
 * supplies ZSTD, GZIP, BROTLI, LZ4 (SNAPPY is built into hyparquet).
 */
import { open, type FileHandle } from 'node:fs/promises';
import { parquetReadObjects, type AsyncBuffer, type FileMetaData } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import type { SourcePosition } from '../../schemas/trace.js';
import { deadItem, type SourceItem } from '../../src/pipeline/source.js';
import { normalizeParquetValue, readParquetMetadata } from '../../src/util/parquet.js';
import { inputColumns } from '../../src/util/parquet-arrow.js';
import type { ByteCounter } from './byte-stream.js';

export interface ParquetReadOptions {
  sourceName: string;
}

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

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

const NO_RAW = { rawText: '', rawTextTruncated: false };

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
    const columns = inputColumns(metadata);
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
        yield { position: pos(groupStart + i), ok: true, raw: row, ...(columns ? { columns } : {}) };
      }
      groupStart = groupEnd;
    }
  } finally {
    await reader.close();
  }
}
