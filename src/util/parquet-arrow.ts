/**
 * A Parquet file's schema as an Arrow schema, so the curated corpus can write a Parquet input's
 * columns back with their own types (docs/layout.md, "The curated corpus").
 *
 * Mapped: BOOLEAN; INT32/INT64 with their INT_8..UINT_64 annotations; FLOAT, DOUBLE; DATE;
 * TIMESTAMP (millis, micros, nanos; values as hyparquet reads them, millisecond precision);
 * strings, enums and JSON (Utf8); BYTE_ARRAY without annotation (Utf8, as hyparquet decodes it);
 * LIST; groups (Struct). Anything else (DECIMAL, MAP, INT96, FIXED_LEN_BYTE_ARRAY, VARIANT...)
 * becomes Utf8 holding the value as JSON text: kept, not typed. `converter` turns a value of the
 * row objects hyparquet yields (after normalizeParquetValue) into what Arrow's builder takes.
 */
import { parquetSchema, type FileMetaData } from 'hyparquet';
import { Bool, DataType, DateDay, Field, Float32, Float64, Int16, Int32, Int64, Int8, List, Schema, Struct, TimeUnit, Timestamp, Uint16, Uint32, Uint64, Uint8, Utf8 } from 'apache-arrow';

type SchemaTree = ReturnType<typeof parquetSchema>;

/** JSON text for values no typed column holds; bigint and bytes made JSON-safe. */
export function jsonText(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x instanceof Uint8Array ? Buffer.from(x).toString('base64') : x));
}

function intType(bits: number, signed: boolean): DataType {
  if (bits === 8) return signed ? new Int8() : new Uint8();
  if (bits === 16) return signed ? new Int16() : new Uint16();
  if (bits === 32) return signed ? new Int32() : new Uint32();
  return signed ? new Int64() : new Uint64();
}

const INT_ANNOTATIONS: Record<string, [number, boolean]> = {
  INT_8: [8, true], INT_16: [16, true], INT_32: [32, true], INT_64: [64, true],
  UINT_8: [8, false], UINT_16: [16, false], UINT_32: [32, false], UINT_64: [64, false],
};

function leafType(node: SchemaTree): DataType | null {
  const e = node.element;
  const lt = e.logical_type;
  const ct = e.converted_type;
  if (ct === 'DECIMAL' || ct === 'MAP' || ct === 'MAP_KEY_VALUE' || ct === 'INTERVAL' || lt?.type === 'DECIMAL' || lt?.type === 'UUID' || lt?.type === 'FLOAT16') return null;
  if (lt?.type === 'INTEGER') return intType(lt.bitWidth, lt.isSigned);
  if (ct && INT_ANNOTATIONS[ct]) return intType(...INT_ANNOTATIONS[ct]);
  if (ct === 'DATE' || lt?.type === 'DATE') return new DateDay();
  if (ct === 'TIMESTAMP_MILLIS') return new Timestamp(TimeUnit.MILLISECOND, 'UTC');
  if (ct === 'TIMESTAMP_MICROS') return new Timestamp(TimeUnit.MICROSECOND, 'UTC');
  if (lt?.type === 'TIMESTAMP') {
    const unit = lt.unit === 'NANOS' ? TimeUnit.NANOSECOND : lt.unit === 'MICROS' ? TimeUnit.MICROSECOND : TimeUnit.MILLISECOND;
    return new Timestamp(unit, lt.isAdjustedToUTC ? 'UTC' : null);
  }
  switch (e.type) {
    case 'BOOLEAN':
      return new Bool();
    case 'INT32':
      return new Int32();
    case 'INT64':
      return new Int64();
    case 'FLOAT':
      return new Float32();
    case 'DOUBLE':
      return new Float64();
    case 'BYTE_ARRAY':
      return new Utf8();
    default:
      return null; // INT96, FIXED_LEN_BYTE_ARRAY
  }
}

function isList(node: SchemaTree): boolean {
  const child = node.children[0];
  return (node.element.converted_type === 'LIST' || node.element.logical_type?.type === 'LIST') && node.children.length === 1 && child?.element.repetition_type === 'REPEATED';
}

function nodeType(node: SchemaTree): DataType {
  if (node.children.length === 0) {
    const t = leafType(node);
    const type = t ?? new Utf8();
    return node.element.repetition_type === 'REPEATED' ? new List(new Field('item', type, false)) : type;
  }
  if (isList(node)) {
    const repeated = node.children[0]!;
    // 3-level lists wrap the element in a one-field group; 2-level ones repeat it directly.
    if (repeated.children.length === 1) {
      const element = repeated.children[0]!;
      return new List(new Field('item', nodeType(element), element.element.repetition_type !== 'REQUIRED'));
    }
    const item = repeated.children.length === 0 ? (leafType(repeated) ?? new Utf8()) : structOf(repeated);
    return new List(new Field('item', item, false));
  }
  if (node.element.converted_type === 'MAP' || node.element.logical_type?.type === 'MAP') return new Utf8();
  return structOf(node);
}

function structOf(node: SchemaTree): Struct {
  return new Struct(node.children.map(fieldOf));
}

function fieldOf(node: SchemaTree): Field {
  return new Field(node.element.name, nodeType(node), node.element.repetition_type !== 'REQUIRED');
}

/** The Arrow schema of a Parquet file's columns (top-level fields in file order). */
export function arrowSchemaOfParquet(metadata: FileMetaData): Schema {
  return new Schema(parquetSchema(metadata).children.map(fieldOf));
}

/** The schema for a source's items, or undefined when it cannot be mapped (the corpus then keeps JSON text). */
export function inputColumns(metadata: FileMetaData): Schema | undefined {
  try {
    return arrowSchemaOfParquet(metadata);
  } catch {
    return undefined;
  }
}

/** A row value (as hyparquet + normalizeParquetValue give it) -> what Arrow's builder for `type` takes. */
export function toArrowValue(type: DataType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (DataType.isUtf8(type)) return typeof v === 'string' ? v : jsonText(v);
  if (DataType.isInt(type) && type.bitWidth === 64) return typeof v === 'bigint' ? v : BigInt(v as number | string);
  if (DataType.isTimestamp(type) || DataType.isDate(type)) return v instanceof Date ? v : new Date(v as number | string);
  if (DataType.isBinary(type)) return v instanceof Uint8Array ? v : new TextEncoder().encode(String(v));
  if (DataType.isList(type)) {
    const item = type.children[0]!.type;
    return Array.isArray(v) ? v.map((x) => toArrowValue(item, x)) : null;
  }
  if (DataType.isStruct(type)) {
    if (typeof v !== 'object') return null;
    const o = v as Record<string, unknown>;
    return Object.fromEntries(type.children.map((f) => [f.name, toArrowValue(f.type, o[f.name])]));
  }
  return v;
}
