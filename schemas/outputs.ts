import { z } from 'zod';
import { Impact } from './defect.js';
import { JuryMode, TerminationReason } from './verdict.js';

/**
 * Rows of the shard tables (out/<table>/source=<name>/part-*.parquet). These zod schemas are the
 * one definition: TypeScript types come from z.infer and the Arrow/Parquet schemas are derived
 * from them by src/pipeline/arrow-schema.ts, so a column is added here and nowhere else.
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

const rate = z.number().min(0).max(1);

export const VerdictRow = z.object({
  record_id: z.string().min(1),
  mode: JuryMode,
  jurors_total: int32().nonnegative(),
  jurors_ok: int32().nonnegative(),
  n_steps: int32().nonnegative(),
  n_defects: int32().nonnegative(),
  max_impact: Impact.nullable(),
  confidence: rate,
  termination_reason: TerminationReason,
  rounds: int32().nonnegative(),
  degraded: z.boolean(),
  degraded_reason: z.string().nullable(),
  error: z.string().nullable(),
  tokens_in: int64().nonnegative(),
  tokens_out: int64().nonnegative(),
  cost_usd: z.number().nonnegative(),
  latency_ms: z.number().nonnegative(),
  prompt_hash: dictString(),
  config_hash: dictString(),
  /** Also the Hive partition value (source=<name>): plain Utf8 so pyarrow can merge the two. */
  source: z.string(),
  source_unit: dictString(),
  source_offset: int64().nonnegative(),
  /** JSON text of the record's meta (free-form, so not a typed column); null when empty. */
  meta: z.string().nullable(),
});
export type VerdictRow = z.infer<typeof VerdictRow>;

export const DefectRow = z.object({
  record_id: z.string().min(1),
  /** Stable across re-runs of the same verdict: see defectId(). */
  defect_id: z.string().min(1),
  statement_refs: z.array(int32().positive()),
  impact: Impact,
  what_went_wrong: z.string(),
  evidence: z.string(),
  correct_value: z.string().nullable(),
  vote_count: int32().nonnegative().nullable(),
  /** Empty when the jury mode does not vote. */
  voters: z.array(z.string()),
  // Taxonomy columns: filled by the taxonomy step later, null until then.
  category_id: dictString().nullable(),
  leaf_id: dictString().nullable(),
  taxonomy_status: dictString().nullable(),
});
export type DefectRow = z.infer<typeof DefectRow>;

export const StepRow = z.object({
  record_id: z.string().min(1),
  /** 1-based, matching statement_refs and STEP-n. */
  step_index: int32().positive(),
  max_impact: Impact.nullable(),
  label: z.boolean(),
  defect_ids: z.array(z.string()),
});
export type StepRow = z.infer<typeof StepRow>;

export const FILTER_DECISIONS = ['keep', 'drop', 'review'] as const;
export const FilterDecision = z.enum(FILTER_DECISIONS);
export type FilterDecision = z.infer<typeof FilterDecision>;

export const DecisionRow = z.object({
  record_id: z.string().min(1),
  decision: FilterDecision,
  reason: dictString(),
  n_neutral: int32().nonnegative(),
  n_minor: int32().nonnegative(),
  n_major: int32().nonnegative(),
  n_fatal: int32().nonnegative(),
  fatal_step_rate: rate,
  flagged_step_rate: rate,
});
export type DecisionRow = z.infer<typeof DecisionRow>;

export const DeadLetterRow = z.object({
  source: z.string(), // = the partition value, see VerdictRow.source
  source_unit: dictString(),
  source_offset: int64().nonnegative(),
  error: z.string(),
  raw: z.string(),
  raw_truncated: z.boolean(),
});
export type DeadLetterRow = z.infer<typeof DeadLetterRow>;

/**
 * The curated corpus (corpus/decision=<d>/source=<name>/part-*.parquet, docs/layout.md): one row
 * per judged input record. These are its curation columns; the last column, `record`, is the
 * input record as it was read and is not a fixed type: a Struct of the input's own columns and
 * types for Parquet input, the record's JSON text (Utf8) for JSON input (JSONL, Kafka).
 */
export const CorpusRow = z.object({
  record_id: z.string().min(1),
  /** Also the Hive partition value (decision=<d>): plain Utf8, like `source`. */
  decision: FilterDecision.meta({ arrow: 'utf8' }),
  /** Name of the filter rule that decided (`rule <n>` when unnamed); null: no rule matched. */
  rule: dictString().nullable(),
  /** The decisions table's reason: the rule and what it saw. */
  reason: z.string(),
  n_steps: int32().nonnegative(),
  /** Steps labelled erroneous (at or above severity_threshold). */
  flagged_steps: int32().nonnegative(),
  n_neutral: int32().nonnegative(),
  n_minor: int32().nonnegative(),
  n_major: int32().nonnegative(),
  n_fatal: int32().nonnegative(),
  fatal_step_rate: rate,
  /** Up to three taxonomy categories by defect count (ties by id); empty without taxonomy. */
  top_categories: z.array(z.string()),
  source: z.string(),
  source_unit: dictString(),
  source_offset: int64().nonnegative(),
});
export type CorpusRow = z.infer<typeof CorpusRow>;

