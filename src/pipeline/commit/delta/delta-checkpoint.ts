/**
 * A Delta checkpoint: the table's whole state at one version as a Parquet file of actions (one
 * action per row, a struct column per action kind), so a reader of a table with 100,000 commits
 * reads one file and the few commits after it instead of every commit since version 0.
 * Written with the same Arrow -> parquet-wasm path as the shards; read back with hyparquet.
 */
import { Bool, Field, Int32, Int64, List, Map_, Struct, Table, Utf8, makeBuilder, RecordBatch, Schema, makeData, type DataType } from 'apache-arrow';
import { parquetReadObjects } from 'hyparquet';
import { toParquet } from '../shard-format.js';
import type { AddAction, DeltaAction, MetaDataAction, ProtocolAction, TxnAction } from './delta-actions.js';

const str = (name: string, nullable = true) => new Field(name, new Utf8(), nullable);
const long = (name: string, nullable = true) => new Field(name, new Int64(), nullable);
const stringMap = (name: string, nullable: boolean, valuesNullable = true) =>
  new Field(name, new Map_(new Field('key_value', new Struct([str('key', false), str('value', valuesNullable)]), false) as never), nullable);

const ACTION_TYPES: Record<string, Struct> = {
  protocol: new Struct([new Field('minReaderVersion', new Int32(), false), new Field('minWriterVersion', new Int32(), false)]),
  metaData: new Struct([
    str('id', false),
    str('name'),
    str('description'),
    new Field('format', new Struct([str('provider', false), stringMap('options', false, false)]), false),
    str('schemaString', false),
    new Field('partitionColumns', new List(str('element', false)), false),
    stringMap('configuration', false, false),
    long('createdTime'),
  ]),
  add: new Struct([str('path', false), stringMap('partitionValues', false), long('size', false), long('modificationTime', false), new Field('dataChange', new Bool(), false), str('stats')]),
  txn: new Struct([str('appId', false), long('version', false), long('lastUpdated')]),
};
const COLUMNS = Object.keys(ACTION_TYPES);

/** JS value -> what Arrow's builder takes: bigint for Int64, Map for Map_, recursively. */
function toBuilderValue(type: DataType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (type instanceof Int64) return BigInt(v as number);
  if (type instanceof Map_) return new Map(Object.entries(v as Record<string, unknown>));
  if (type instanceof List) return (v as unknown[]).map((x) => toBuilderValue((type.children[0] as Field).type, x));
  if (type instanceof Struct) {
    const o = v as Record<string, unknown>;
    return Object.fromEntries(type.children.map((f) => [f.name, toBuilderValue(f.type, o[f.name])]));
  }
  return v;
}

/** The checkpoint's bytes for the table's current state (every live add, every txn, protocol and metaData). */
export function encodeCheckpoint(actions: readonly DeltaAction[]): Uint8Array {
  const fields = COLUMNS.map((c) => new Field(c, ACTION_TYPES[c]!, true));
  const children = fields.map((f) => {
    const b = makeBuilder({ type: f.type, nullValues: [null, undefined] });
    for (const a of actions) b.append(toBuilderValue(f.type, (a as Record<string, unknown>)[f.name]) as never);
    return b.finish().flush();
  });
  const schema = new Schema(fields);
  const data = makeData({ type: new Struct(fields), length: actions.length, nullCount: 0, children });
  return toParquet(new Table([new RecordBatch(schema, data)]), { compression: 'snappy' });
}

/** hyparquet gives a map as an object or as a list of {key, value}: accept either. */
function plainMap(v: unknown): Record<string, string | null> {
  if (!v) return {};
  if (Array.isArray(v)) return Object.fromEntries(v.map((e: { key: string; value: string | null }) => [e.key, e.value]));
  if (v instanceof Map) return Object.fromEntries(v) as Record<string, string | null>;
  return v as Record<string, string | null>;
}

const num = (v: unknown): number => (typeof v === 'bigint' ? Number(v) : (v as number));

function readAction(row: Record<string, unknown>): DeltaAction | null {
  const { protocol, metaData, add, txn } = row as Record<string, Record<string, unknown> | null | undefined>;
  if (add) {
    const a: AddAction = { path: add.path as string, partitionValues: plainMap(add.partitionValues), size: num(add.size), modificationTime: num(add.modificationTime), dataChange: add.dataChange as boolean };
    if (typeof add.stats === 'string') a.stats = add.stats;
    return { add: a };
  }
  if (txn) return { txn: { appId: txn.appId as string, version: num(txn.version), lastUpdated: num(txn.lastUpdated ?? 0) } satisfies TxnAction };
  if (metaData) {
    const fmt = metaData.format as Record<string, unknown>;
    const m: MetaDataAction = {
      id: metaData.id as string,
      format: { provider: 'parquet', options: plainMap(fmt?.options) as Record<string, string> },
      schemaString: metaData.schemaString as string,
      partitionColumns: (metaData.partitionColumns as string[]) ?? [],
      configuration: plainMap(metaData.configuration) as Record<string, string>,
      createdTime: num(metaData.createdTime ?? 0),
    };
    return { metaData: m };
  }
  if (protocol) return { protocol: { minReaderVersion: num(protocol.minReaderVersion), minWriterVersion: num(protocol.minWriterVersion) } satisfies ProtocolAction };
  return null; // remove tombstones and kinds we do not keep
}

/** The actions of a checkpoint file (ours or another Delta writer's, for the kinds we keep). */
export async function decodeCheckpoint(bytes: Uint8Array): Promise<DeltaAction[]> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  // Loaded here, not at the top: a run that only appends never reads a checkpoint, and the
  // decompressors (brotli tables, a snappy WebAssembly module) cost its start-up for nothing.
  const { compressors } = await import('hyparquet-compressors');
  const rows = await parquetReadObjects({ file, compressors, columns: COLUMNS });
  const out: DeltaAction[] = [];
  for (const r of rows) {
    const a = readAction(r as Record<string, unknown>);
    if (a) out.push(a);
  }
  return out;
}
