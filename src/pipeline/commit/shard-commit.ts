/**
 * Writing and reading commit manifests; the file layout is in ./layout.ts, the protocol in
 * docs/layout.md ("How a range is committed").
 *
 * Keys are relative to the store root, which is the output folder (`out/`). A range's parts are
 * first written under its own staging folder (`_staging/<first>-<last>.<nonce>/`, which no
 * `*.parquet` glob and no Hive dataset reader picks up), then its manifest is written (the
 * commit point), then the parts are moved to their names. A range whose write fails before the
 * manifest leaves nothing outside `_staging/`; one that stops after it is finished by the next
 * commit of the range or by `recover` at the start of the next run. Readers trust only files
 * listed in a manifest, and a range whose manifest exists is never rewritten.
 */
import { randomBytes } from 'node:crypto';
import {
  CommitManifest,
  FILTER_DECISIONS,
  SHARD_TABLES,
  SHARD_TABLE_NAMES,
  type CorpusFormat,
  type ManifestTableName,
  type ShardFileEntry,
  type ShardFormat,
  type ShardTableName,
} from '../../../schemas/outputs.js';
import { buildTable } from './arrow-schema.js';
import { filesChecksum, manifestSeal, sha256Hex } from './checksum.js';
import { encodeCorpusPart } from './corpus.js';
import type { CommitRequest } from './commit-request.js';
// Re-exported: the commit protocol's callers and tests reach the manifest hashes from here.
export { filesChecksum, sha256Hex } from './checksum.js';
import { COMMITS_PREFIX, corpusKey, manifestKey, rangeStagingPrefix, shardKey, STAGING_PREFIX, stagedKey, stagingPrefix, unstagedKey } from './layout.js';
import { ObjectExistsError, type ObjectStore } from '../storage/object-store.js';
import { toArrowIpc, toParquet, type ParquetOptions } from './shard-format.js';
import type { RangeTableLog } from './delta/range-table-log.js';

export const SHARD_SCHEMA_VERSION = '1';

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Tables only some runs fill (repairs: with `repair:` on; reviews: only the review commands);
 * they get zero-row parts only when a caller's `off` leaves them out.
 */
const DEFAULT_OFF: readonly ShardTableName[] = ['repairs', 'reviews'];

export interface CommitterOptions {
  /** Formats written per table; default ['parquet']. */
  formats?: readonly ShardFormat[];
  /** The corpus format the stage asks ranges for (default 'off': no corpus). */
  corpus?: CorpusFormat | 'off';
  parquet?: ParquetOptions;
  /**
   * Write zero-row parts for tables without rows in a range (default true), so every table of
   * a committed range has a part and a folder glob never finds nothing.
   */
  writeEmpty?: boolean;
  /**
   * Tables switched off for this run (verdict_details when not asked for, repairs when repair is
   * off): no zero-row part for them. Absent: DEFAULT_OFF, so a committer that is not told about
   * repair writes the tables it always wrote.
   */
  off?: readonly ShardTableName[];
  now?: () => Date;
  /**
   * Called right before a manifest is written; throwing stops the commit with nothing
   * visible. The run checks there that it still holds the output's lease.
   */
  beforeManifest?: () => void | Promise<void>;
  /**
   * The output's Delta tables (docs/delta.md): a published range is added to
   * them. Its part keys then carry the attempt's nonce, so a range judged again after a
   * retraction never overwrites the files an older table version still reads.
   */
  tableLog?: RangeTableLog;
  /**
   * Told once a range this writer committed is published (not for a range found committed, nor
   * for a lost race). It runs on the commit path, so it must return at once and never throw:
   * the dataset card (src/compose/card-writer.ts) only queues a rewrite here.
   */
  afterCommit?: (manifest: CommitManifest) => void;
}

export interface CommitResult {
  manifest: CommitManifest;
  /** True when the range's manifest already existed (ours from before, or a racing writer's) and nothing was written. */
  alreadyCommitted: boolean;
}

/** Told as a commit passes its points (the range's state, ../range-state.ts). */
export interface CommitPhases {
  /** every part is written (under the range's staging folder when the store can move) */
  staged?(): void;
  /** the manifest is created: the range is committed */
  manifestWritten?(): void;
}

interface EncodedFile {
  entry: Omit<ShardFileEntry, 'bytes' | 'sha256'>;
  bytes: Uint8Array;
}

