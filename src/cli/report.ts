import type { Command } from 'commander';
import { join, resolve } from 'node:path';
import { buildReport } from '../report/job.js';
import { logger } from '../util/log.js';

const log = logger('report');

interface ReportCliOptions {
  shards: string[];
  out?: string;
  taxonomy?: string;
  labels?: string;
  generatorKey: string;
  correctKey: string;
  title?: string;
}

export function registerReport(program: Command): void {
  program
    .command('report')
    .description('defect fingerprints per generator model: Parquet tables for the warehouse and one HTML report with charts')
    .requiredOption('--shards <dirs...>', 'output folder(s) of `run`')
    .option('-o, --out <dir>', 'where to write fingerprints/*.parquet and report.html (default: <first shards folder>/_report)')
    .option('--taxonomy <file>', 'taxonomy the leaf ids come from (default: the shipped taxonomy/default.json)')
    .option('--labels <file.parquet>', 'leaf labels from `taxonomy induce`, used instead of the shards\' own')
    .option('--generator-key <key>', 'meta key naming the model that wrote each trace', 'generator')
    .option('--correct-key <key>', 'meta key saying whether the final answer was right (true/false)', 'final_answer_correct')
    .option('--title <text>', 'report title')
    .addHelpText(
      'after',
      `
Tables (one row per generator and group):
  fp_models          traces, steps, defects, distinct flagged steps by highest severity
  fp_category_steps  flagged steps per category and severity (a step counts once per category)
  fp_leaves          defects and % of defects per leaf, with flagged steps by severity
  fp_correctness     defects and fatal defects per trace, split by meta.<correct-key>
Records without a verdict are left out of every number (counted in fp_models).

Example:
  reasoning-jury report --shards out/ && open out/_report/report.html`,
    )
    .action(async (opts: ReportCliOptions) => {
      const out = opts.out ?? join(opts.shards[0]!, '_report');
      // ReportInputError and TaxonomyError are input errors (exit 2, the line as it is) by their kind.
      const r = await buildReport({
        shards: opts.shards,
        out,
        ...(opts.taxonomy ? { taxonomyFile: opts.taxonomy } : {}),
        ...(opts.labels ? { labelsFile: opts.labels } : {}),
        generatorKey: opts.generatorKey,
        correctKey: opts.correctKey,
        ...(opts.title ? { title: opts.title } : {}),
      });
      for (const n of r.notes) log.info(n);
      const gens = r.fingerprints.fp_models.map((m) => `${m.generator} (${m.traces} traces, ${m.defects} defects)`).join(', ');
      process.stdout.write(`report: ${r.htmlPath}\ntables: ${resolve(out, 'fingerprints')}/{${Object.keys(r.tablePaths).join(',')}}.parquet\ngenerators: ${gens || 'none'}\n`);
    });
}
