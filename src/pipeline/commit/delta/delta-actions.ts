/**
 * The Delta Lake log actions we write and read (Delta transaction protocol, reader version 1,
 * writer version 2: no table features). One commit is a JSON file of one action per line,
 * `<table>/_delta_log/<version, 20 digits>.json`.
 */

export interface ProtocolAction {
  minReaderVersion: number;
  minWriterVersion: number;
}

export interface MetaDataAction {
  id: string;
  format: { provider: 'parquet'; options: Record<string, string> };
  schemaString: string;
  partitionColumns: string[];
  configuration: Record<string, string>;
  createdTime: number;
}

export interface AddAction {
  /** relative to the table root, percent-encoded (a URI path) */
  path: string;
  partitionValues: Record<string, string | null>;
  size: number;
  modificationTime: number;
  dataChange: boolean;
  /** JSON: numRecords, minValues, maxValues, nullCount */
  stats?: string;
}

export interface RemoveAction {
  path: string;
  deletionTimestamp: number;
  dataChange: boolean;
  extendedFileMetadata: boolean;
  partitionValues: Record<string, string | null>;
  size: number;
}

/** Streaming idempotency: one appId per range generation; a log holding it has that commit. */
export interface TxnAction {
  appId: string;
  version: number;
  lastUpdated: number;
}

export interface CommitInfoAction {
  timestamp: number;
  operation: string;
  operationParameters: Record<string, string>;
  engineInfo: string;
  isBlindAppend: boolean;
}

export type DeltaAction =
  | { protocol: ProtocolAction }
  | { metaData: MetaDataAction }
  | { add: AddAction }
  | { remove: RemoveAction }
  | { txn: TxnAction }
  | { commitInfo: CommitInfoAction };

export const DELTA_PROTOCOL: ProtocolAction = { minReaderVersion: 1, minWriterVersion: 2 };

/** `_delta_log/` under a table root ('verdicts/'). */
export const deltaLogPrefix = (tableRoot: string): string => `${tableRoot}_delta_log/`;

export function commitKey(tableRoot: string, version: number): string {
  return `${deltaLogPrefix(tableRoot)}${String(version).padStart(20, '0')}.json`;
}

export function checkpointKey(tableRoot: string, version: number): string {
  return `${deltaLogPrefix(tableRoot)}${String(version).padStart(20, '0')}.checkpoint.parquet`;
}

export const lastCheckpointKey = (tableRoot: string): string => `${deltaLogPrefix(tableRoot)}_last_checkpoint`;

/** The version of a commit file's key, or null for any other file of the log. */
export function versionOfKey(key: string): number | null {
  const m = /\/(\d{20})\.json$/.exec(key);
  return m ? Number(m[1]) : null;
}

export function encodeCommit(actions: readonly DeltaAction[]): Uint8Array {
  return new TextEncoder().encode(actions.map((a) => JSON.stringify(a)).join('\n') + '\n');
}

/** Parses one commit file; blank lines are allowed, anything else that is not JSON is corruption. */
export function decodeCommit(bytes: Uint8Array, key: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of new TextDecoder().decode(bytes).split('\n')) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      throw new Error(`corrupt Delta log file ${key}: a line is not JSON`);
    }
  }
  return out;
}

/**
 * A part's key below its table root as a Delta path: a URI path, so '%' (from Hive escaping of
 * partition values), '+' (Kafka positions) and anything unusual are percent-encoded.
 */
export function deltaPath(relativeKey: string): string {
  return relativeKey
    .split('/')
    .map((seg) => seg.replace(/[^A-Za-z0-9._~=-]/gu, (c) => encodeURIComponent(c).replace(/[!'()*]/g, (x) => `%${x.charCodeAt(0).toString(16).toUpperCase()}`)))
    .join('/');
}
