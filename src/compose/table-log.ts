/**
 * The output's Delta tables when the run asks for them (`output.table_format: delta`,
 * `--table-format delta`): one RangeTableLog per output, shared by the committer, the
 * publisher of found ranges and the retractions, so they read the log once and agree on it.
 */
import { randomBytes } from 'node:crypto';
import { ObjectExistsError, type ObjectStore } from '../pipeline/storage/object-store.js';
import { ReasoningJuryError } from '../util/errors.js';
import { RangeTableLog } from '../pipeline/commit/delta/range-table-log.js';
import { COMMITS_PREFIX } from '../pipeline/commit/layout.js';
import { listCommitted, readManifestAt } from '../pipeline/commit/shard-commit.js';
import { logger } from '../util/log.js';

export type TableFormat = 'none' | 'delta';

export const DELTA_ENGINE_INFO = 'reasoning-jury';
/** output.delta.checkpoint_interval's default, for commands without a jury config (decide, shards delta). */
export const DEFAULT_CHECKPOINT_INTERVAL = 100;

/** By store, so the publisher of found ranges and the retractions reach the run's one instance without more plumbing. */
const opened = new WeakMap<ObjectStore, RangeTableLog>();

/**
 * The output's Delta tables: asked for (`delta`), or already there. An output that has them
 * keeps them current whatever a later command is told, since a command that did not know
 * would delete parts a table version still reads (a retraction) or leave ranges out of them.
 */
export async function openTableLog(store: ObjectStore, format: TableFormat, checkpointInterval: number, opts: { shared?: boolean } = {}): Promise<RangeTableLog | undefined> {
  if (format !== 'delta' && !(await hasDeltaTables(store))) return undefined;
  const log = logger('delta');
  if (!(await createOnlyHonoured(store))) {
    const why = 'this store does not honour create-only writes (a second If-None-Match: * PUT of one key succeeded), so two writers could overwrite one Delta log version';
    if (opts.shared) throw new DeltaUnsafeError(`Delta tables refused: ${why}; a consumer group shares its output. Use an S3 server with conditional writes (AWS S3, versitygw), or one instance, or --table-format none`);
    log.warn(`${why}: only this command may write the output's Delta tables (its lease keeps other writers off)`);
  }
  const tables = new RangeTableLog(store, { checkpointInterval, engineInfo: DELTA_ENGINE_INFO, warn: (msg) => log.warn(msg) });
  opened.set(store, tables);
  return tables;
}

/** Delta tables on a store that would let two writers overwrite a version while both may write. */
export class DeltaUnsafeError extends ReasoningJuryError {
  override get kind() {
    return 'usage' as const;
  }
  override name = 'DeltaUnsafeError';
}

/** Writes one probe key twice, create-only: the second must be refused. */
async function createOnlyHonoured(store: ObjectStore): Promise<boolean> {
  if (!store.createObject) return false;
  const key = `_probe/create-only-${randomBytes(8).toString('hex')}`;
  const bytes = new TextEncoder().encode('probe\n');
  await store.createObject(key, bytes);
  try {
    await store.createObject(key, bytes);
    return false;
  } catch (err) {
    if (err instanceof ObjectExistsError) return true;
    throw err;
  } finally {
    await store.delete?.(key).catch(() => undefined);
  }
}

/** Every run range has a verdicts part, so an output with Delta tables has this first commit. */
async function hasDeltaTables(store: ObjectStore): Promise<boolean> {
  return (await store.exists('verdicts/_delta_log/00000000000000000000.json')) || (await store.exists('decisions/_delta_log/00000000000000000000.json')) || (await store.exists('repairs/_delta_log/00000000000000000000.json'));
}

/** The Delta tables opened for this store, if the command asked for them. */
export const tableLogOf = (store: ObjectStore): RangeTableLog | undefined => opened.get(store);

/**
 * Adds the committed ranges the Delta tables miss (a writer that stopped between its publish
 * and its Delta commits, or an output that had no log yet) before a command writes more.
 * `every`: read every manifest (file and S3 runs, `shards delta`); else only the manifests
 * whose range `verdicts/` lacks (Kafka: outputs of very many ranges).
 */
export async function reconcileTables(tables: RangeTableLog | undefined, store: ObjectStore, every: boolean): Promise<number> {
  if (!tables) return 0;
  const added = every
    ? await tables.reconcile(await listCommitted(store))
    : await tables.reconcileKeys((await store.list(COMMITS_PREFIX)).filter((k) => k.endsWith('.json')), (k) => readManifestAt(store, k));
  if (added > 0) logger('delta').info(`added ${added} committed range(s) the Delta tables did not have yet`, { ranges: added });
  return added;
}

/** The committer option for this store's Delta tables (none when the command did not ask). */
export function tableLogOption(store: ObjectStore): { tableLog?: RangeTableLog } {
  const tableLog = tableLogOf(store);
  return tableLog ? { tableLog } : {};
}
