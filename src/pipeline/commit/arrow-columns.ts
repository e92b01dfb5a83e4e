/**
 * Column encoders: plain JS values -> Arrow Data.
 *
 * Utf8 (and lists, which are mostly lists of strings here) are encoded directly into one
 * buffer: apache-arrow's generic builders keep every pending string in a Map and encode them
 * one by one, which made them most of the shard write time (about 3x slower on 100k defects).
 * Everything else goes through the library's builders (dictionaries, ints, bools).
 */
import { DataType, makeBuilder, makeData, type Data, type List, type Struct, type Utf8 } from 'apache-arrow';

type Nullable<T> = T | null | undefined;

/** Arrow Data for one column; null/undefined are nulls. Values must already match `type`. */
export function columnData(type: DataType, values: readonly unknown[]): Data {
  if (DataType.isUtf8(type)) return utf8Data(type, values as readonly Nullable<string>[]);
  if (DataType.isList(type)) return listData(type, values as readonly Nullable<readonly unknown[]>[]);
  if (DataType.isStruct(type)) return structData(type, values as readonly Nullable<Record<string, unknown>>[]);
  const b = makeBuilder({ type, nullValues: [null, undefined] });
  for (const v of values) b.append(v);
  return b.finish().flush();
}

/** Validity bitmap (LSB order, padded to 8 bytes) only when there is a null. */
function validity(values: readonly unknown[]): { nullCount: number; nullBitmap?: Uint8Array } {
  let nullCount = 0;
  for (const v of values) if (v === null || v === undefined) nullCount++;
  if (nullCount === 0) return { nullCount };
  const bitmap = new Uint8Array(((values.length + 63) >> 6) << 3);
  for (let i = 0; i < values.length; i++) {
    if (values[i] !== null && values[i] !== undefined) bitmap[i >> 3]! |= 1 << (i & 7);
  }
  return { nullCount, nullBitmap: bitmap };
}

const MAX_OFFSET = 0x7fffffff; // Utf8/List use int32 offsets

function utf8Data(type: Utf8, values: readonly Nullable<string>[]): Data<Utf8> {
  const n = values.length;
  const valueOffsets = new Int32Array(n + 1);
  let buf = Buffer.allocUnsafeSlow(Math.max(1024, n * 32));
  let pos = 0;
  for (let i = 0; i < n; i++) {
    const s = values[i];
    if (s !== null && s !== undefined) {
      const worst = pos + s.length * 3; // one UTF-16 unit is at most 3 UTF-8 bytes
      if (worst > buf.length) {
        const next = Buffer.allocUnsafeSlow(Math.max(worst, buf.length * 2));
        buf.copy(next, 0, 0, pos);
        buf = next;
      }
      // Lone surrogates become U+FFFD, as TextEncoder (and so apache-arrow) does.
      pos += buf.write(s, pos, 'utf8');
      if (pos > MAX_OFFSET) throw new RangeError('Utf8 column exceeds 2 GiB; write smaller shards');
    }
    valueOffsets[i + 1] = pos;
  }
  const data = new Uint8Array(buf.buffer, buf.byteOffset, pos);
  return makeData({ type, length: n, ...validity(values), valueOffsets, data });
}

function listData(type: List, values: readonly Nullable<readonly unknown[]>[]): Data<List> {
  const n = values.length;
  const valueOffsets = new Int32Array(n + 1);
  const flat: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v !== null && v !== undefined) for (const x of v) flat.push(x);
    if (flat.length > MAX_OFFSET) throw new RangeError('List column exceeds 2^31 elements');
    valueOffsets[i + 1] = flat.length;
  }
  const child = columnData(type.children[0]!.type, flat);
  return makeData({ type, length: n, ...validity(values), valueOffsets, child });
}

/**
 * Struct: one child column per field, taken from each object by name. A null struct gets null
 * children (its validity bit hides them); a null inside a present struct must be allowed.
 */
function structData(type: Struct, values: readonly Nullable<Record<string, unknown>>[]): Data<Struct> {
  const n = values.length;
  const children = type.children.map((f) => {
    const col: unknown[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const o = values[i];
      const v = o === null || o === undefined ? null : o[f.name];
      if ((v === null || v === undefined) && o !== null && o !== undefined && !f.nullable) {
        throw new TypeError(`null in NOT NULL struct field ${f.name} (value ${i})`);
      }
      col[i] = v;
    }
    return columnData(f.type, col);
  });
  return makeData({ type, length: n, ...validity(values), children });
}
