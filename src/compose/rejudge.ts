/**
 * `run --rejudge no-verdict|degraded`: committed ranges holding a verdict with no verdict
 * (`error` set), or any degraded one, are judged again without deleting the output.
 *
 * Before the stage starts, each such range is retracted under the commit protocol: its manifest
 * first, then its files, so a reader of the manifests sees the old range, then nothing, then the
 * new one, never both. Its records are then no longer committed, the stage reads and judges
 * them like new ones, and the planner gives them back the boundaries they had (`pinned`), so
 * they are committed again under the same names. A crash in between leaves them uncommitted:
 * the next run, with or without --rejudge, judges them.
 *
 * The whole range is judged again, not only its unjudged records: a range is the unit of
 * commit. With the response cache on, its other records replay from the cache.
 */
import type { CommitManifest } from '../../schemas/outputs.js';
import { retractRange } from '../pipeline/commit/retract.js';
import type { RangeTableLog } from '../pipeline/commit/delta/range-table-log.js';
import type { ObjectStore } from '../pipeline/storage/object-store.js';
import { readArrowIpcRows, readParquetRows, type PlainRow } from '../pipeline/commit/shard-read.js';
import { listCommitted } from '../pipeline/commit/shard-commit.js';
import type { CommittedRanges } from '../pipeline/source.js';
import { rangeOf } from './resume.js';

export const REJUDGE_KINDS = ['no-verdict', 'degraded'] as const;
export type RejudgeKind = (typeof REJUDGE_KINDS)[number];

export interface Rejudged {
  /** ranges retracted, by unit token and first offset: the planner pins their boundaries */
  pinned: CommittedRanges;
  ranges: number;
  /** verdicts that made their range qualify */
  verdicts: number;
}

/** A verdict row the run is asked to judge again: no verdict, or (degraded) any degraded one. */
function wanted(row: PlainRow, kind: RejudgeKind): boolean {
  return row.error !== null && row.error !== undefined ? true : kind === 'degraded' && row.degraded === true;
}

async function verdictRows(store: ObjectStore, m: CommitManifest): Promise<PlainRow[]> {
  const f = m.files.find((x) => x.table === 'verdicts' && x.format === 'parquet') ?? m.files.find((x) => x.table === 'verdicts');
  if (!f) return [];
  const bytes = await store.get(f.key);
  if (!bytes) throw new Error(`committed file missing: ${f.key}`);
  const columns = ['error', 'degraded'];
  return f.format === 'parquet' ? readParquetRows(bytes, { columns }) : readArrowIpcRows(bytes, { columns });
}

/** Finds the committed ranges with verdicts of `kind` and retracts them (manifest first, then files). */
export async function retractForRejudge(store: ObjectStore, kind: RejudgeKind, location: string, tables?: RangeTableLog): Promise<Rejudged> {
  const out: Rejudged = { pinned: new Map(), ranges: 0, verdicts: 0 };
  const doomed: Array<{ m: CommitManifest; count: number }> = [];
  for (const m of await listCommitted(store)) {
    const range = rangeOf(m);
    if (!range) continue;
    const count = (await verdictRows(store, m)).filter((r) => wanted(r, kind)).length;
    if (count > 0) doomed.push({ m, count });
  }
  if (doomed.length === 0) return out;
  const del = store.delete?.bind(store);
  if (!del) throw new Error(`${location} cannot delete objects, so committed ranges cannot be judged again`);
  for (const { m, count } of doomed) {
    await retractRange(del, m, tables);
    const r = rangeOf(m)!;
    if (!out.pinned.has(r.unit_token)) out.pinned.set(r.unit_token, new Map());
    out.pinned.get(r.unit_token)!.set(r.first_offset, r.last_offset);
    out.ranges += 1;
    out.verdicts += count;
  }
  return out;
}
