/**
 * Shard encoding: Arrow Table -> Parquet bytes (parquet-wasm) and -> Arrow IPC file bytes.
 *
 * parquet-wasm ships three builds. Its "node" build is CommonJS and instantiates the wasm
 * synchronously from the .wasm file next to it; the "esm" build needs an explicit init call
 * first and otherwise fails deep inside with "Cannot read properties of undefined". A bare
 * `import 'parquet-wasm'` picks one by export conditions, which differ between Node, vitest
 * and bundlers, so we load the node build explicitly through createRequire, and fall back to
 * the esm build initialised synchronously from the wasm bytes on disk.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tableToIPC, type Table } from 'apache-arrow';

type ParquetWasm = typeof import('parquet-wasm/node');
type ParquetWasmEsm = typeof import('parquet-wasm/esm');

const require = createRequire(import.meta.url);
let loaded: ParquetWasm | undefined;

/** Loads one parquet-wasm build, initialised and ready to use. */
export function loadParquetWasm(build: 'node' | 'esm'): ParquetWasm {
  if (build === 'node') return require('parquet-wasm/node') as ParquetWasm;
  // require(esm) works unflagged from Node 20.19; the build has no top-level await.
  const esm = require('parquet-wasm/esm') as ParquetWasmEsm;
  esm.initSync({ module: readFileSync(require.resolve('parquet-wasm/esm/parquet_wasm_bg.wasm')) });
  return esm as unknown as ParquetWasm;
}

/** The initialised parquet-wasm module (loaded once, synchronously): node build, else esm. */
export function parquetWasm(): ParquetWasm {
  if (loaded) return loaded;
  try {
    loaded = loadParquetWasm('node');
  } catch (nodeErr) {
    try {
      loaded = loadParquetWasm('esm');
    } catch (esmErr) {
      throw new Error(`cannot load parquet-wasm: node build: ${String(nodeErr)}; esm build: ${String(esmErr)}`);
    }
  }
  return loaded;
}

export type ParquetCompression = 'zstd' | 'snappy' | 'none';

export interface ParquetOptions {
  /** Default 'zstd' at arrow-rs's default level (parquet-wasm exposes no level setting). */
  compression?: ParquetCompression;
  /** Rows per row group. Default 128Ki: shards are a commit range, usually one row group. */
  rowGroupRows?: number;
  /** Dictionary-encode columns (parquet falls back to plain per page when it stops paying). */
  dictionary?: boolean;
  /**
   * Extra footer key/value metadata, on top of the table's schema metadata. parquet-wasm keeps
   * metadata in a Rust HashMap, so with more than one key in total the footer order, and the
   * bytes, vary from run to run: use one key with a JSON value when byte-stable output matters.
   */
  metadata?: Record<string, string>;
}

export const DEFAULT_ROW_GROUP_ROWS = 128 * 1024;
const CREATED_BY = 'reasoning-jury (parquet-wasm)';

/**
 * Parquet bytes for a table. Writer version 1 (v1 data pages, pinned rather than left to the
 * library default) because every reader we target, older Spark included, decodes them.
 */
export function toParquet(table: Table, opts: ParquetOptions = {}): Uint8Array {
  const pw = parquetWasm();
  const codec = {
    zstd: pw.Compression.ZSTD,
    snappy: pw.Compression.SNAPPY,
    none: pw.Compression.UNCOMPRESSED,
  }[opts.compression ?? 'zstd'];
  let builder = new pw.WriterPropertiesBuilder()
    .setWriterVersion(pw.WriterVersion.V1)
    .setCompression(codec)
    .setDictionaryEnabled(opts.dictionary ?? true)
    .setMaxRowGroupSize(opts.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS)
    .setStatisticsEnabled(pw.EnabledStatistics.Chunk)
    .setCreatedBy(CREATED_BY);
  // Schema metadata also goes to the footer as plain key/values: parquet-wasm keeps it only
  // inside the base64 ARROW:schema blob, which DuckDB and Spark users cannot see.
  const kv = new Map([...table.schema.metadata, ...Object.entries(opts.metadata ?? {})]);
  if (kv.size > 0) builder = builder.setKeyValueMetadata(kv);
  const props = builder.build();
  // Both the wasm Table and the properties are consumed (freed) by writeParquet.
  const wasmTable = pw.Table.fromIPCStream(tableToIPC(table, 'stream'));
  return pw.writeParquet(wasmTable, props);
}

/** Arrow IPC *file* format (random access footer, the `.arrow` / Feather v2 layout). */
export function toArrowIpc(table: Table): Uint8Array {
  return tableToIPC(table, 'file');
}