/** What `recover` found under `_staging/`. */
export interface RecoverResult {
  /** committed ranges whose parts were still staged and are now published */
  published: number;
  /** staged attempts removed: a lost race, or (with dropUnfinished) never committed */
  removed: number;
  /** staged attempts left alone: no manifest yet, and another writer may still commit them */
  kept: number;
}

/**
 * Writes one range: its parts (staged), its manifest, then publishes the parts. The manifest is
 * created only where none exists (link(2) locally, If-None-Match: * on S3); when two writers build
 * the same range the first manifest wins, the other drops its staged parts and reports the range
 * as already committed.
 */
export class ShardCommitter {
  readonly formats: readonly ShardFormat[];
  readonly corpus: CorpusFormat | 'off';

  constructor(
    readonly store: ObjectStore,
    private readonly opts: CommitterOptions = {},
  ) {
    this.formats = opts.formats ?? ['parquet'];
    this.corpus = opts.corpus ?? 'off';
    if (this.formats.length === 0) throw new Error('ShardCommitter needs at least one format');
  }

  /**
   * Manifest of a committed range, or null. A manifest whose parts are still staged (the
   * writer stopped between manifest and publish) is published first, so whoever sees a
   * manifest here also finds its files.
   */
  async committed(first: string, last: string): Promise<CommitManifest | null> {
    const bytes = await this.store.get(manifestKey(first, last));
    if (!bytes) return null;
    const manifest = parseManifest(bytes, manifestKey(first, last));
    await this.publish(manifest);
    return manifest;
  }

