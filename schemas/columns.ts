import { z } from 'zod';

/**
 * Column primitives of the shard tables, in their own file so that every table's schema
 * (schemas/outputs.ts, schemas/repair.ts) can use them without importing each other.
 *
 * Storage widths are explicit because Parquet readers type columns from them:
 *   int32()      -> Int32  (counts, step numbers: small by construction)
 *   int64()      -> Int64  (offsets, token totals: may outgrow 2^31)
 *   z.number()   -> Float64
 *   z.enum / dictString() -> Dictionary<Int32, Utf8> (low-cardinality strings)
 */
/** Storage hint read by the Arrow mapper; attach with `.meta({ arrow: ... })` as the LAST call. */
export type ArrowHint = 'int32' | 'int64' | 'dict' | 'utf8';
declare module 'zod' {
  interface GlobalMeta {
    arrow?: ArrowHint;
  }
}

export const int32 = () => z.int32();
/** Safe integer (|n| < 2^53) stored as Int64; JS keeps it a number, the mapper writes a BigInt. */
export const int64 = () => z.int();
/** A string column with few distinct values (hashes, source names): dictionary-encoded. */
export const dictString = () => z.string().meta({ arrow: 'dict' });

export const FILTER_DECISIONS = ['keep', 'drop', 'review'] as const;
export const FilterDecision = z.enum(FILTER_DECISIONS);
export type FilterDecision = z.infer<typeof FilterDecision>;
