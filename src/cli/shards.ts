/**
 * `shards list|verify OUT`: the committed files of an output (local folder or s3:// URL), read
 * from its commit manifests, so a reader loads exactly what is complete (README, "Reading the
 * shards"), and a check that each is there with its recorded size and sha256.
 */
import type { Command } from 'commander';
import { statSync } from 'node:fs';
import { FileFormat, MANIFEST_TABLE_NAMES, type ManifestTableName } from '../../schemas/outputs.js';
import type { FileFilter } from '../pipeline/commit/shard-list.js';
import { UsageError } from './io.js';
import { loadJuryConfig } from './jury-setup.js';
import { ReasoningJuryError } from '../util/errors.js';

interface ShardsOptions {
  config?: string;
  table?: string[];
  format?: string;
  json?: boolean;
}

function filterOf(opts: ShardsOptions): FileFilter {
  const filter: FileFilter = {};
  if (opts.table) {
    const bad = opts.table.find((t) => !(MANIFEST_TABLE_NAMES as readonly string[]).includes(t));
    if (bad) throw new UsageError(`--table must be one of ${MANIFEST_TABLE_NAMES.join(', ')} (got "${bad}")`);
    filter.tables = opts.table as ManifestTableName[];
  }
  if (opts.format !== undefined) {
    const f = FileFormat.safeParse(opts.format);
    if (!f.success) throw new UsageError(`--format must be parquet, arrow or jsonl (got "${opts.format}")`);
    filter.formats = [f.data];
  }
  return filter;
}

/** No output there: one line, exit 1 (an empty listing or "all match" would pass for a checked output). */
class NoOutputError extends ReasoningJuryError {
  override get kind() {
    return 'output' as const;
  }
}

/** The output's store; the listing modules load here, not when the command is registered (--help stays light). */
async function open(out: string, opts: ShardsOptions, verb: 'list' | 'check') {
  const { openOutput } = await import('../compose/io.js');
  const config = loadJuryConfig(opts.config ? { config: opts.config } : {});
  const target = await openOutput(out, config).catch((err: Error) => {
    throw new UsageError(err.message);
  });
  if (!(await outputExists(target.location, target.store))) throw new NoOutputError(`no output at ${target.location}: nothing to ${verb}`);
  return target;
}

/** A local folder that exists; an s3:// prefix with at least one object under it. */
async function outputExists(location: string, store: Awaited<ReturnType<typeof import('../compose/io.js').openOutput>>['store']): Promise<boolean> {
  if (!location.startsWith('s3://')) return statSync(location, { throwIfNoEntry: false })?.isDirectory() === true;
  return (await store.list('_commits/')).length > 0 || (await store.list('')).length > 0;
}

/**
 * A range whose writer stopped between its manifest and its publish is committed but its parts
 * are still staged: a reader finishes the publish before it lists or checks. Without the right
 * to write, the check goes on and reports those parts missing.
 */
async function publishStaged(target: { store: import('../pipeline/storage/object-store.js').ObjectStore; location: string }): Promise<void> {
  const { ShardCommitter } = await import('../pipeline/commit/shard-commit.js');
  try {
    const r = await new ShardCommitter(target.store).recover({ dropUnfinished: false });
    if (r.published) process.stderr.write(`published ${r.published} committed range(s) whose parts were still staged under ${target.location}\n`);
  } catch (err) {
    process.stderr.write(`could not publish committed ranges whose parts are still staged (${(err as Error).message.split('\n')[0]}); reading the output as it is\n`);
  }
}