  /**
   * Encodes every table first (a bad row fails the range before anything is written), stages
   * the parts, writes the manifest, then moves the parts to their names. Idempotent: an already
   * committed range is left untouched.
   */
  async commit(req: CommitRequest, phases: CommitPhases = {}): Promise<CommitResult> {
    const existing = await this.committed(req.first, req.last);
    if (existing) return { manifest: existing, alreadyCommitted: true };
    const nonce = randomBytes(8).toString('hex');
    const { files: encoded, rowsPerTable, recordIds } = await this.encode(req, this.opts.tableLog ? nonce : undefined);
    // A store that cannot move objects gets each part at its name (atomic per file only).
    const staging = this.store.move ? stagingPrefix(req.first, req.last, nonce) : undefined;
    // Every put settles before the commit fails, so nothing of this attempt is written after it.
    const settled = await Promise.allSettled(
      encoded.map(async ({ entry, bytes }): Promise<ShardFileEntry> => {
        await this.store.putObject(staging ? stagedKey(staging, entry.key) : entry.key, bytes);
        return { ...entry, bytes: bytes.byteLength, sha256: sha256Hex(bytes) };
      }),
    );
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      // Best effort: a store that is down keeps them, and they are invisible there anyway.
      if (staging) await this.removeStaged(staging).catch(() => undefined);
      throw failed.reason;
    }
    phases.staged?.();
    const files = settled.map((r) => (r as PromiseFulfilledResult<ShardFileEntry>).value);
    files.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const unsealed = CommitManifest.parse({
      version: 1,
      source: req.source,
      first: req.first,
      last: req.last,
      committed_at: (this.opts.now?.() ?? new Date()).toISOString(),
      files,
      rows: rowsPerTable,
      record_ids: recordIds,
      checksum: filesChecksum(files),
      ...(req.range ? { range: req.range } : {}),
      ...(req.settings ? { settings: req.settings } : {}),
      ...(staging ? { staging } : {}),
      ...(req.extra ? { extra: req.extra } : {}),
    });
    const manifest: CommitManifest = { ...unsealed, seal: manifestSeal(unsealed) };
    const res = await this.putManifest(req, manifest);
    if (res.alreadyCommitted) {
      if (staging) await this.removeStaged(staging);
    } else {
      phases.manifestWritten?.();
      await this.publish(manifest, new Map(encoded.map((e) => [e.entry.key, e.bytes])));
      this.opts.afterCommit?.(manifest);
    }
    return res;
  }

  /**
   * Publishes the range whose manifest is at `key` (a no-op once it is published): whoever finds
   * a committed range (a new partition owner, a reader) finishes a writer that stopped between
   * its manifest and its publish, rather than leave the range's parts staged.
   */
  async publishAt(key: string): Promise<void> {
    const bytes = await this.store.get(key);
    if (bytes) await this.publish(parseManifest(bytes, key));
  }

  /**
   * Moves a committed range's staged parts to their names (a no-op once they are all there),
   * then adds the range to the Delta tables if they do not have it yet.
   */
  async publish(manifest: CommitManifest, bytes?: ReadonlyMap<string, Uint8Array>): Promise<void> {
    await this.moveStaged(manifest);
    await this.opts.tableLog?.addRange(manifest, bytes);
  }

  private async moveStaged(manifest: CommitManifest): Promise<void> {
    const staging = manifest.staging;
    if (!staging || !this.store.move) return;
    const wanted = new Set(manifest.files.map((f) => f.key));
    const staged = await this.store.list(staging);
    await Promise.all(
      staged.map(async (k) => {
        const key = unstagedKey(staging, k);
        if (key !== null && wanted.has(key)) await this.store.move!(k, key);
        else await this.store.delete?.(k);
      }),
    );
  }

  private async removeStaged(staging: string): Promise<void> {
    if (!this.store.delete) return;
    for (const k of await this.store.list(staging)) await this.store.delete(k);
  }

  /**
   * Run once before a run writes: publishes committed ranges whose parts are still staged, and
   * removes the staged attempts of ranges another attempt committed. An attempt with no
   * manifest is removed only with `dropUnfinished` (one writer per output, as for file and S3
   * inputs): with Kafka, another worker may be about to commit it.
   */
  async recover(opts: { dropUnfinished: boolean }): Promise<RecoverResult> {
    const result: RecoverResult = { published: 0, removed: 0, kept: 0 };
    const attempts = new Set<string>();
    for (const k of await this.store.list(STAGING_PREFIX)) {
      const slash = k.indexOf('/', STAGING_PREFIX.length);
      if (slash > 0) attempts.add(k.slice(0, slash + 1));
    }
    for (const staging of attempts) {
      const manifest = await this.manifestFor(staging);
      if (manifest?.staging === staging) {
        await this.publish(manifest);
        result.published++;
      } else if (manifest || opts.dropUnfinished) {
        await this.removeStaged(staging);
        result.removed++;
      } else {
        result.kept++;
      }
    }
    return result;
  }

  /** The manifest of the range a staging folder belongs to (positions may hold '-', so try each cut). */
  private async manifestFor(staging: string): Promise<CommitManifest | null> {
    const name = staging.slice(STAGING_PREFIX.length, staging.lastIndexOf('.'));
    for (let cut = name.indexOf('-'); cut > 0; cut = name.indexOf('-', cut + 1)) {
      const first = name.slice(0, cut);
      const last = name.slice(cut + 1);
      try {
        if (!staging.startsWith(rangeStagingPrefix(first, last))) continue;
      } catch {
        continue; // not a valid pair of positions
      }
      const bytes = await this.store.get(manifestKey(first, last));
      if (bytes) return parseManifest(bytes, manifestKey(first, last));
    }
    return null;
  }

  /**
   * Create-only where the store can (link(2) locally, If-None-Match: * on S3): the first
   * manifest of a range wins and is never replaced. A store without createObject overwrites,
   * and only the output's lease keeps a second writer away.
   */
  private async putManifest(req: CommitRequest, manifest: CommitManifest): Promise<CommitResult> {
    const key = manifestKey(req.first, req.last);
    const bytes = new TextEncoder().encode(`${JSON.stringify(manifest, null, 2)}\n`);
    try {
      await this.opts.beforeManifest?.();
      await (this.store.createObject ? this.store.createObject(key, bytes) : this.store.putObject(key, bytes));
      return { manifest, alreadyCommitted: false };
    } catch (err) {
      if (!(err instanceof ObjectExistsError)) throw err;
      const winner = await this.committed(req.first, req.last);
      if (!winner) throw new Error(`manifest ${err.key} was reported as existing but cannot be read`);
      // A retried create whose first attempt landed finds its own manifest: that is a win.
      return { manifest: winner, alreadyCommitted: winner.seal !== manifest.seal };
    }
  }

  private async encode(req: CommitRequest, tag: string | undefined): Promise<{ files: EncodedFile[]; rowsPerTable: Partial<Record<ManifestTableName, number>>; recordIds: number }> {
    const files: EncodedFile[] = [];
    const rowsPerTable: Partial<Record<ManifestTableName, number>> = {};
    const recordIds = new Set<string>();
    for (const table of SHARD_TABLE_NAMES) {
      const rows = req.tables[table] ?? [];
      if (rows.length === 0 && (!(this.opts.writeEmpty ?? true) || (this.opts.off ?? DEFAULT_OFF).includes(table))) continue;
      // One key only: more would make parquet-wasm's output bytes vary (see ParquetOptions).
      const metadata = { reasoning_jury: JSON.stringify({ table, schema_version: SHARD_SCHEMA_VERSION }) };
      const arrow = buildTable(SHARD_TABLES[table], rows, { metadata });
      for (const r of rows) {
        if ('record_id' in r) recordIds.add(r.record_id);
        // Hive readers replace a column named like the partition key with the folder's value
        // (DuckDB, Spark): a mismatch would silently rewrite data, so refuse it here.
        if ('source' in r && r.source !== req.source) {
          throw new Error(`${table} row has source ${JSON.stringify(r.source)} but is committed under source=${JSON.stringify(req.source)}`);
        }
      }
      rowsPerTable[table] = rows.length;
      for (const format of this.formats) {
        // Encoding runs on the judging thread: let replies that arrived meanwhile be handled
        // between parts, so a big range does not stall every call in flight.
        await yieldToEventLoop();
        const bytes = format === 'parquet' ? toParquet(arrow, this.opts.parquet) : toArrowIpc(arrow);
        files.push({ entry: { key: shardKey(table, req.source, req.first, req.last, format, tag), table, format, rows: rows.length }, bytes });
      }
    }
    if (req.corpus) rowsPerTable.corpus = await this.encodeCorpus(req, files, tag);
    return { files, rowsPerTable, recordIds: recordIds.size };
  }

  /** One part per decision, zero rows included, so `corpus/decision=drop/*` always has a file per range. */
  private async encodeCorpus(req: CommitRequest, files: EncodedFile[], tag: string | undefined): Promise<number> {
    const corpus = req.corpus!;
    const metadata = { reasoning_jury: JSON.stringify({ table: 'corpus', schema_version: SHARD_SCHEMA_VERSION }) };
    let total = 0;
    for (const e of corpus.entries) {
      if (e.row.source !== req.source) throw new Error(`corpus row has source ${JSON.stringify(e.row.source)} but is committed under source=${JSON.stringify(req.source)}`);
    }
    for (const decision of FILTER_DECISIONS) {
      await yieldToEventLoop();
      const { bytes, rows } = encodeCorpusPart(corpus, decision, metadata, this.opts.parquet);
      total += rows;
      files.push({ entry: { key: corpusKey(decision, req.source, req.first, req.last, corpus.format, tag), table: 'corpus', format: corpus.format, rows }, bytes });
    }
    return total;
  }
}

