/**
 * In-process interop: Parquet written by parquet-wasm is read back by hyparquet (a separate,
 * pure-JS implementation, ZSTD via hyparquet-compressors); IPC files by apache-arrow.
 */
import { describe, expect, it } from 'vitest';
import { DataType, tableToIPC, type Field, type Table } from 'apache-arrow';
import { parquetMetadata, parquetSchema, type SchemaTree } from 'hyparquet';
import { SHARD_TABLES, SHARD_TABLE_NAMES } from '../../schemas/outputs.js';
import { arrowSchemaFor, buildTable } from '../../src/pipeline/commit/arrow-schema.js';
import { loadParquetWasm, parquetWasm, toArrowIpc, toParquet } from '../../src/pipeline/commit/shard-format.js';
import { parquetColumns, readArrowIpcRows, readArrowIpcTable, readParquetRows } from '../../src/pipeline/commit/shard-read.js';
import { allTables, defectRows } from './synth.js';

const tables = allTables();

/** Leaves of an Arrow field as dotted paths ([] for a list's element), with type and nullability. */
function arrowLeaves(f: Field, path: string): { path: string; type: DataType; nullable: boolean }[] {
  if (DataType.isList(f.type)) return arrowLeaves(f.type.children[0]!, `${path}[]`);
  if (DataType.isStruct(f.type)) return f.type.children.flatMap((c) => arrowLeaves(c, `${path}.${c.name}`));
  return [{ path, type: f.type, nullable: f.nullable }];
}

/** The same for a Parquet schema node: a LIST group's repeated middle level becomes []. */
function parquetLeaves(t: SchemaTree, path: string): { path: string; physical: string | undefined; logical: string | undefined; repetition: string | undefined }[] {
  const isList = t.element.converted_type === 'LIST' || t.element.logical_type?.type === 'LIST';
  if (isList) return parquetLeaves(t.children[0]!.children[0]!, `${path}[]`);
  if (t.children.length > 0) return t.children.flatMap((c) => parquetLeaves(c, `${path}.${c.element.name}`));
  return [{ path, physical: t.element.type, logical: t.element.logical_type?.type, repetition: t.element.repetition_type }];
}
const PHYSICAL: Record<string, string> = { Int32: 'INT32', Int64: 'INT64', Float64: 'DOUBLE', Bool: 'BOOLEAN' };

describe.each(SHARD_TABLE_NAMES)('%s table', (name) => {
  const schema = SHARD_TABLES[name];
  const rows = tables[name] as readonly unknown[];
  const arrowSchema = arrowSchemaFor(schema);
  const table = buildTable(schema, rows, { metadata: { 'reasoning_jury.table': name } });
  const parquet = toParquet(table);
  const ipc = toArrowIpc(table);

  it('Parquet round-trips through hyparquet value for value', async () => {
    const back = await readParquetRows(parquet);
    expect(back.length).toBe(rows.length);
    expect(back).toEqual(rows);
  });

  it('Parquet columns carry real types: ints, doubles, booleans, utf8, lists, structs; ZSTD', () => {
    const info = parquetColumns(parquet);
    expect(info.numRows).toBe(rows.length);
    expect(info.codecs).toEqual(['ZSTD']);
    expect(info.keyValue['ARROW:schema']).toBeTruthy();
    expect(info.keyValue['reasoning_jury.table']).toBe(name);
    const tree = parquetSchema(parquetMetadata(parquet.buffer.slice(parquet.byteOffset, parquet.byteOffset + parquet.byteLength) as ArrayBuffer));
    for (const f of arrowSchema.fields) {
      const col = info.columns.find((c) => c.name === f.name)!;
      expect(col.repetition).toBe(f.nullable ? 'OPTIONAL' : 'REQUIRED');
      expect(col.list).toBe(DataType.isList(f.type));
      // Every leaf under the column (nested structs and lists included), in order.
      const want = arrowLeaves(f, f.name);
      const got = parquetLeaves(tree.children.find((c) => c.element.name === f.name)!, f.name);
      expect(got.map((l) => l.path), f.name).toEqual(want.map((l) => l.path));
      want.forEach((w, i) => {
        const g = got[i]!;
        expect(g.repetition === 'OPTIONAL', `${w.path} nullable`).toBe(w.nullable);
        if (DataType.isUtf8(w.type) || DataType.isDictionary(w.type)) {
          expect([g.physical, g.logical], w.path).toEqual(['BYTE_ARRAY', 'STRING']);
        } else {
          const key = DataType.isInt(w.type) ? `Int${w.type.bitWidth}` : DataType.isFloat(w.type) ? 'Float64' : 'Bool';
          expect(g.physical, w.path).toBe(PHYSICAL[key]);
        }
      });
    }
  });

  it('dictionary-encodes low-cardinality columns in Parquet', () => {
    const meta = parquetMetadata(parquet.buffer.slice(parquet.byteOffset, parquet.byteOffset + parquet.byteLength) as ArrayBuffer);
    const dictCols = arrowSchema.fields.filter((f) => DataType.isDictionary(f.type)).map((f) => f.name);
    for (const col of meta.row_groups[0]!.columns) {
      const path = col.meta_data!.path_in_schema[0]!;
      if (dictCols.includes(path)) expect(col.meta_data!.encodings, path).toContain('RLE_DICTIONARY');
    }
  });

  it('Arrow IPC file round-trips through apache-arrow with the same schema', () => {
    const t = readArrowIpcTable(ipc);
    expect(t.schema.fields.map((f) => `${f.name}:${String(f.type)}:${f.nullable}`)).toEqual(
      arrowSchema.fields.map((f) => `${f.name}:${String(f.type)}:${f.nullable}`),
    );
    expect(readArrowIpcRows(ipc)).toEqual(rows);
  });
});

