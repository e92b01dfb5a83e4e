/**
 * zod object schema -> Arrow schema, and validated rows -> Arrow Table.
 *
 * The shard tables are defined once in schemas/outputs.ts; this module reads the zod definition
 * (types, integer formats, nullability, `.meta({ arrow })` hints) instead of retyping columns.
 * Mapping:
 *   z.string()                       -> Utf8   (hint 'dict' -> Dictionary<Int32, Utf8>)
 *   z.enum([...strings])             -> Dictionary<Int32, Utf8>   (hint 'utf8' -> Utf8)
 *   z.boolean()                      -> Bool
 *   z.int32()                        -> Int32
 *   z.int() / z.uint32() / z.bigint() -> Int64  (hint 'int32' narrows a z.int())
 *   z.number()                       -> Float64
 *   z.array(T)                       -> List<T>    (any mappable T, lists and objects included)
 *   z.object({...}) inside a row     -> Struct<...> (fields in key order)
 *   below the top level, dictionary strings and enums become plain Utf8
 *   .nullable() / .optional()        -> nullable field; everything else is NOT NULL
 */
import { z } from 'zod';
import {
  Bool,
  Dictionary,
  Field,
  Float64,
  Int32,
  Int64,
  List,
  RecordBatch,
  Schema,
  Struct,
  Table,
  Utf8,
  makeData,
  type DataType,
} from 'apache-arrow';
import type { ArrowHint } from '../../../schemas/outputs.js';
import { columnData } from './arrow-columns.js';
import { ReasoningJuryError } from '../../util/errors.js';

type AnyObject = z.ZodObject<z.ZodRawShape>;

/** The parts of zod 4's internal definition the mapper reads. */
interface ZodDefView {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
  format?: string;
  entries?: Record<string, string | number>;
}
const defOf = (s: z.ZodType): ZodDefView => s._zod.def as unknown as ZodDefView;
const hintOf = (s: z.ZodType): ArrowHint | undefined => z.globalRegistry.get(s)?.arrow;

export class ArrowMappingError extends ReasoningJuryError {
  override get kind() {
    return 'internal' as const;
  }
  override name = 'ArrowMappingError';
}

type Convert = (v: unknown) => unknown;
interface Column {
  name: string;
  field: Field;
  /** JS value -> what the Arrow builder expects (only Int64 needs it: BigInt). */
  convert: Convert | null;
}

const WRAPPERS_NULLABLE = new Set(['nullable', 'optional']);
const WRAPPERS_TRANSPARENT = new Set(['default', 'prefault', 'readonly', 'catch', 'nonoptional']);

/** Peels nullable/optional/default wrappers; hints may sit on any layer (outermost wins). */
function unwrap(schema: z.ZodType): { inner: z.ZodType; nullable: boolean; hint: ArrowHint | undefined } {
  let s = schema;
  let nullable = false;
  let hint = hintOf(s);
  for (;;) {
    const d = defOf(s);
    if (!d.innerType || !(WRAPPERS_NULLABLE.has(d.type) || WRAPPERS_TRANSPARENT.has(d.type))) break;
    if (WRAPPERS_NULLABLE.has(d.type)) nullable = true;
    if (d.type === 'nonoptional') nullable = false;
    s = d.innerType;
    hint ??= hintOf(s);
  }
  return { inner: s, nullable, hint };
}

const toBigInt: Convert = (v) => (v === null || v === undefined ? v : typeof v === 'bigint' ? v : BigInt(v as number));

function scalarType(s: z.ZodType, hint: ArrowHint | undefined, path: string, nested: boolean): Mapped {
  const d = defOf(s);
  switch (d.type) {
    case 'string':
      return { type: hint === 'dict' && !nested ? dict() : new Utf8(), convert: null };
    case 'enum': {
      if (!Object.values(d.entries ?? {}).every((v) => typeof v === 'string')) {
        throw new ArrowMappingError(`${path}: only string enums map to Arrow`);
      }
      return { type: hint === 'utf8' || nested ? new Utf8() : dict(), convert: null };
    }
    case 'boolean':
      return { type: new Bool(), convert: null };
    case 'bigint':
      return { type: new Int64(), convert: null };
    case 'number': {
      const isInt = d.format === 'int32' || d.format === 'uint32' || d.format === 'safeint';
      if (hint === 'int32' || hint === 'int64') {
        if (!isInt) throw new ArrowMappingError(`${path}: arrow hint '${hint}' on a non-integer number`);
        return hint === 'int32' ? { type: new Int32(), convert: null } : { type: new Int64(), convert: toBigInt };
      }
      if (d.format === 'int32') return { type: new Int32(), convert: null };
      if (isInt) return { type: new Int64(), convert: toBigInt };
      return { type: new Float64(), convert: null };
    }
    default:
      throw new ArrowMappingError(`${path}: zod type '${d.type}' has no Arrow mapping`);
  }
}

// Int32 indices: the default pyarrow, DuckDB and Spark all read without surprises.
const dict = (): DataType => new Dictionary(new Utf8(), new Int32());

interface Mapped {
  type: DataType;
  convert: Convert | null;
}