export function registerShards(program: Command): void {
  const shards = program.command('shards').description('list and verify the committed shard files of an output (by its commit manifests)');
  const common = (c: Command) =>
    c
      .option('-c, --config <file>', 'config whose s3: section reaches an s3:// output (endpoint, region, path style)')
      .option('--table <name...>', `only these tables (${MANIFEST_TABLE_NAMES.join(', ')})`)
      .option('--format <format>', 'only files of this format: parquet | arrow | jsonl (the JSONL corpus)');
  common(shards.command('list <out>').description('print every committed file, one per line (local path or s3:// URL)'))
    .option('--json', 'one JSON array of {table, format, key, location, rows, bytes, sha256, range, manifest}')
    .addHelpText(
      'after',
      `
Only files listed in a manifest under <out>/_commits/ are printed: parts of a range whose write
failed, or of a range retracted because its input changed, never are. A committed range whose
writer stopped before moving its parts out of _staging/ is published first. Hand the list to a reader:
  duckdb -c "SELECT count(*) FROM read_parquet([$(reasoning-jury shards list out --table verdicts --format parquet | sed "s/.*/'&'/" | paste -sd,)])"`,
    )
    .action(async (out: string, opts: ShardsOptions) => {
      const filter = filterOf(opts);
      const { committedFiles } = await import('../pipeline/commit/shard-list.js');
      const target = await open(out, opts, 'list');
      await publishStaged(target);
      const files = await committedFiles(target.store, filter);
      if (opts.json) process.stdout.write(`${JSON.stringify(files, null, 2)}\n`);
      else if (files.length) process.stdout.write(`${files.map((f) => f.location).join('\n')}\n`);
    });
  common(shards.command('verify <out>').description('check that every committed file exists with the size and sha256 its manifest records'))
    .addHelpText('after', '\nA committed range whose writer stopped before moving its parts out of _staging/ is published first.\nPrints one line per problem (missing file, other size, other sha256, corrupt manifest) and exits 1 if there is any; 0 when all match.')
    .action(async (out: string, opts: ShardsOptions) => {
      const filter = filterOf(opts);
      const target = await open(out, opts, 'check');
      await publishStaged(target);
      const { verifyOutput } = await import('../pipeline/commit/shard-list.js');
      const report = await verifyOutput(target.store, filter);
      for (const p of report.problems) process.stdout.write(`${p}\n`);
      const unsealed = report.unsealed ? ` (${report.unsealed} manifests predate sealing: their files are checked, their other fields cannot be)` : '';
      process.stderr.write(`${report.files} files in ${report.manifests} committed ranges checked under ${target.location}: ${report.problems.length ? `${report.problems.length} problems` : 'all match their manifests'}${unsealed}\n`);
      if (report.problems.length) process.exitCode = 1;
    });
  registerShardsDelta(shards);
}

/** `shards delta OUT`: gives an output Delta tables after the fact, or adds what they miss. */
function registerShardsDelta(shards: Command): void {
  shards
    .command('delta <out>')
    .description('build or bring up to date the Delta Lake log of every Parquet table of an output from its commit manifests')
    .option('-c, --config <file>', 'config whose s3: section reaches an s3:// output; its output.delta.checkpoint_interval applies')
    .addHelpText(
      'after',
      `
Each committed range not yet in a table is added in one Delta commit per table, in key order;
a range already there is left alone, so it can run again at any time, also while a run or a
consumer group writes the output (the log's versions are claimed create-only). Output:
one line per table with its version and live files. docs/delta.md.`,
    )
    .action(async (out: string, opts: ShardsOptions) => {
      const target = await open(out, opts, 'check');
      await publishStaged(target);
      const { openTableLog, reconcileTables } = await import('../compose/table-log.js');
      const config = loadJuryConfig(opts.config ? { config: opts.config } : {});
      const tables = (await openTableLog(target.store, 'delta', config.output.delta.checkpoint_interval))!;
      const added = await reconcileTables(tables, target.store, true);
      for (const t of await tables.summary()) process.stdout.write(`${target.location}/${t.root}  version ${t.version}  ${t.files} live file(s)\n`);
      process.stderr.write(`${added} committed range(s) added to the Delta tables of ${target.location}\n`);
    });
}
