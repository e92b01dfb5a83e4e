/**
 * The contract every record source implements (files now; Kafka and S3 later).
 *
 * A source is a pull-based async iterable: the consumer asks for the next item, so a slow
 * consumer slows reading and nothing is buffered beyond one read chunk / one Parquet row group.
 * Sources never throw for bad data: every unit of input becomes either a parsed object (`ok`) or
 * a dead letter (`!ok`) carrying the reason and the original bytes as (truncated) text. Sources
 * only parse; turning `raw` into a TraceRecord is `mapRecord` (src/pipeline/record-mapping.ts).
 */
import type { SourcePosition } from '../../schemas/trace.js';

export interface SourceOkItem {
  position: SourcePosition;
  ok: true;
  /** The parsed row: a plain object (JSON object or Parquet row). */
  raw: unknown;
  /** Connector facts about the row (Kafka topic/offset/headers), merged into record.meta. */
  meta?: Record<string, unknown>;
}

export interface SourceDeadItem {
  position: SourcePosition;
  ok: false;
  /** Why the input could not be parsed, e.g. "invalid JSON: Unexpected token ...". */
  error: string;
  /** The original bytes as text (invalid UTF-8 replaced by U+FFFD), cut to a byte limit. */
  rawText: string;
  /** True when rawText was cut. */
  rawTextTruncated: boolean;
}

export type SourceItem = SourceOkItem | SourceDeadItem;

/** Totals known up front, for progress bars / ETA. Either may be unknown. */
export interface SizeHint {
  totalRows?: number;
  /** Bytes as stored (compressed size for .gz/.zst), comparable to SourceProgress.bytesRead. */
  totalBytes?: number;
}

export interface SourceProgress {
  /** Items yielded so far (ok + dead). */
  items: number;
  /** Bytes pulled from storage so far. */
  bytesRead: number;
}

export interface Source extends AsyncIterable<SourceItem> {
  /** Human-readable identity, e.g. "file:/data/traces". */
  readonly name: string;
  /** Totals when cheaply knowable (file sizes, Parquet footers); resolves to {} otherwise. */
  sizeHint?(): Promise<SizeHint>;
  progress?(): SourceProgress;
  /** Stops reading and releases handles; safe to call twice, before or during iteration. */
  close(): Promise<void>;
}

/** Default cap for SourceDeadItem.rawText, in UTF-8 bytes. */
export const DEFAULT_MAX_RAW_TEXT_BYTES = 64 * 1024;

const lenientDecoder = new TextDecoder('utf-8', { fatal: false });

/** Bytes → dead-letter text, cut to `limit` bytes first so a 16 MB line costs only `limit`. */
export function rawTextFromBytes(
  bytes: Uint8Array,
  limit = DEFAULT_MAX_RAW_TEXT_BYTES,
  knownTruncated = false,
): { rawText: string; rawTextTruncated: boolean } {
  const cut = bytes.length > limit;
  return {
    rawText: lenientDecoder.decode(cut ? bytes.subarray(0, limit) : bytes),
    rawTextTruncated: cut || knownTruncated,
  };
}

/** Any value → dead-letter text (JSON where possible), cut to `limit` bytes. */
export function rawTextFromValue(
  value: unknown,
  limit = DEFAULT_MAX_RAW_TEXT_BYTES,
): { rawText: string; rawTextTruncated: boolean } {
  let text: string;
  try {
    text = JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? String(value);
  } catch {
    text = String(value);
  }
  // Cheap pre-cut: a UTF-16 unit is at most 3 UTF-8 bytes, so `limit` chars always cover `limit` bytes.
  const head = text.length > limit ? text.slice(0, limit) : text;
  const bytes = Buffer.from(head, 'utf8');
  return rawTextFromBytes(bytes, limit, head.length < text.length);
}

export function deadItem(
  position: SourcePosition,
  error: string,
  raw: { rawText: string; rawTextTruncated: boolean },
): SourceDeadItem {
  return { position, ok: false, error, rawText: raw.rawText, rawTextTruncated: raw.rawTextTruncated };
}

const KB = 1024;
const MB = 1024 * 1024;

/** "10.0 MB" / "3.0 KB": sizes in messages, binary units. */
export function formatSize(bytes: number): string {
  return bytes >= MB ? `${(bytes / MB).toFixed(1)} MB` : `${(bytes / KB).toFixed(1)} KB`;
}

/** A limit as written in config: "8 MB", "16 MB", "1 KB", "1.5 MB". */
export function formatLimit(bytes: number): string {
  const [unit, div] = bytes >= MB ? ['MB', MB] : ['KB', KB];
  const n = bytes / (div as number);
  return `${Number.isInteger(n) ? n : Number(n.toFixed(2))} ${unit}`;
}