function parseManifest(bytes: Uint8Array, key: string): CommitManifest {
  try {
    return CommitManifest.parse(JSON.parse(new TextDecoder().decode(bytes)));
  } catch (e) {
    throw new Error(`corrupt commit manifest ${key}: ${(e as Error).message}`);
  }
}

/** The manifest at `key`, or null when there is none (retracted, or never written). */
export async function readManifestAt(store: ObjectStore, key: string): Promise<CommitManifest | null> {
  const bytes = await store.get(key);
  return bytes ? parseManifest(bytes, key) : null;
}

/** Every committed range's manifest, in key order. A corrupt manifest throws: never guess. */
export async function listCommitted(store: ObjectStore): Promise<CommitManifest[]> {
  const keys = (await store.list(COMMITS_PREFIX)).filter((k) => k.endsWith('.json'));
  const out: CommitManifest[] = [];
  for (const key of keys) {
    const bytes = await store.get(key);
    if (bytes) out.push(parseManifest(bytes, key));
  }
  return out;
}

/**
 * Re-reads a committed range's files and compares them with the manifest's sizes and hashes.
 * Returns the keys that are missing or differ (empty when the range is intact).
 */
export async function verifyCommitted(store: ObjectStore, manifest: CommitManifest): Promise<string[]> {
  const bad: string[] = [];
  for (const f of manifest.files) {
    const bytes = await store.get(f.key);
    if (!bytes || bytes.byteLength !== f.bytes || sha256Hex(bytes) !== f.sha256) bad.push(f.key);
  }
  if (filesChecksum(manifest.files) !== manifest.checksum) bad.push(manifestKey(manifest.first, manifest.last));
  return bad;
}

