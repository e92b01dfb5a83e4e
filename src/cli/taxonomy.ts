import type { Command } from 'commander';
import { basename, dirname, resolve } from 'node:path';
import { LocalObjectStore } from '../pipeline/storage/object-store.js';
import { readInduceInput } from '../induce/input.js';
import { induceTaxonomy } from '../induce/job.js';
import { InductionError } from '../induce/phases.js';
import { writeLabels } from '../induce/labels.js';
import { loadTaxonomy } from '../taxonomy/schema.js';
import { inducerSeat, taxonomySettings } from '../taxonomy/seats.js';
import { UsageError } from './io.js';
import { JURY_OPTION_HELP, juryOption, loadJuryConfig, openJury, type JuryOptions } from './jury-setup.js';
import { logger } from '../util/log.js';

const log = logger('taxonomy');

interface InduceCliOptions extends JuryOptions {
  defects: string[];
  out: string;
  labels?: string;
  work?: string;
  batchSize: string;
  assignBatch: string;
  growLimit?: string;
  concurrency: string;
  maxPasses: string;
  generatorKey: string;
  name?: string;
  progress: boolean;
}

const positiveInt = (v: string, flag: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer (got "${v}")`);
  return n;
};

/** `<out>.labels.parquet` next to `<out>.json`. */
const defaultLabelsPath = (out: string) => `${out.replace(/\.json$/i, '')}.labels.parquet`;

async function writeText(path: string, text: string): Promise<void> {
  const abs = resolve(path);
  await new LocalObjectStore(dirname(abs)).putObject(basename(abs), new TextEncoder().encode(text));
}

async function induceAction(opts: InduceCliOptions): Promise<void> {
  if (!/\.json$/i.test(opts.out)) throw new UsageError(`--out must name a .json file (got "${opts.out}")`);
  const config = loadJuryConfig(opts);
  const settings = taxonomySettings(config);
  const labelsPath = opts.labels ?? defaultLabelsPath(opts.out);
  const workDir = resolve(opts.work ?? `${opts.out}.work`);
  // An InputError (no such folder, no committed ranges) is an input error by its kind: exit 2.
  const input = await readInduceInput(opts.defects, opts.generatorKey);
  log.info(`${input.defects.length} defects from ${opts.defects.length} folder(s)${input.duplicates ? ` (${input.duplicates} duplicate ids skipped)` : ''}; checkpoints in ${workDir}`);
  const runtime = await openJury(config, opts);
  const stop = new AbortController();
  const onSignal = () => {
    log.info('stopping after the step in flight (run the same command again to resume)');
    stop.abort();
    process.once('SIGINT', () => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    let last = '';
    const result = await induceTaxonomy({
      gateway: runtime.gateway,
      seat: inducerSeat(config),
      prompts: runtime.jury.prompts,
      defects: input.defects,
      workDir,
      growBatch: positiveInt(opts.batchSize, '--batch-size'),
      growLimit: opts.growLimit ? positiveInt(opts.growLimit, '--grow-limit') : null,
      assignBatch: positiveInt(opts.assignBatch, '--assign-batch'),
      maxRounds: settings.max_rounds,
      maxPasses: positiveInt(opts.maxPasses, '--max-passes'),
      concurrency: positiveInt(opts.concurrency, '--concurrency'),
      name: opts.name ?? `induced from ${opts.defects.map((d) => basename(resolve(d))).join(', ')}`,
      signal: stop.signal,
      onProgress: (phase, done, total) => {
        const line = `${phase} ${done}/${total}`;
        if (opts.progress && line !== last) log.info(line);
        last = line;
      },
    }).catch((e: Error) => {
      // The induction found nothing to build, or the model could not consolidate: the user's to act on here.
      throw e instanceof InductionError ? new UsageError(e.message) : e;
    });
    if (result.stopped || !result.taxonomy) {
      process.stdout.write(`stopped early: run the same command again to continue from ${workDir}\n`);
      return;
    }
    await writeText(opts.out, `${JSON.stringify(result.taxonomy, null, 2)}\n`);
    await writeLabels(labelsPath, result.labels);
    const t = result.taxonomy;
    const assigned = result.labels.filter((l) => l.leaf_id !== null).length;
    const calls = runtime.gateway.ledger.summary().total;
    process.stdout.write(
      [
        `taxonomy: ${resolve(opts.out)} (${t.categories.length} categories, ${t.categories.reduce((a, c) => a + c.leaves.length, 0)} leaves)`,
        `labels:   ${resolve(labelsPath)} (${assigned} of ${result.labels.length} defects assigned)`,
        `calls:    ${calls.calls} (${calls.cached} from the cache), cost ${calls.cost_usd.toFixed(6)} USD${result.resumed ? ', resumed from a checkpoint' : ''}`,
      ].join('\n') + '\n',
    );
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await runtime.close();
  }
}

export function registerTaxonomy(program: Command): void {
  const tax = program.command('taxonomy').description('defect taxonomies: induce one from judged defects, or check a taxonomy file');
  tax
    .command('induce')
    .description('induce a two-level defect taxonomy from the defects of one or more runs (grow, consolidate, assign)')
    .requiredOption('--defects <dirs...>', 'output folder(s) of `run` whose defects are pooled')
    .requiredOption('--out <file.json>', 'where to write the frozen taxonomy (usable as taxonomy.file)')
    .option('--labels <file.parquet>', 'where to write each defect\'s leaf (default: <out>.labels.parquet)')
    .option('--work <dir>', 'checkpoint folder for resuming (default: <out>.work)')
    .addOption(juryOption('config', `${JURY_OPTION_HELP.config}; taxonomy.inducer / taxonomy.assigner pick the model`))
    .option('--batch-size <n>', 'defects per grow call', '40')
    .option('--assign-batch <n>', 'defects per assignment call', '20')
    .option('--grow-limit <n>', 'grow from the first n interleaved defects only (all are still assigned)')
    .option('--concurrency <n>', 'assignment calls in flight', '8')
    .option('--max-passes <n>', 'passes over still-unassigned defects before giving up on them', '5')
    .option('--generator-key <key>', 'meta key naming the model that wrote each trace (batches mix models)', 'generator')
    .option('--name <text>', 'name stored in the taxonomy file')
    .addOption(juryOption('auditLog'))
    .addOption(juryOption('cache'))
    .option('--no-progress', 'no progress lines on stderr')
    .addHelpText(
      'after',
      `
Grow shows the model the taxonomy so far and a batch of defects (batches interleave generators)
and keeps only additions; consolidate merges near-duplicates and freezes category/leaf ids from
the names; assign resets all labels and labels every defect, retrying leftovers. Every step is
checkpointed in --work: after a crash or Ctrl-C, the same command resumes.

Example:
  reasoning-jury taxonomy induce --defects out/ --out taxonomy.json
  reasoning-jury report --shards out/ --taxonomy taxonomy.json --labels taxonomy.labels.parquet`,
    )
    .action(induceAction);
  tax
    .command('validate')
    .description('check a taxonomy file and print its categories and leaf counts')
    .argument('[file]', 'taxonomy JSON (default: the shipped taxonomy/default.json)')
    .action((file?: string) => {
      const t = loadTaxonomy(file); // a TaxonomyError is an input error by its kind: exit 2
      const lines = t.categories.map((c) => `${c.id.padEnd(24)} ${String(c.leaves.length).padStart(3)}  ${c.name}`);
      process.stdout.write(`${t.name}\n${lines.join('\n')}\n${t.categories.length} categories, ${t.categories.reduce((a, c) => a + c.leaves.length, 0)} leaves\n`);
    });
}
