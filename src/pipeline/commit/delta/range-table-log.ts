/**
 * Committed ranges -> Delta tables (docs/delta.md). Each Parquet table folder of
 * the output (`verdicts/`, `corpus/`, ...) is a Delta table; a range's parts enter each table in
 * one Delta commit per range, after the range's manifest (our commit point) exists and its parts
 * are published, so a Delta reader never sees a staged or half-published range. A range whose
 * Delta commits were not made (a crash right after its publish) is added by the next writer
 * that meets its manifest, or by `reconcile` (each run's start, `shards delta`).
 *
 * The appIds make each step idempotent across writers and crashes:
 *   rj-add:<first>-<last>:<seal>      the range generation's parts were added
 *   rj-remove:<first>-<last>:<seal>   ... and removed again (a retraction: rejudge, repair import)
 * A removal leaves the files in place, so time travel to an older version still reads them.
 */
import type { CommitManifest, ShardFileEntry } from '../../../../schemas/outputs.js';
import type { ObjectStore } from '../../storage/object-store.js';
import { manifestKey } from '../layout.js';
import { deltaPath, type AddAction, type DeltaAction } from './delta-actions.js';
import { partFacts } from './delta-file.js';
import { DeltaLog, DeltaLogError, type DeltaState } from './delta-log.js';
import { deltaSchema } from './delta-schema.js';

export interface RangeTableLogOptions {
  checkpointInterval: number;
  engineInfo: string;
  now?: () => number;
  warn?: (msg: string) => void;
}

/** A part's place in its Delta table. */
interface TablePart {
  root: string;
  entry: ShardFileEntry;
  path: string;
  partitionValues: Record<string, string>;
}

/** `verdicts/source=a/part-1-9.parquet` -> table root `verdicts/`, its path and partition values. */
function tablePart(entry: ShardFileEntry): TablePart | null {
  if (entry.format !== 'parquet') return null; // Delta tables hold Parquet; Arrow and JSONL roots have none
  const segs = entry.key.split('/');
  const root = `${segs[0]}/`;
  const partitionValues: Record<string, string> = {};
  for (const seg of segs.slice(1, -1)) {
    const eq = seg.indexOf('=');
    if (eq <= 0) return null;
    partitionValues[seg.slice(0, eq)] = decodeURIComponent(seg.slice(eq + 1));
  }
  return { root, entry, path: deltaPath(segs.slice(1).join('/')), partitionValues };
}

const rangeName = (m: CommitManifest) => `${m.first}-${m.last}`;
/** Every run range has a verdicts part (zero rows included); its table is committed last. */
const LAST_TABLE = 'verdicts/';
const generation = (m: CommitManifest) => (m.seal ?? m.checksum).slice(0, 16);
export const addAppId = (m: CommitManifest) => `rj-add:${rangeName(m)}:${generation(m)}`;
export const removeAppId = (m: CommitManifest) => `rj-remove:${rangeName(m)}:${generation(m)}`;

export class RangeTableLog {
  private readonly logs = new Map<string, DeltaLog>();

  constructor(
    readonly store: ObjectStore,
    private readonly opts: RangeTableLogOptions,
  ) {
    if (!store.createObject) throw new DeltaLogError('this output store cannot create objects create-only, which a Delta log needs to keep concurrent writers from overwriting a version');
  }

  private log(root: string): DeltaLog {
    let log = this.logs.get(root);
    if (!log) {
      log = new DeltaLog(this.store, root, { checkpointInterval: this.opts.checkpointInterval, engineInfo: this.opts.engineInfo, ...(this.opts.now ? { now: this.opts.now } : {}), ...(this.opts.warn ? { warn: this.opts.warn } : {}) });
      this.logs.set(root, log);
    }
    return log;
  }

  /** The range's parts by table, `verdicts/` last: once it has the range, every table has it (reconcileKeys). */
  private partsByTable(m: CommitManifest): Map<string, TablePart[]> {
    const out = new Map<string, TablePart[]>();
    for (const f of m.files) {
      const p = tablePart(f);
      if (!p) continue;
      out.set(p.root, [...(out.get(p.root) ?? []), p]);
    }
    const last = out.get(LAST_TABLE);
    if (last) {
      out.delete(LAST_TABLE);
      out.set(LAST_TABLE, last);
    }
    return out;
  }

