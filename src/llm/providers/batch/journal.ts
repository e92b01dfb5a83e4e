/**
 * The batch journal: one JSON object per batch under `_batches/<endpoint>/` of the output, so
 * a run stopped while batches are pending (they may take up to a day) re-attaches to them, and
 * results that arrived before the stop are not paid for again. Written before the batch is
 * created (state `uploaded`: its input file id is known, so a re-run can find the batch even if
 * the process died between creating it and recording its id), again once it is created, and
 * once it is over, with its results.
 *
 * The store is the output's (the one manifests are written to); any store with these three
 * operations will do.
 */
import type { StoredResult } from './lines.js';

export interface JournalStore {
  putObject(key: string, bytes: Uint8Array): Promise<void>;
  get(key: string): Promise<Uint8Array | null>;
  list(prefix: string): Promise<string[]>;
}

export const JOURNAL_PREFIX = '_batches/';
export const JOURNAL_FORMAT = 1;

/** Server states of a batch, and `uploaded` (input file sent, batch not known to be created) and `lost` (the server no longer knows it). */
export type BatchState = 'uploaded' | 'validating' | 'in_progress' | 'finalizing' | 'completed' | 'failed' | 'expired' | 'cancelling' | 'cancelled' | 'lost';

const OVER: ReadonlySet<BatchState> = new Set(['completed', 'failed', 'expired', 'cancelled', 'lost']);

export const isOver = (state: BatchState): boolean => OVER.has(state);

export interface BatchPaths {
  input: string;
  output: string;
}

export interface JournalEntry {
  format: typeof JOURNAL_FORMAT;
  /** `openai` or `command` */
  dialect: string;
  endpoint: string;
  model: string;
  input_file_id: string;
  /** absent while `uploaded` */
  batch_id?: string;
  custom_ids: string[];
  /** dialect `command`: the batch's input and output files on the machine that ran it */
  paths?: BatchPaths;
  state: BatchState;
  submitted_at: string;
  finished_at?: string;
  /** set by `reasoning-jury batch cancel` */
  cancelled_at?: string;
  /** once over: each request's result by custom_id (requests without a line have none) */
  results?: Record<string, StoredResult>;
}

/** The journal's key of an entry: submission time first, so a listing is in submission order. */
export function entryKey(entry: Pick<JournalEntry, 'endpoint' | 'submitted_at' | 'input_file_id'>): string {
  const stamp = entry.submitted_at.replace(/[-:.]/g, '');
  return `${JOURNAL_PREFIX}${safe(entry.endpoint)}/${stamp}-${safe(entry.input_file_id)}.json`;
}

const safe = (s: string): string => s.replace(/[^A-Za-z0-9_-]/g, '_');

export async function writeEntry(store: JournalStore, entry: JournalEntry): Promise<void> {
  await store.putObject(entryKey(entry), new TextEncoder().encode(`${JSON.stringify(entry)}\n`));
}

/** Every readable entry of `endpoint` (all endpoints when absent), oldest first; a damaged one is skipped. */
export async function readEntries(store: JournalStore, endpoint?: string): Promise<JournalEntry[]> {
  const keys = await store.list(endpoint === undefined ? JOURNAL_PREFIX : `${JOURNAL_PREFIX}${safe(endpoint)}/`);
  const out: JournalEntry[] = [];
  for (const key of keys.filter((k) => k.endsWith('.json')).sort()) {
    const bytes = await store.get(key);
    if (!bytes) continue;
    try {
      const entry = JSON.parse(new TextDecoder().decode(bytes)) as JournalEntry;
      if (entry.format === JOURNAL_FORMAT && Array.isArray(entry.custom_ids)) out.push(entry);
    } catch {
      // a torn write of a store without atomic puts: the batch is treated as never submitted
    }
  }
  return out;
}
