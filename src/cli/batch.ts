/**
 * `batch list|cancel OUT`: the batch journal of an output (`_batches/`, docs/batch.md) as a
 * table, and the cancellation of its live `openai`-dialect batches through the endpoints the
 * config names. A cancelled batch is recorded as such, so the next run submits its requests
 * again instead of waiting for it.
 */
import type { Command } from 'commander';
import type { JuryConfig } from '../../schemas/config.js';
import type { JournalEntry, JournalStore } from '../llm/providers/batch/journal.js';
import { UsageError } from './io.js';
import { loadJuryConfig } from './jury-setup.js';

interface BatchOptions {
  config?: string;
  json?: boolean;
  batch?: string;
}

/** One journal entry as `batch list` shows it. */
export interface BatchRow {
  endpoint: string;
  model: string;
  dialect: string;
  batch_id: string;
  state: string;
  requests: number;
  created: string;
  finished: string;
}

const COLUMNS: ReadonlyArray<keyof BatchRow> = ['endpoint', 'model', 'dialect', 'batch_id', 'state', 'requests', 'created', 'finished'];

function rowOf(e: JournalEntry): BatchRow {
  return { endpoint: e.endpoint, model: e.model, dialect: e.dialect, batch_id: e.batch_id ?? `(input file ${e.input_file_id})`, state: e.state, requests: e.custom_ids.length, created: e.submitted_at, finished: e.finished_at ?? e.cancelled_at ?? '' };
}

export function batchTable(rows: readonly BatchRow[]): string {
  const cells = [COLUMNS.map((c) => c.replace('_', ' ')), ...rows.map((r) => COLUMNS.map((c) => String(r[c])))];
  const widths = COLUMNS.map((_c, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return `${cells.map((row) => row.map((v, i) => (i === row.length - 1 ? v : v.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n')}\n`;
}

/** The output's journal store; an output without a journal is refused (exit 1). */
async function openJournal(out: string, config: JuryConfig): Promise<{ store: JournalStore; location: string }> {
  const { openOutput } = await import('../compose/io.js');
  const target = await openOutput(out, config).catch((err: Error) => {
    throw new UsageError(err.message);
  });
  return { store: target.store, location: target.location };
}

async function list(out: string, opts: BatchOptions): Promise<void> {
  const config = loadJuryConfig(opts.config ? { config: opts.config } : {});
  const { store, location } = await openJournal(out, config);
  const { readEntries } = await import('../llm/providers/batch/journal.js');
  const rows = (await readEntries(store)).map(rowOf);
  if (opts.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  else if (rows.length) process.stdout.write(batchTable(rows));
  else process.stderr.write(`no batches in the journal of ${location} (${location}/_batches/)\n`);
}

export function registerBatch(program: Command): void {
  const batch = program.command('batch').description('list the batches of a batch-mode run\'s output, or cancel its live ones (docs/batch.md)');
  batch
    .command('list <out>')
    .description('print every batch of the output\'s journal (_batches/): endpoint, model, dialect, batch id, state, requests, created, finished')
    .option('-c, --config <file>', 'config whose s3: section reaches an s3:// output')
    .option('--json', 'one JSON array of {endpoint, model, dialect, batch_id, state, requests, created, finished}')
    .addHelpText('after', '\nOldest first. A batch whose id was not recorded yet shows its input file id. `finished` is empty while\na batch is live; a cancelled one shows when `batch cancel` recorded it.')
    .action(async (out: string, opts: BatchOptions) => list(out, opts));
  batch
    .command('cancel <out>')
    .description('cancel the live openai-dialect batches of the output\'s journal through their endpoints, and record it')
    .requiredOption('-c, --config <file>', 'the run\'s config: each batch is cancelled through the endpoint of its name (base_url, api_key_env)')
    .option('--batch <id>', 'only this batch (its batch id, or its input file id while it has none)')
    .addHelpText(
      'after',
      `
Each live batch of dialect openai is cancelled (POST /batches/{id}/cancel) and recorded as
cancelled in the journal, so the next run of the same command submits all its requests again
(lines the batch answered before it stopped are not read). Meant for a stopped run: a run still
waiting on the batch sees it cancelled and fails those calls for good. A live batch of an
endpoint the config lacks is refused (exit 2, nothing cancelled). Batches of dialect command run
inside their run: stop the run instead. Prints one line per batch cancelled; exit 1 when the
server refused one.`,
    )
    .action(async (out: string, opts: BatchOptions) => {
      const { cancelBatches } = await import('./batch-cancel.js');
      const config = loadJuryConfig({ config: opts.config! });
      const { store } = await openJournal(out, config);
      await cancelBatches(store, config, opts.batch);
    });
}