  /**
   * Adds a committed, published range to every table it has parts in (one Delta commit per
   * table), unless it is there already. `bytes` are the parts' bytes when the caller has them
   * (a fresh commit); otherwise they are read back.
   */
  async addRange(m: CommitManifest, bytes?: ReadonlyMap<string, Uint8Array>): Promise<void> {
    const appId = addAppId(m);
    for (const [root, parts] of this.partsByTable(m)) {
      const log = this.log(root);
      // commit() reads the log's new versions and checks the appId itself: one listing, not two.
      if (log.knows(appId)) continue;
      const facts = await Promise.all(parts.map((p) => this.facts(p, bytes?.get(p.entry.key))));
      await log.commit(appId, (state) => {
        const actions: DeltaAction[] = [];
        const partitionColumns = Object.keys(parts[0]!.partitionValues);
        const schemaString = JSON.stringify(deltaSchema(facts[0]!.schema, partitionColumns));
        if (state.metaData?.schemaString !== schemaString) {
          if (state.metaData && !this.sameShape(state, schemaString)) this.opts.warn?.(`Delta table ${root}: range ${rangeName(m)} has another schema than the table; the table's schema is replaced by it`);
          actions.push({ metaData: log.newMetaData(schemaString, partitionColumns) });
        }
        for (const f of facts) actions.push({ add: f.add });
        return { actions, operation: 'STREAMING UPDATE', parameters: { outputMode: 'Append', range: `${m.first}..${m.last}`, manifest: manifestKey(m.first, m.last) } };
      });
    }
  }

  /**
   * Removes a range generation's parts from every table (before its manifest is deleted by a
   * retraction). The files stay: an older version of the table still reads them.
   */
  async removeRange(m: CommitManifest): Promise<void> {
    const appId = removeAppId(m);
    const now = this.opts.now?.() ?? Date.now();
    for (const [root, parts] of this.partsByTable(m)) {
      await this.log(root).commit(appId, (state) => {
        const live = parts.filter((p) => state.files.has(p.path));
        if (live.length === 0) return null;
        const actions: DeltaAction[] = live.map((p) => ({
          remove: { path: p.path, deletionTimestamp: now, dataChange: true, extendedFileMetadata: true, partitionValues: p.partitionValues, size: state.files.get(p.path)!.size },
        }));
        return { actions, operation: 'DELETE', parameters: { range: `${m.first}..${m.last}`, manifest: manifestKey(m.first, m.last) } };
      });
    }
  }

  /** Adds every committed range the tables miss; returns how many ranges it added. */
  async reconcile(manifests: readonly CommitManifest[]): Promise<number> {
    let added = 0;
    for (const m of manifests) {
      const roots = [...this.partsByTable(m).keys()];
      const missing = await Promise.all(roots.map(async (r) => !(await this.log(r).has(addAppId(m)))));
      if (!missing.some(Boolean)) continue;
      await this.addRange(m);
      added += 1;
    }
    return added;
  }

  /**
   * The cheap form of `reconcile` for outputs of very many ranges (Kafka): only manifests whose
   * range has no add in `verdicts/` are read. It does not see a retracted range judged again,
   * which only file and S3 inputs do, and those reconcile with every manifest.
   */
  async reconcileKeys(manifestKeys: readonly string[], read: (key: string) => Promise<CommitManifest | null>): Promise<number> {
    const state = await this.log(LAST_TABLE).current();
    const present = new Set<string>();
    for (const appId of state.txns.keys()) if (appId.startsWith('rj-add:')) present.add(appId.slice(7, appId.lastIndexOf(':')));
    let added = 0;
    for (const key of manifestKeys) {
      const name = key.slice(key.lastIndexOf('/') + 1, -'.json'.length);
      if (present.has(name)) continue;
      const m = await read(key);
      if (!m) continue; // retracted meanwhile
      await this.addRange(m);
      added += 1;
    }
    return added;
  }

  /** Every table this log has opened, with its newest version and live files. */
  async summary(): Promise<{ root: string; version: number; files: number }[]> {
    const out = [];
    for (const [root, log] of [...this.logs].sort(([a], [b]) => a.localeCompare(b))) {
      const s = await log.current();
      out.push({ root, version: s.version, files: s.files.size });
    }
    return out;
  }

  private async facts(p: TablePart, bytes: Uint8Array | undefined) {
    const b = bytes ?? (await this.store.get(p.entry.key));
    if (!b) throw new DeltaLogError(`committed part ${p.entry.key} is missing: it cannot be added to the Delta table`);
    return partFacts(b, { path: p.path, partitionValues: p.partitionValues }, this.opts.now?.() ?? Date.now());
  }

  /** Whether a schema differs only in ways readers take (field order kept, nothing dropped). */
  private sameShape(state: DeltaState, schemaString: string): boolean {
    const names = (s: string) => (JSON.parse(s) as { fields: { name: string }[] }).fields.map((f) => f.name).join(',');
    return state.metaData !== undefined && names(state.metaData.schemaString) === names(schemaString);
  }
}

export type { AddAction };
