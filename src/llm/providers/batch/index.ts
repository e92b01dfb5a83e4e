/**
 * Batch inference (docs/batch.md): in batch mode the runtime (src/compose/runtime.ts) serves
 * each endpoint that takes batches with a batch provider instead of its online one.
 */
import type { EndpointConfig } from '../../../../schemas/config.js';
import { createRedactor, type Redactor } from '../../../util/redact.js';
import { commandDialect } from './command-dialect.js';
import type { JournalStore } from './journal.js';
import { openaiDialect, type BatchDialect } from './openai-dialect.js';
import { createBatchProvider, type BatchProvider, type BatchStats } from './provider.js';

export { BATCH_DEFAULTS, type BatchProvider, type BatchStats } from './provider.js';
export { readEntries, isOver, JOURNAL_PREFIX, type JournalEntry, type JournalStore } from './journal.js';
export { openaiDialect, type BatchDialect, type BatchInfo } from './openai-dialect.js';
export { commandDialect } from './command-dialect.js';

type DialectFactory = (name: string, endpoint: EndpointConfig, redactor: Redactor, env: NodeJS.ProcessEnv) => BatchDialect;

/** The dialects by their `batch.dialect` name (`none` has none: its calls stay online). */
const DIALECTS: Readonly<Record<string, DialectFactory>> = { openai: openaiDialect, command: commandDialect };

/** The dialect an endpoint's batches go through. */
export function dialectFor(name: string, endpoint: EndpointConfig, redactor: Redactor, env: NodeJS.ProcessEnv = process.env): BatchDialect {
  const make = DIALECTS[endpoint.batch?.dialect ?? 'openai'];
  if (!make) throw new Error(`endpoint "${name}": batch.dialect "${endpoint.batch?.dialect}" sends no batches`);
  return make(name, endpoint, redactor, env);
}

/** Whether calls of this endpoint go out in batches when the run is in batch mode. */
export function takesBatches(endpoint: EndpointConfig): boolean {
  return endpoint.kind !== 'local' && (endpoint.batch?.dialect ?? 'openai') !== 'none';
}

/** The batch provider of an endpoint that takes batches, through its dialect. */
export function batchProviderFor(name: string, endpoint: EndpointConfig, journal: JournalStore, env: NodeJS.ProcessEnv = process.env): BatchProvider {
  const key = endpoint.api_key_env ? env[endpoint.api_key_env] : undefined;
  const redactor = createRedactor(env, [key]);
  return createBatchProvider(name, endpoint, { journal, dialect: dialectFor(name, endpoint, redactor, env), redactor });
}

/** The stats of several endpoints' batches, added up (the oldest wait is the longest of them). */
export function sumStats(all: readonly BatchStats[]): BatchStats {
  const out: BatchStats = { submitted: 0, in_progress: 0, completed: 0, failed: 0, requests_submitted: 0, served_from_journal: 0, waiting: 0, oldest_wait_ms: 0 };
  for (const s of all) {
    for (const k of Object.keys(out) as Array<keyof BatchStats>) out[k] = k === 'oldest_wait_ms' ? Math.max(out[k], s[k]) : out[k] + s[k];
  }
  return out;
}

/** A journal kept in memory: batch mode without an output to keep it in (nothing resumes). */
export function memoryJournal(): JournalStore {
  const objects = new Map<string, Uint8Array>();
  return {
    putObject: async (key, bytes) => void objects.set(key, bytes),
    get: async (key) => objects.get(key) ?? null,
    list: async (prefix) => [...objects.keys()].filter((k) => k.startsWith(prefix)).sort(),
  };
}
