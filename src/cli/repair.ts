import { DEFAULT_CHECKPOINT_INTERVAL, openTableLog } from '../compose/table-log.js';
import type { Command } from 'commander';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_MAX_TOKENS, type JuryConfig, type RepairConfig } from '../../schemas/config.js';
import type { ShardFormat } from '../../schemas/outputs.js';
import { isS3Url, openOutput } from '../compose/io.js';
import { RedecideError } from '../compose/redecide.js';
import { exportLines, importRows, parseBatchResults, readCandidates, runRows, writeRepairs, type RangeCandidates, type RepairOutputResult } from '../compose/repair-offline.js';
import { retractFilledRanges } from '../compose/repair-import.js';
import { costOf } from '../llm/ledger.js';
import { logger } from '../util/log.js';
import { loadPromptSet, REPAIR_TEMPLATES } from '../prompts/templates.js';
import { UsageError } from './io.js';
import { addLeaseOptions, withOutputLease, type LeaseFlags } from './lease-options.js';
import { juryOption, loadJuryConfig, openJury, type JuryOptions } from './jury-setup.js';

interface RepairOptions extends JuryOptions, LeaseFlags {
  out?: string;
  to?: string;
  from?: string;
  format: string;
}

const location = (url: string): string => (isS3Url(url) ? url.replace(/\/+$/, '') : resolve(url));

const HELP = `
Defect-guided repair (docs/repair.md) over the committed ranges of a judged output, read through
its manifests: the decision facts of each record (verdicts, defects, steps) select the records
the config's repair.gate retries, and the records themselves come from the output's curated
corpus, mapped again with input.mapping (so the output needs its corpus, and the config the
mapping it was judged with, reference_answer included).

  repair run OUT -c jury.yaml -o REPAIRED      retries through the generator seat (same gateway:
                                               limits, retries, cache, audit log, ledger) and commits
                                               a repairs table per range to REPAIRED
  repair export OUT -c jury.yaml --to req.jsonl the retry requests in the OpenAI Batch API format
                                               (custom_id, method, url, body), one line per retry
  repair import OUT -c jury.yaml --from out.jsonl -o REPAIRED
                                               the batch's output lines, answers extracted the same
                                               way, into the same repairs table; a retry with no
                                               line or a failed one is a row with error

Ranges go to REPAIRED under the names they have in OUT (parts first, manifest last); running the
same command again after a crash skips the ranges already there, so each (record, condition,
attempt) is written once. Re-judging (repair.rejudge) applies to run only. run and import take
REPAIRED's lease first: while another command writes it they stop with exit code 4 before any
model call (or wait: --wait-for-lease; docs/layout.md, "One writer per output").`;

function repairSection(config: JuryConfig): RepairConfig {
  if (!config.repair?.enabled) throw new UsageError('the config has no repair section (or repair.enabled is false): nothing to retry');
  return config.repair;
}

async function candidatesOf(shards: string, config: JuryConfig, repair: RepairConfig): Promise<{ ranges: RangeCandidates[]; location: string }> {
  const from = await openOutput(shards, {}).catch((err: Error) => {
    throw new UsageError(`${shards}: ${err.message}`);
  });
  const ranges = await readCandidates(from.store, from.location, config, repair).catch((err: unknown) => {
    throw err instanceof RedecideError ? new UsageError(err.message) : err;
  });
  return { ranges, location: from.location };
}

async function target(shards: string, out: string | undefined): Promise<Awaited<ReturnType<typeof openOutput>>> {
  if (!out) throw new UsageError('-o, --out is required: repairs go to a new output');
  if (location(out) === location(shards)) throw new UsageError(`--out must differ from the judged output (${location(out)})`);
  return openOutput(out, {}).catch((err: Error) => {
    throw new UsageError(`--out ${out}: ${err.message}`);
  });
}

function formatsOf(f: string): ShardFormat[] {
  if (!['parquet', 'arrow', 'both'].includes(f)) throw new UsageError(`--format must be parquet, arrow or both (got "${f}")`);
  return f === 'both' ? ['parquet', 'arrow'] : [f as ShardFormat];
}

function summary(res: RepairOutputResult, to: string): string {
  return [`ranges written        ${res.ranges - res.existing} (already in --out, skipped: ${res.existing})`, `repairs rows          ${res.rows}`, `repairs: ${to}/repairs/  commits: ${to}/_commits/`].join('\n') + '\n';
}

