/**
 * Human reviews of an output (`view`, `review`, `review import`), kept in the output itself:
 *
 *   OUT/reviews/reviews/source=<view|cli|import>/part-<first>-<last>.parquet   the rows
 *   OUT/reviews/_commits/<first>-<last>.json                                   their manifests
 *
 * `reviews/` is an output of its own, committed with the same ShardCommitter (staged parts,
 * create-only manifest, publish), so a batch of reviews is atomic and append-only like any range,
 * `shards list|verify OUT/reviews` work on it, and the judged output's own `_commits/` (which
 * resume, budgets and `decide` walk) never meets a review range. A batch's range is named by its
 * time and a random suffix, so batches never collide and key order is commit order.
 */
import { createHash, randomBytes } from 'node:crypto';
import { REVIEW_DECISIONS, SHARD_TABLE_NAMES, type ReviewRow } from '../../../schemas/outputs.js';
import type { ObjectStore } from '../storage/object-store.js';
import { listCommitted, ShardCommitter } from './shard-commit.js';
import { readParquetRows } from './shard-read.js';

export const REVIEWS_PREFIX = 'reviews/';

/** A store seen through a key prefix: the review log is an output inside the output. */
export function prefixedStore(store: ObjectStore, prefix: string): ObjectStore {
  const strip = (keys: string[]) => keys.map((k) => k.slice(prefix.length));
  const sub: ObjectStore = {
    putObject: (k, b) => store.putObject(prefix + k, b),
    exists: (k) => store.exists(prefix + k),
    list: async (p) => strip(await store.list(prefix + p)),
    get: (k) => store.get(prefix + k),
    locate: (k) => store.locate(prefix + k),
  };
  if (store.createObject) sub.createObject = (k, b) => store.createObject!(prefix + k, b);
  if (store.move) sub.move = (a, b) => store.move!(prefix + a, prefix + b);
  if (store.delete) sub.delete = (k) => store.delete!(prefix + k);
  if (store.isTransient) sub.isTransient = (e) => store.isTransient!(e);
  return sub;
}

export const reviewStore = (out: ObjectStore): ObjectStore => prefixedStore(out, REVIEWS_PREFIX);

/** Where a batch of reviews came from: the `source=` folder of its part. */
export type ReviewOrigin = 'view' | 'cli' | 'import';

export interface ReviewBatchOptions {
  origin: ReviewOrigin;
  /** checked right before the manifest (the output's lease) */
  beforeManifest?: () => Promise<void>;
  now?: () => Date;
}

/** The range name of a batch: `<UTC time, compact>-<random>`, which sorts by time. */
function batchName(at: Date): { first: string; last: string } {
  return { first: at.toISOString().replace(/[-:]/g, '').replace('.', ''), last: randomBytes(6).toString('hex') };
}

/** Commits one batch of reviews atomically (all rows or none); returns the range's manifest key. */
export async function commitReviews(out: ObjectStore, rows: readonly ReviewRow[], o: ReviewBatchOptions): Promise<string> {
  if (rows.length === 0) throw new Error('no reviews to commit');
  for (const r of rows) {
    if (!(REVIEW_DECISIONS as readonly string[]).includes(r.decision)) throw new Error(`review of ${r.record_id}: decision must be keep or drop (got ${JSON.stringify(r.decision)})`);
  }
  const committer = new ShardCommitter(reviewStore(out), {
    formats: ['parquet'],
    off: SHARD_TABLE_NAMES.filter((t) => t !== 'reviews'),
    ...(o.beforeManifest ? { beforeManifest: o.beforeManifest } : {}),
  });
  const { first, last } = batchName(o.now?.() ?? new Date());
  const res = await committer.commit({ source: o.origin, first, last, tables: { reviews: [...rows] } });
  return `${REVIEWS_PREFIX}_commits/${res.manifest.first}-${res.manifest.last}.json`;
}

/** Every committed review, in commit order (only what the review manifests list). */
export async function readReviews(out: ObjectStore): Promise<ReviewRow[]> {
  const store = reviewStore(out);
  const rows: ReviewRow[] = [];
  for (const m of await listCommitted(store)) {
    for (const f of m.files) {
      if (f.table !== 'reviews' || f.format !== 'parquet') continue;
      const bytes = await store.get(f.key);
      if (!bytes) throw new Error(`committed review file missing: ${store.locate(f.key)}`);
      for (const r of await readParquetRows(bytes)) rows.push(r as unknown as ReviewRow);
    }
  }
  return rows;
}

/** The review that counts for each record: the latest by `reviewed_at`, ties to the later commit. */
export function latestReviews(rows: readonly ReviewRow[]): Map<string, ReviewRow> {
  const latest = new Map<string, ReviewRow>();
  for (const r of rows) {
    const had = latest.get(r.record_id);
    if (!had || r.reviewed_at >= had.reviewed_at) latest.set(r.record_id, r);
  }
  return latest;
}

/** The decisions table's reason for a reviewed record. */
export const reviewReason = (r: Pick<ReviewRow, 'reviewer'>): string => `review:${r.reviewer}`;

/** A fingerprint of the reviews that count, so `decide` can refuse to resume under other reviews. */
export function reviewsFingerprint(latest: ReadonlyMap<string, ReviewRow>): string {
  const parts = [...latest.values()].map((r) => `${r.record_id}\u0000${r.decision}\u0000${r.reviewer}`).sort();
  return parts.length === 0 ? 'none' : `${parts.length}:${sha(parts.join('\n'))}`;
}

const sha = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 16);
