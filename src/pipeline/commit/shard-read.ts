/**
 * Reading shards back in-process: hyparquet (pure JS, independent of the parquet-wasm writer,
 * so a round trip through it is a real interop check) and apache-arrow for IPC files.
 * Rows come back as plain JS values: lists as arrays, structs as objects, Int64 as numbers (the schemas only allow
 * safe integers there) unless `int64: 'bigint'` is asked for.
 */
import { parquetMetadata, parquetReadObjects, parquetSchema, type SchemaTree } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { StructRow, Vector, tableFromIPC, type Table } from 'apache-arrow';
import type { ShardFormat, ShardTableName } from '../../../schemas/outputs.js';
import type { ObjectStore } from '../storage/object-store.js';
import { listCommitted } from './shard-commit.js';

export type PlainRow = Record<string, unknown>;
export interface ReadOptions {
  int64?: 'number' | 'bigint';
  columns?: string[];
}

function plain(v: unknown, int64: 'number' | 'bigint'): unknown {
  if (typeof v === 'bigint') {
    if (int64 === 'bigint') return v;
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) return v; // keep it exact
    return Number(v);
  }
  if (v instanceof Vector) return plain(v.toArray(), int64);
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v as unknown as ArrayLike<unknown>, (x) => plain(x, int64));
  if (Array.isArray(v)) return v.map((x) => plain(x, int64));
  // Structs: apache-arrow hands out StructRow proxies, hyparquet plain objects.
  if (v instanceof StructRow) return plain(v.toJSON(), int64);
  if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x, int64)]));
  }
  return v;
}

const toArrayBuffer = (b: Uint8Array): ArrayBuffer => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

export async function readParquetRows(bytes: Uint8Array, opts: ReadOptions = {}): Promise<PlainRow[]> {
  const int64 = opts.int64 ?? 'number';
  const rows = await parquetReadObjects({
    file: toArrayBuffer(bytes),
    compressors,
    ...(opts.columns ? { columns: opts.columns } : {}),
  });
  return rows.map((r) => {
    const o: PlainRow = {};
    for (const k of Object.keys(r)) o[k] = plain(r[k], int64);
    return o;
  });
}

/** Physical/logical type and repetition of each top-level Parquet column (lists: of the element). */
export interface ParquetColumnInfo {
  name: string;
  physical: string | undefined;
  logical: string | undefined;
  converted: string | undefined;
  repetition: string | undefined;
  list: boolean;
}

export function parquetColumns(bytes: Uint8Array): { numRows: number; rowGroups: number; codecs: string[]; columns: ParquetColumnInfo[]; keyValue: Record<string, string> } {
  const meta = parquetMetadata(toArrayBuffer(bytes));
  const tree = parquetSchema(meta);
  const leaf = (t: SchemaTree): SchemaTree => (t.children.length ? leaf(t.children[0]!) : t);
  const columns = tree.children.map((c) => {
    const l = leaf(c);
    const isList = c.element.converted_type === 'LIST' || c.element.logical_type?.type === 'LIST';
    return {
      name: c.element.name,
      physical: l.element.type,
      logical: l.element.logical_type?.type,
      converted: l.element.converted_type,
      repetition: c.element.repetition_type,
      list: isList,
    };
  });
  const codecs = new Set<string>();
  for (const rg of meta.row_groups) for (const col of rg.columns) if (col.meta_data) codecs.add(col.meta_data.codec);
  const keyValue: Record<string, string> = {};
  for (const kv of meta.key_value_metadata ?? []) if (kv.value !== undefined) keyValue[kv.key] = kv.value;
  return { numRows: Number(meta.num_rows), rowGroups: meta.row_groups.length, codecs: [...codecs], columns, keyValue };
}

export function readArrowIpcTable(bytes: Uint8Array): Table {
  return tableFromIPC(bytes);
}

export function readArrowIpcRows(bytes: Uint8Array, opts: ReadOptions = {}): PlainRow[] {
  const int64 = opts.int64 ?? 'number';
  const table = tableFromIPC(bytes);
  const names = opts.columns ?? table.schema.fields.map((f) => f.name);
  const cols = names.map((n) => {
    const c = table.getChild(n);
    if (!c) throw new Error(`no column ${n} in IPC file`);
    return c;
  });
  const rows: PlainRow[] = new Array(table.numRows);
  for (let i = 0; i < table.numRows; i++) {
    const o: PlainRow = {};
    for (let c = 0; c < names.length; c++) o[names[c]!] = plain(cols[c]!.get(i), int64);
    rows[i] = o;
  }
  return rows;
}

/** All rows of one table across every committed range (only files listed in manifests). */
export async function readCommittedRows(store: ObjectStore, table: ShardTableName, format: ShardFormat = 'parquet', opts: ReadOptions = {}): Promise<PlainRow[]> {
  const out: PlainRow[] = [];
  for (const m of await listCommitted(store)) {
    for (const f of m.files) {
      if (f.table !== table || f.format !== format) continue;
      const bytes = await store.get(f.key);
      if (!bytes) throw new Error(`committed file missing: ${f.key}`);
      const rows = format === 'parquet' ? await readParquetRows(bytes, opts) : readArrowIpcRows(bytes, opts);
      for (const r of rows) out.push(r);
    }
  }
  return out;
}
