/**
 * `repair import` of a results file that lacked some requests commits those retries as rows
 * with `error: no result for this request in the batch file`. Importing a more complete file
 * into the same --out replaces them: a range of --out holding such a row for which the new file
 * has a result is retracted (manifest first, then files, so a reader of the manifests sees the
 * old range, then nothing, then the new one), and the import writes it again.
 */
import type { RepairCondition } from '../../schemas/repair.js';
import { retractRange } from '../pipeline/commit/retract.js';
import type { RangeTableLog } from '../pipeline/commit/delta/range-table-log.js';
import type { ObjectStore } from '../pipeline/storage/object-store.js';
import { listCommitted } from '../pipeline/commit/shard-commit.js';
import { readArrowIpcRows, readParquetRows, type PlainRow } from '../pipeline/commit/shard-read.js';
import { customId, NO_RESULT, type RangeCandidates } from './repair-offline.js';
import { RedecideError } from './redecide.js';

async function repairsRows(to: ObjectStore, key: string, format: string): Promise<PlainRow[]> {
  const bytes = await to.get(key);
  if (!bytes) return [];
  const columns = ['record_id', 'condition', 'attempt', 'error'];
  return format === 'parquet' ? readParquetRows(bytes, { columns }) : readArrowIpcRows(bytes, { columns });
}

/** Retracts the ranges of `to` whose missing results `results` now has; returns how many. */
export async function retractFilledRanges(to: ObjectStore, ranges: readonly RangeCandidates[], results: ReadonlyMap<string, unknown>, location: string, tables?: RangeTableLog): Promise<number> {
  const committed = new Map((await listCommitted(to)).map((m) => [`${m.first}-${m.last}`, m]));
  let retracted = 0;
  for (const { manifest: m } of ranges) {
    const old = committed.get(`${m.first}-${m.last}`);
    const part = old?.files.find((f) => f.table === 'repairs');
    if (!old || !part) continue;
    const rows = await repairsRows(to, part.key, part.format);
    const filled = rows.some((r) => r.error === NO_RESULT && results.has(customId(m, String(r.record_id), r.condition as RepairCondition, Number(r.attempt))));
    if (!filled) continue;
    const del = to.delete?.bind(to);
    if (!del) throw new RedecideError(`${location} cannot delete objects, so ranges with missing results cannot be replaced; import into a new --out`);
    await retractRange(del, old, tables);
    retracted += 1;
  }
  return retracted;
}