/**
 * Any mappable zod type -> Arrow type. Below the top level (`nested`) dictionaries become plain
 * Utf8: one dictionary per nested field buys little and is where readers differ most.
 */
function typeFor(inner: z.ZodType, hint: ArrowHint | undefined, path: string, nested: boolean): Mapped {
  const d = defOf(inner);
  if (d.type === 'array') {
    const el = unwrap(d.element as z.ZodType);
    const { type, convert } = typeFor(el.inner, el.hint, `${path}[]`, true);
    const convertList: Convert | null = convert ? (v) => (Array.isArray(v) ? v.map(convert) : v) : null;
    return { type: new List(new Field('item', type, el.nullable)), convert: convertList };
  }
  if (d.type === 'object') return structFor(inner as AnyObject, path);
  return scalarType(inner, hint, path, nested);
}

/** z.object inside a row -> Struct, its fields in key order; converts only fields that need it. */
function structFor(schema: AnyObject, path: string): Mapped {
  const fields: Field[] = [];
  const converts: [string, Convert][] = [];
  for (const [name, s] of Object.entries(schema.shape)) {
    const { inner, nullable, hint } = unwrap(s as z.ZodType);
    const { type, convert } = typeFor(inner, hint, `${path}.${name}`, true);
    fields.push(new Field(name, type, nullable));
    if (convert) converts.push([name, convert]);
  }
  const convert: Convert | null =
    converts.length === 0
      ? null
      : (v) => {
          if (v === null || v === undefined || typeof v !== 'object') return v;
          const o = { ...(v as Record<string, unknown>) };
          for (const [name, c] of converts) o[name] = c(o[name]);
          return o;
        };
  return { type: new Struct(fields), convert };
}

function columnFor(name: string, schema: z.ZodType): Column {
  const { inner, nullable, hint } = unwrap(schema);
  const { type, convert } = typeFor(inner, hint, name, false);
  return { name, field: new Field(name, type, nullable), convert };
}

const planCache = new WeakMap<AnyObject, Column[]>();

function planFor(schema: AnyObject): Column[] {
  let plan = planCache.get(schema);
  if (!plan) {
    plan = Object.entries(schema.shape).map(([name, s]) => columnFor(name, s as z.ZodType));
    planCache.set(schema, plan);
  }
  return plan;
}

/** Arrow schema for a zod object schema, fields in the object's key order. */
export function arrowSchemaFor(schema: AnyObject, metadata?: Record<string, string>): Schema {
  const fields = planFor(schema).map((c) => c.field);
  return new Schema(fields, metadata ? new Map(Object.entries(metadata)) : undefined);
}

export class ShardRowError extends ReasoningJuryError {
  override get kind() {
    return 'internal' as const;
  }
  override name = 'ShardRowError';
  constructor(
    readonly rowIndex: number,
    readonly issues: z.core.$ZodIssue[],
  ) {
    const first = issues[0];
    const where = first ? `${first.path.join('.') || '(row)'}: ${first.message}` : 'invalid';
    super(`row ${rowIndex} does not match the shard schema: ${where}${issues.length > 1 ? ` (+${issues.length - 1} more)` : ''}`);
  }
}

export interface BuildTableOptions {
  /** Parse every row with the zod schema first (default true). Off only for rows already parsed. */
  validate?: boolean;
  /** Arrow schema metadata (kept in Parquet's ARROW:schema and the IPC footer). */
  metadata?: Record<string, string>;
}

/**
 * One-batch Arrow Table from rows. Rows are validated against the zod schema (no coercion, so a
 * "12" where an int belongs is an error rather than a string-typed column) and unknown keys are
 * dropped. One batch keeps dictionary-encoded columns legal in the IPC *file* format, which
 * forbids dictionary replacement between batches.
 */
export function buildTable<S extends AnyObject>(schema: S, rows: readonly unknown[], opts: BuildTableOptions = {}): Table {
  const plan = planFor(schema);
  const arrowSchema = arrowSchemaFor(schema, opts.metadata);
  let parsed = rows as readonly Record<string, unknown>[];
  if (opts.validate ?? true) {
    const out: Record<string, unknown>[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const r = schema.safeParse(rows[i]);
      if (!r.success) throw new ShardRowError(i, r.error.issues);
      out[i] = r.data as Record<string, unknown>;
    }
    parsed = out;
  }
  // Column-wise: each column is encoded in one pass (see arrow-columns.ts).
  const children = plan.map((col) => {
    const values: unknown[] = new Array(parsed.length);
    for (let i = 0; i < parsed.length; i++) {
      const v = parsed[i]![col.name];
      if ((v === null || v === undefined) && !col.field.nullable) {
        throw new ShardRowError(i, [{ code: 'custom', path: [col.name], message: 'null in a NOT NULL column', input: v }]);
      }
      values[i] = col.convert ? col.convert(v) : v;
    }
    return columnData(col.field.type, values);
  });
  const data = makeData({ type: new Struct(arrowSchema.fields), length: rows.length, nullCount: 0, children });
  return new Table([new RecordBatch(arrowSchema, data)]);
}
