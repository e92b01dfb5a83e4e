/**
 * Retracting a committed range (its input changed and `rejudge` judges it again; `repair import`
 * fills its missing results): the range leaves every reader's view, the manifest first.
 *
 * With Delta tables the range is first removed from them in a new table version, and its
 * Parquet parts stay where they are: an older version still reads them (time travel), and a
 * range judged again gets new part names (layout.ts, part tags), so nothing is overwritten.
 */
import type { CommitManifest } from '../../../schemas/outputs.js';
import type { ObjectStore } from '../storage/object-store.js';
import type { RangeTableLog } from './delta/range-table-log.js';
import { manifestKey } from './layout.js';

export async function retractRange(del: NonNullable<ObjectStore['delete']>, m: CommitManifest, tables?: RangeTableLog): Promise<void> {
  await tables?.removeRange(m);
  await del(manifestKey(m.first, m.last));
  for (const f of m.files) if (!tables || f.format !== 'parquet') await del(f.key);
}
