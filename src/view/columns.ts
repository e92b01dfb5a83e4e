/**
 * Reading only the columns a view needs from one committed part, as arrays (no row objects):
 * hyparquet hands out column chunks for Parquet, apache-arrow its vectors for IPC.
 */
import { parquetMetadata, parquetRead } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import type { FileFormat } from '../../schemas/outputs.js';
import { readArrowIpcTable } from '../pipeline/commit/shard-read.js';

export type Columns = Record<string, unknown[]>;

const toArrayBuffer = (b: Uint8Array): ArrayBuffer => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

const plain = (v: unknown): unknown => (typeof v === 'bigint' ? Number(v) : v);

export async function readColumns(bytes: Uint8Array, format: FileFormat, names: readonly string[]): Promise<Columns> {
  const out: Columns = Object.fromEntries(names.map((n) => [n, []]));
  if (format === 'arrow') {
    const table = readArrowIpcTable(bytes);
    for (const n of names) {
      const child = table.getChild(n);
      if (!child) continue;
      const col = out[n]!;
      for (let i = 0; i < table.numRows; i++) col.push(plain(child.get(i)));
    }
    return out;
  }
  const file = toArrayBuffer(bytes);
  // Columns an older output lacks (n_dissent) stay empty rather than fail the read.
  const present = new Set(parquetMetadata(file).schema.map((e) => e.name));
  const wanted = names.filter((n) => present.has(n));
  if (wanted.length === 0) return out;
  await parquetRead({
    file,
    compressors,
    columns: wanted,
    onChunk: ({ columnName, columnData, rowStart }) => {
      const col = out[columnName];
      if (!col) return;
      for (let i = 0; i < columnData.length; i++) col[rowStart + i] = plain(columnData[i]);
    },
  });
  return out;
}