/** Table name -> row schema; the name is also the folder under out/. */
export const SHARD_TABLES = {
  verdicts: VerdictRow,
  defects: DefectRow,
  steps: StepRow,
  decisions: DecisionRow,
  dead_letters: DeadLetterRow,
} as const;
export type ShardTableName = keyof typeof SHARD_TABLES;
export const SHARD_TABLE_NAMES = Object.keys(SHARD_TABLES) as ShardTableName[];
export const ShardTableName = z.enum(SHARD_TABLE_NAMES as [ShardTableName, ...ShardTableName[]]);
export type ShardRowOf<T extends ShardTableName> = z.infer<(typeof SHARD_TABLES)[T]>;

/** "<record_id>#d<ordinal>": ordinal is the defect's index in the final verdict. */
export function defectId(recordId: string, ordinal: number): string {
  return `${recordId}#d${ordinal}`;
}

/** Caps a dead letter's raw text at maxChars without splitting a surrogate pair. */
export function truncateRaw(raw: string, maxChars = 65_536): { raw: string; raw_truncated: boolean } {
  if (raw.length <= maxChars) return { raw, raw_truncated: false };
  let end = maxChars;
  const c = raw.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end -= 1; // high surrogate would be orphaned
  return { raw: raw.slice(0, end), raw_truncated: true };
}

// ---- Commit manifest: out/_commits/<first>-<last>.json, written last ----

/** Formats of the shard tables (`--format`). */
export const SHARD_FORMATS = ['parquet', 'arrow'] as const;
export const ShardFormat = z.enum(SHARD_FORMATS);
export type ShardFormat = z.infer<typeof ShardFormat>;

/** Formats of the curated corpus (`output.corpus.format`). */
export const CORPUS_FORMATS = ['parquet', 'jsonl'] as const;
export const CorpusFormat = z.enum(CORPUS_FORMATS);
export type CorpusFormat = z.infer<typeof CorpusFormat>;

/** Every format a part file can have; each lives under its own root (src/pipeline/layout.ts). */
export const FileFormat = z.enum(['parquet', 'arrow', 'jsonl']);
export type FileFormat = z.infer<typeof FileFormat>;

/** Tables a manifest lists: the shard tables and the corpus. */
export const MANIFEST_TABLE_NAMES = [...SHARD_TABLE_NAMES, 'corpus'] as const;
export const ManifestTableName = z.enum(MANIFEST_TABLE_NAMES as unknown as [ShardTableName | 'corpus', ...(ShardTableName | 'corpus')[]]);
export type ManifestTableName = z.infer<typeof ManifestTableName>;

export const ShardFileEntry = z.object({
  key: z.string(),
  table: ManifestTableName,
  format: FileFormat,
  rows: z.int().nonnegative(),
  bytes: z.int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type ShardFileEntry = z.infer<typeof ShardFileEntry>;

/** Which records of which source unit a range holds. */
export const ManifestRange = z.object({
  unit: z.string(),
  unit_token: z.string(),
  first_offset: z.int().nonnegative(),
  last_offset: z.int().nonnegative(),
  records: z.int().nonnegative(),
});
export type ManifestRange = z.infer<typeof ManifestRange>;

/**
 * The settings range boundaries and file names depend on. Resuming with other values would
 * plan different ranges under different names, so a run checks them against the output's.
 */
export const RangeSettings = z.object({
  max_records: z.int().positive(),
  max_chars: z.int().positive(),
  formats: z.array(ShardFormat).min(1),
  /** the corpus format, or 'off'; absent in manifests written before the corpus existed */
  corpus: z.enum([...CORPUS_FORMATS, 'off']).optional(),
});
export type RangeSettings = z.infer<typeof RangeSettings>;

export const CommitManifest = z.object({
  version: z.literal(1),
  source: z.string(),
  first: z.string(),
  last: z.string(),
  committed_at: z.string(),
  files: z.array(ShardFileEntry),
  /** rows per table in this range (same for every format of that table; corpus: all decisions). */
  rows: z.partialRecord(ManifestTableName, z.int().nonnegative()),
  /** distinct record ids across the range's tables (dead letters have none). */
  record_ids: z.int().nonnegative(),
  /** sha256 over "key sha256\n" of every file, in key order: one value to compare ranges by. */
  checksum: z.string().regex(/^[0-9a-f]{64}$/),
  /** the range's unit and offsets (absent only in manifests written before it existed) */
  range: ManifestRange.optional(),
  settings: RangeSettings.optional(),
  /**
   * Where the parts were staged before they were moved to their keys. While objects remain
   * under it the range is committed but not yet fully published; the next commit of the range,
   * or ShardCommitter.recover at a run's start, finishes moving them.
   */
  staging: z.string().optional(),
  /** opaque to the stage: facts a caller wants kept with the range; older manifests held `range` here. */
  extra: z.record(z.string(), z.unknown()).optional(),
});
export type CommitManifest = z.infer<typeof CommitManifest>;
