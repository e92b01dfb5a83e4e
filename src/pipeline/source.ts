/**
 * The contract every record source implements (local files, S3 objects, Kafka topics). The
 * pipeline owns it; connectors implement it and never see the stage or the jury.
 *
 * A source is a pull-based async iterable: the consumer asks for the next item, so a slow
 * consumer slows reading and nothing is buffered beyond one read chunk / one Parquet row group.
 * Sources never throw for bad data: every unit of input becomes either a parsed object (`ok`) or
 * a dead letter (`!ok`) carrying the reason and the original bytes as (truncated) text. Sources
 * only parse; turning `raw` into a TraceRecord is `mapRecord` (src/pipeline/record-mapping.ts).
 */
import type { Schema } from 'apache-arrow';
import type { SourcePosition } from '../../schemas/trace.js';

export interface SourceOkItem {
  position: SourcePosition;
  ok: true;
  /** The parsed row: a plain object (JSON object or Parquet row). */
  raw: unknown;
  /** Connector facts about the row (Kafka topic/offset/headers), merged into record.meta. */
  meta?: Record<string, unknown>;
  /** sha256 (base64) of the bytes the row was read from, when the connector has them (JSONL lines): its content identity. */
  digest?: string;
  /**
   * The Arrow schema of `raw`'s columns when the input has one (Parquet: from the footer, one
   * object shared by every row of the file); the curated corpus writes them back with it.
   */
  columns?: Schema;
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
  digest?: string;
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
  /** Present on sources whose units interleave and move between instances (Kafka). */
  readonly streaming?: StreamingSource;
  /**
   * For probes: false while the source cannot deliver (a consumer not yet in its group, or
   * stopped). Absent: connected once opened (files, S3 listings).
   */
  connected?(): boolean;
  /** For metrics: how far behind the source's end each unit is (Kafka: per assigned partition). */
  lag?(): SourceLag[];
}

/** Records a unit holds beyond what is in committed shards, as last seen. */
export interface SourceLag {
  unit: string;
  lag: number;
}

/**
 * What the stage may do to a streaming source's units while it runs; safe to call at any time.
 * Units are named by their token (src/pipeline/positions.ts `unitToken`).
 */
export interface UnitControl {
  /** Close the unit's open range now (an idle partition): it commits once complete. */
  closeUnit(unitToken: string): void;
  /**
   * Forget the unit's uncommitted ranges (a revoked partition): their rows are never written
   * and the next owner re-reads them. A range already being written still finishes.
   * Returns how many records were dropped.
   */
  dropUnit(unitToken: string): number;
}

/** A range about to be written, as the source sees it. */
export interface RangeClaim {
  unit: string;
  unitToken: string;
  firstOffset: number;
  lastOffset: number;
  /** offsets of the records the range really holds (a range may span skipped offsets) */
  offsets: readonly number[];
}

/** The source's word on writing a range: go ahead, or leave it unwritten and why. */
export type Clearance = { write: true } | { write: false; outcome: 'skipped' | 'conflicted'; reason: string };

/** How a range left the range writer. `existing`: its manifest was already there (ours or a racing writer's). */
export type RangeOutcome = 'committed' | 'existing' | 'skipped' | 'conflicted';

export interface RangeReport extends RangeClaim {
  first: string;
  last: string;
  records: number;
  outcome: RangeOutcome;
}

/**
 * The hooks a streaming source adds, after the Kafka Connect sink: the stage asks before it
 * writes a range, tells the outcome after, and then pulls the positions that are safe to
 * acknowledge and hands them back to be acknowledged (Kafka: committed to the group).
 */
export interface StreamingSource {
  attach(ctl: UnitControl): void;
  clearance(claim: RangeClaim): Promise<Clearance>;
  rangeDone(report: RangeReport): void;
  /** positions whose every record is in committed shards and not yet acknowledged */
  safeOffsets(): SafeOffset[];
  acknowledge(offsets: SafeOffset[]): Promise<void>;
  /**
   * The stage stopped pulling for a while (an endpoint is down) or goes on again: stop fetching
   * meanwhile (Kafka: pause every assigned partition), staying a member of the group.
   */
  hold?(held: boolean): void;
}

/** Next position to read in a unit: everything before it is in committed shards. */
export interface SafeOffset {
  unit: string;
  next: number;
}

/** Ranges already in the output, from their manifests: unit token -> first offset -> last offset. */
export type CommittedRanges = Map<string, Map<number, number>>;

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
