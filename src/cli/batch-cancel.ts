/**
 * `batch cancel OUT`: cancels the live openai-dialect batches of an output's journal through the
 * endpoints of the config, and records each as `cancelled` with `cancelled_at`. A cancelled
 * entry is over, so the next run submits its requests again (their results, if the batch wrote
 * some before it stopped, are not read).
 */
import type { JuryConfig } from '../../schemas/config.js';
import { isOver, readEntries, writeEntry, type JournalEntry, type JournalStore } from '../llm/providers/batch/journal.js';
import { openaiDialect, type BatchDialect } from '../llm/providers/batch/openai-dialect.js';
import { createRedactor } from '../util/redact.js';
import { UsageError } from './io.js';

/** The live entries to cancel: openai dialect, not over, `only` (a batch or input file id) when given. */
function toCancel(entries: readonly JournalEntry[], only: string | undefined): JournalEntry[] {
  if (only !== undefined) {
    const named = entries.filter((e) => e.batch_id === only || e.input_file_id === only);
    if (named.length === 0) throw new UsageError(`--batch ${only}: no such batch in the journal (batch list shows them)`);
    const e = named[0]!;
    if (isOver(e.state)) throw new UsageError(`batch ${only} is over (${e.state}): nothing to cancel`);
    if (e.dialect !== 'openai') throw new UsageError(`batch ${only} is of dialect ${e.dialect}: it runs inside its run; stop the run instead`);
    return [e];
  }
  return entries.filter((e) => !isOver(e.state) && e.dialect === 'openai');
}

/** A dialect per endpoint of the entries; refused (nothing cancelled) when the config lacks one or it has no base_url. */
function dialectsFor(entries: readonly JournalEntry[], config: JuryConfig): Map<string, BatchDialect> {
  const out = new Map<string, BatchDialect>();
  for (const name of new Set(entries.map((e) => e.endpoint))) {
    const endpoint = config.endpoints[name];
    if (!endpoint) throw new UsageError(`endpoint "${name}" of the journal's live batches is not in the config: pass the config of the run that submitted them (-c)`);
    if (!endpoint.base_url) throw new UsageError(`endpoint "${name}" has no base_url (kind ${endpoint.kind}): its batches cannot be reached from here`);
    const key = endpoint.api_key_env ? process.env[endpoint.api_key_env] : undefined;
    out.set(name, openaiDialect(name, endpoint, createRedactor(process.env, [key])));
  }
  return out;
}

/** Cancels one batch and records it; a batch never created (no id, none found for its input file) is recorded cancelled too. */
async function cancelOne(store: JournalStore, entry: JournalEntry, dialect: BatchDialect, signal: AbortSignal): Promise<string> {
  const id = entry.batch_id ?? (await dialect.findByInputFile(entry.input_file_id, signal))?.id;
  const said = id === undefined ? 'never created' : (await dialect.cancel(id, signal)).state;
  await writeEntry(store, { ...entry, ...(id !== undefined ? { batch_id: id } : {}), state: 'cancelled', cancelled_at: new Date().toISOString() });
  return `${entry.endpoint}  ${id ?? `(input file ${entry.input_file_id})`}  ${entry.custom_ids.length} requests  cancelled (server: ${said})`;
}

export async function cancelBatches(store: JournalStore, config: JuryConfig, only: string | undefined): Promise<void> {
  const live = toCancel(await readEntries(store), only);
  if (live.length === 0) {
    process.stderr.write('no live openai-dialect batch in the journal: nothing to cancel\n');
    return;
  }
  const dialects = dialectsFor(live, config);
  const signal = new AbortController().signal;
  let failed = 0;
  for (const entry of live) {
    try {
      process.stdout.write(`${await cancelOne(store, entry, dialects.get(entry.endpoint)!, signal)}\n`);
    } catch (err) {
      failed += 1;
      process.stderr.write(`${entry.endpoint}  ${entry.batch_id ?? entry.input_file_id}: not cancelled: ${(err as Error).message}\n`);
    }
  }
  process.stderr.write(`${live.length - failed} of ${live.length} batches cancelled and recorded in the journal; the next run submits their requests again\n`);
  if (failed) process.exitCode = 1;
}
