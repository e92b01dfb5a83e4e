/**
 * One Delta table's transaction log over an ObjectStore: reading its state, and appending a
 * commit exactly once.
 *
 * Exactly once, whoever else writes the table (a Kafka consumer group's instances, a resumed
 * run, `shards delta`): every commit carries a `txn` action whose appId names what it does (a
 * range generation's add, its removal); a commit whose appId is already in the log is not made
 * again. Version n+1 is claimed create-only (link(2) locally, If-None-Match: * on S3); a writer
 * that loses the race reads the new versions, checks the appId again and tries n+2. So the log
 * has no gap (a version is claimed only after its predecessor was read) and no duplicate.
 */
import { randomUUID } from 'node:crypto';
import { ObjectExistsError, listKeysAfter, type ObjectStore } from '../../storage/object-store.js';
import {
  DELTA_PROTOCOL,
  checkpointKey,
  commitKey,
  decodeCommit,
  deltaLogPrefix,
  encodeCommit,
  lastCheckpointKey,
  versionOfKey,
  type AddAction,
  type DeltaAction,
  type MetaDataAction,
  type ProtocolAction,
} from './delta-actions.js';
import { decodeCheckpoint, encodeCheckpoint } from './delta-checkpoint.js';
import { ReasoningJuryError } from '../../../util/errors.js';

export class DeltaLogError extends ReasoningJuryError {
  override get kind() {
    return 'storage' as const;
  }
  override name = 'DeltaLogError';
}

/** What a commit adds on top of the table's state: built from the state it will follow. */
export type CommitBuilder = (state: DeltaState) => { actions: DeltaAction[]; operation: string; parameters: Record<string, string> } | null;

export interface DeltaState {
  /** -1: no table yet */
  version: number;
  protocol?: ProtocolAction;
  metaData?: MetaDataAction;
  /** live files by path */
  files: Map<string, AddAction>;
  /** every appId ever committed, with its version */
  txns: Map<string, number>;
}

export interface DeltaLogOptions {
  /** a checkpoint after every this many commits (0: never) */
  checkpointInterval: number;
  now?: () => number;
  engineInfo: string;
  warn?: (msg: string) => void;
}

/** Give up after this many lost races in a row: each loss means another writer made progress. */
const MAX_ATTEMPTS = 1000;

export class DeltaLog {
  private state: DeltaState = { version: -1, files: new Map(), txns: new Map() };
  private loaded = false;

  constructor(
    private readonly store: ObjectStore,
    readonly tableRoot: string,
    private readonly opts: DeltaLogOptions,
  ) {}

  /** The table's state at its newest version (reading only what is new since the last call). */
  async current(): Promise<DeltaState> {
    if (!this.loaded) {
      await this.loadCheckpoint();
      this.loaded = true;
    }
    const after = this.state.version >= 0 ? commitKey(this.tableRoot, this.state.version) : undefined;
    const keys = (await listKeysAfter(this.store, deltaLogPrefix(this.tableRoot), after)).filter((k) => versionOfKey(k) !== null).sort();
    for (const key of keys) {
      const v = versionOfKey(key)!;
      if (v <= this.state.version) continue;
      if (v !== this.state.version + 1) throw new DeltaLogError(`Delta log ${deltaLogPrefix(this.tableRoot)} has a gap: version ${this.state.version + 1} is missing before ${v}`);
      const bytes = await this.store.get(key);
      if (!bytes) throw new DeltaLogError(`Delta log file ${key} was listed but cannot be read`);
      this.apply(decodeCommit(bytes, key) as DeltaAction[], v);
    }
    return this.state;
  }

  /** True when the state read so far holds this appId (no store access; false can be stale). */
  knows(appId: string): boolean {
    return this.loaded && this.state.txns.has(appId);
  }

  /** True when a commit with this appId is in the log. */
  async has(appId: string): Promise<boolean> {
    // What is in the log stays there: read new versions only when the cache does not know it.
    if (this.loaded && this.state.txns.has(appId)) return true;
    return (await this.current()).txns.has(appId);
  }