async function runCommand(shards: string, opts: RepairOptions): Promise<void> {
  const config = loadJuryConfig(opts);
  const repair = repairSection(config);
  const to = await target(shards, opts.out);
  // The lease comes before the first model call: a refused repair pays for nothing.
  const res = await withOutputLease(to, 'repair run', opts, async (lease) => {
    await openTableLog(to.store, 'none', DEFAULT_CHECKPOINT_INTERVAL); // an output with Delta tables keeps them current
    const { ranges, location: fromLocation } = await candidatesOf(shards, config, repair);
    const runtime = await openJury(config, opts, { records: ranges.flatMap((r) => r.candidates.map((c) => c.record)) });
    try {
      return await writeRepairs({ ranges, fromLocation, to: to.store, formats: formatsOf(opts.format), beforeManifest: () => lease.confirmHeld() }, runRows(runtime.jury, repair));
    } finally {
      await runtime.close();
    }
  });
  process.stdout.write(summary(res, to.location));
}

async function exportCommand(shards: string, opts: RepairOptions): Promise<void> {
  if (!opts.to) throw new UsageError('--to <file> is required');
  const config = loadJuryConfig(opts);
  const repair = repairSection(config);
  const { ranges } = await candidatesOf(shards, config, repair);
  const lines = exportLines(ranges, loadPromptSet(config.prompts_dir, new Set(REPAIR_TEMPLATES)), repair, config.max_tokens?.repair ?? DEFAULT_MAX_TOKENS.repair);
  writeFileSync(opts.to, lines.map((l) => `${l}\n`).join(''));
  process.stdout.write(`requests  ${lines.length}\nwritten   ${resolve(opts.to)}\n`);
}

async function importCommand(shards: string, opts: RepairOptions): Promise<void> {
  if (!opts.from) throw new UsageError('--from <file> is required');
  const config = loadJuryConfig(opts);
  const repair = repairSection(config);
  const to = await target(shards, opts.out);
  let results;
  try {
    results = parseBatchResults(readFileSync(opts.from, 'utf8'));
  } catch (err) {
    throw new UsageError(`--from ${opts.from}: ${(err as Error).message}`);
  }
  const prompts = loadPromptSet(config.prompts_dir, new Set(REPAIR_TEMPLATES));
  const log = logger('cli');
  let missing = 0;
  const res = await withOutputLease(to, 'repair import', opts, async (lease) => {
    const { ranges, location: fromLocation } = await candidatesOf(shards, config, repair);
    // Ranges imported earlier from a file that lacked results this one has are written again.
    const replaced = await retractFilledRanges(to.store, ranges, results, to.location, await openTableLog(to.store, 'none', DEFAULT_CHECKPOINT_INTERVAL));
    if (replaced > 0) log.info(`${replaced} range(s) of ${to.location} had retries without a result that --from now has: replaced`, { ranges: replaced });
    const rowsOf = importRows(results, prompts, repair, (i, o) => costOf(config.prices, repair.generator.model, i, o), () => (missing += 1));
    return writeRepairs({ ranges, fromLocation, to: to.store, formats: formatsOf(opts.format), beforeManifest: () => lease.confirmHeld() }, rowsOf);
  });
  if (missing > 0) log.warn(`${missing} retr${missing === 1 ? 'y has' : 'ies have'} no result line in ${opts.from}: committed as error rows ("no result for this request in the batch file"); import the complete results file into the same --out to replace them`, { missing });
  process.stdout.write(summary(res, to.location));
}

export function registerRepair(program: Command): void {
  const cmd = program.command('repair').description('defect-guided repair over committed shards: run the retries, or export / import them as OpenAI Batch JSONL').addHelpText('after', HELP);
  const common = (c: Command) => c.addOption(juryOption('config')).addOption(juryOption('gold')).addOption(juryOption('auditLog')).addOption(juryOption('cache')).option('--format <format>', 'parquet | arrow | both', 'parquet');
  addLeaseOptions(common(cmd.command('run <out>').description('retry the gated records of OUT through the generator and commit a repairs table per range to --out').option('-o, --out <dir>', 'new output for the repairs table and its manifests'))).action(runCommand);
  common(cmd.command('export <out>').description('write the retry requests of OUT in the OpenAI Batch API JSONL format').option('--to <file>', 'requests file to write')).action(exportCommand);
  addLeaseOptions(common(cmd.command('import <out>').description('read OpenAI Batch output lines and commit them as the repairs table to --out').option('--from <file>', 'batch output JSONL').option('-o, --out <dir>', 'new output for the repairs table and its manifests'))).action(importCommand);
}