describe('zero-row parts', () => {
  it('keep every table\'s schema, nested lists of structs included, in both formats', async () => {
    for (const name of SHARD_TABLE_NAMES) {
      const schema = SHARD_TABLES[name];
      const empty = buildTable(schema, []);
      const parquet = toParquet(empty);
      expect(await readParquetRows(parquet), name).toEqual([]);
      expect(parquetColumns(parquet).columns.map((c) => c.name), name).toEqual(Object.keys(schema.shape));
      const back = readArrowIpcTable(toArrowIpc(empty));
      expect(back.numRows, name).toBe(0);
      expect(back.schema.fields.map((f) => String(f.type)), name).toEqual(arrowSchemaFor(schema).fields.map((f) => String(f.type)));
    }
  });
});

describe('Parquet writer options', () => {
  const rows = defectRows(3000);
  const table = buildTable(SHARD_TABLES.defects, rows);

  it('ZSTD is smaller than uncompressed and both read back', async () => {
    const zstd = toParquet(table);
    const none = toParquet(table, { compression: 'none' });
    expect(parquetColumns(none).codecs).toEqual(['UNCOMPRESSED']);
    expect(zstd.byteLength).toBeLessThan(none.byteLength);
    expect(await readParquetRows(none)).toEqual(rows);
  });

  it('splits row groups at rowGroupRows', async () => {
    const pq = toParquet(table, { rowGroupRows: 1000 });
    expect(parquetColumns(pq).rowGroups).toBe(3);
    expect(await readParquetRows(pq)).toEqual(rows);
  });

  it('writes deterministic bytes for the same rows (re-commits are byte-identical)', () => {
    const meta = { metadata: { one_key: '{"a":1,"b":2}' } };
    const once = () => Buffer.from(toParquet(buildTable(SHARD_TABLES.defects, rows.slice(0, 200), meta)));
    const first = once();
    for (let i = 0; i < 5; i++) expect(once().equals(first)).toBe(true);
  });

  it('loads both parquet-wasm builds; the esm build (initSync) writes the same bytes', () => {
    expect(parquetWasm()).toBe(loadParquetWasm('node'));
    const esm = loadParquetWasm('esm');
    const small = buildTable(SHARD_TABLES.defects, rows.slice(0, 50));
    const viaEsm = esm.writeParquet(
      esm.Table.fromIPCStream(toArrowIpcStream(small)),
      new esm.WriterPropertiesBuilder().setCompression(esm.Compression.ZSTD).build(),
    );
    const viaNode = parquetWasm().writeParquet(
      parquetWasm().Table.fromIPCStream(toArrowIpcStream(small)),
      new (parquetWasm().WriterPropertiesBuilder)().setCompression(parquetWasm().Compression.ZSTD).build(),
    );
    expect(Buffer.from(viaEsm).equals(Buffer.from(viaNode))).toBe(true);
  });
});

function toArrowIpcStream(t: Table): Uint8Array {
  return tableToIPC(t, 'stream');
}