  /**
   * Appends the commit `build` makes, under `appId`, unless the log already holds that appId.
   * Returns the version written, or null when it was already there (or `build` had nothing to do).
   */
  async commit(appId: string, build: CommitBuilder): Promise<number | null> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const state = await this.current();
      if (state.txns.has(appId)) return null;
      const made = build(state);
      if (!made) return null;
      const version = state.version + 1;
      const now = this.opts.now?.() ?? Date.now();
      const head: DeltaAction[] = version === 0 ? [{ protocol: DELTA_PROTOCOL }] : [];
      const actions: DeltaAction[] = [
        { commitInfo: { timestamp: now, operation: made.operation, operationParameters: made.parameters, engineInfo: this.opts.engineInfo, isBlindAppend: !made.actions.some((a) => 'remove' in a) } },
        ...head,
        ...made.actions,
        { txn: { appId, version: 1, lastUpdated: now } },
      ];
      try {
        await this.store.createObject!(commitKey(this.tableRoot, version), encodeCommit(actions));
      } catch (err) {
        if (err instanceof ObjectExistsError) continue; // another writer took this version: read it, try the next
        throw err;
      }
      this.apply(actions, version);
      await this.maybeCheckpoint(version);
      return version;
    }
    throw new DeltaLogError(`Delta log ${deltaLogPrefix(this.tableRoot)}: lost the race for a version ${MAX_ATTEMPTS} times in a row`);
  }

  /** A metaData action for a new table (version 0) or a changed schema. */
  newMetaData(schemaString: string, partitionColumns: string[]): MetaDataAction {
    const configuration: Record<string, string> = {};
    if (this.opts.checkpointInterval > 0) configuration['delta.checkpointInterval'] = String(this.opts.checkpointInterval);
    return {
      id: this.state.metaData?.id ?? randomUUID(),
      format: { provider: 'parquet', options: {} },
      schemaString,
      partitionColumns,
      configuration,
      createdTime: this.state.metaData?.createdTime ?? this.opts.now?.() ?? Date.now(),
    };
  }

  private apply(actions: readonly DeltaAction[], version: number): void {
    const s = this.state;
    for (const a of actions) {
      if ('add' in a) s.files.set(a.add.path, a.add);
      else if ('remove' in a) s.files.delete(a.remove.path);
      else if ('txn' in a) s.txns.set(a.txn.appId, version);
      else if ('metaData' in a) s.metaData = a.metaData;
      else if ('protocol' in a) s.protocol = a.protocol;
    }
    s.version = version;
  }

  private async loadCheckpoint(): Promise<void> {
    const hint = await this.store.get(lastCheckpointKey(this.tableRoot));
    if (!hint) return;
    let version: number;
    try {
      version = Number((JSON.parse(new TextDecoder().decode(hint)) as { version: unknown }).version);
    } catch {
      return; // a hint only: without it the log is read from version 0
    }
    const bytes = Number.isInteger(version) ? await this.store.get(checkpointKey(this.tableRoot, version)) : null;
    if (!bytes) return;
    this.apply(await decodeCheckpoint(bytes), version);
  }

  /** A checkpoint is an optimisation: failing to write one is a warning, never a failed commit. */
  private async maybeCheckpoint(version: number): Promise<void> {
    const every = this.opts.checkpointInterval;
    if (every <= 0 || version === 0 || version % every !== 0) return;
    try {
      const s = this.state;
      const actions: DeltaAction[] = [
        ...(s.protocol ? [{ protocol: s.protocol }] : []),
        ...(s.metaData ? [{ metaData: s.metaData }] : []),
        ...[...s.txns].map(([appId]) => ({ txn: { appId, version: 1, lastUpdated: 0 } })),
        ...[...s.files.values()].map((add) => ({ add })),
      ];
      await this.store.putObject(checkpointKey(this.tableRoot, version), encodeCheckpoint(actions));
      const hint = JSON.stringify({ version, size: actions.length });
      await this.store.putObject(lastCheckpointKey(this.tableRoot), new TextEncoder().encode(hint));
    } catch (err) {
      this.opts.warn?.(`Delta checkpoint of ${this.tableRoot} at version ${version} not written (${(err as Error).message}); readers replay the commits instead`);
    }
  }
}
