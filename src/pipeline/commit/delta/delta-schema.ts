/**
 * Arrow schema -> Delta Lake schema (the `schemaString` of a table's metaData action).
 *
 * The Arrow schema is the one the part files were written with, read back from their Parquet
 * footers (src/util/parquet-arrow.ts), so the Delta schema follows the data contract of
 * schemas/outputs.ts through the same chain as the files: zod -> Arrow -> Parquet -> Delta.
 * Delta has no unsigned integers: an unsigned column widens to the next signed type (uint64 to
 * long, whose top half then reads negative: Parquet inputs with UINT_64 columns are rare).
 */
import { DataType, Precision, Type, type Field, type Schema } from 'apache-arrow';
import { ReasoningJuryError } from '../../../util/errors.js';

export type DeltaType =
  | string
  | { type: 'struct'; fields: DeltaField[] }
  | { type: 'array'; elementType: DeltaType; containsNull: boolean };

export interface DeltaField {
  name: string;
  type: DeltaType;
  nullable: boolean;
  metadata: Record<string, never>;
}

export interface DeltaStructType {
  type: 'struct';
  fields: DeltaField[];
}

export class DeltaSchemaError extends ReasoningJuryError {
  override get kind() {
    return 'internal' as const;
  }
  override name = 'DeltaSchemaError';
}

const SIGNED_INT: Record<number, string> = { 8: 'byte', 16: 'short', 32: 'integer', 64: 'long' };
const UNSIGNED_INT: Record<number, string> = { 8: 'short', 16: 'integer', 32: 'long', 64: 'long' };

function intType(t: DataType): string {
  const { bitWidth, isSigned } = t as unknown as { bitWidth: number; isSigned: boolean };
  const name = (isSigned ? SIGNED_INT : UNSIGNED_INT)[bitWidth];
  if (!name) throw new DeltaSchemaError(`no Delta type for a ${bitWidth}-bit integer`);
  return name;
}

function deltaType(t: DataType): DeltaType {
  switch (t.typeId) {
    case Type.Utf8:
    case Type.LargeUtf8:
      return 'string';
    case Type.Dictionary:
      return deltaType((t as unknown as { dictionary: DataType }).dictionary);
    case Type.Bool:
      return 'boolean';
    case Type.Int:
      return intType(t);
    case Type.Float:
      return (t as unknown as { precision: Precision }).precision === Precision.DOUBLE ? 'double' : 'float';
    case Type.Binary:
    case Type.LargeBinary:
      return 'binary';
    case Type.Date:
      return 'date';
    case Type.Timestamp:
      return 'timestamp';
    case Type.List: {
      const child = (t.children as Field[])[0]!;
      return { type: 'array', elementType: deltaType(child.type), containsNull: child.nullable };
    }
    case Type.Struct:
      return { type: 'struct', fields: (t.children as Field[]).map(deltaField) };
    default:
      throw new DeltaSchemaError(`no Delta type for the Arrow type ${String(t)}`);
  }
}

function deltaField(f: Field): DeltaField {
  return { name: f.name, type: deltaType(f.type), nullable: f.nullable, metadata: {} };
}

/**
 * The Delta struct type of a table whose parts have this Arrow schema. A partition column the
 * parts do not hold (defects, steps: their `source=` is only in the folder) is a string column
 * of the table all the same, filled by readers from each file's partition values.
 */
export function deltaSchema(schema: Schema, partitionColumns: readonly string[] = []): DeltaStructType {
  const fields = schema.fields.map(deltaField);
  for (const name of partitionColumns) {
    if (!fields.some((f) => f.name === name)) fields.push({ name, type: 'string', nullable: false, metadata: {} });
  }
  return { type: 'struct', fields };
}
