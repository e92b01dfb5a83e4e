import type { Command } from 'commander';
import { join, resolve } from 'node:path';
import { openFileSource } from '../../connectors/file/index.js';
import type { ShardFormat } from '../../schemas/outputs.js';
import { LocalObjectStore } from '../pipeline/object-store.js';
import type { CommittedRanges } from '../pipeline/range-planner.js';
import { listCommitted, ShardCommitter } from '../pipeline/shard-commit.js';
import { runStage, type StageCounters } from '../pipeline/stage.js';
import { packageRoot } from '../paths.js';
import { UsageError } from './io.js';
import { JURY_OPTION_HELP, loadJuryConfig, openJury, type JuryOptions } from './jury-setup.js';
import { createProgress } from './progress.js';

interface RunOptions extends JuryOptions {
  input?: string;
  out: string;
  format: string;
  concurrency: string;
  rangeRecords: string;
  rangeMb: string;
  resume: boolean;
  progress: string;
}

const positiveInt = (v: string, flag: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer (got "${v}")`);
  return n;
};

/** Ranges already committed in the output, by unit token -> first offset -> last offset. */
async function committedRanges(committer: ShardCommitter): Promise<{ ranges: CommittedRanges; records: number }> {
  const ranges: CommittedRanges = new Map();
  let records = 0;
  for (const m of await listCommitted(committer.store)) {
    const e = m.extra as { unit_token?: string; first_offset?: number; last_offset?: number; records?: number } | undefined;
    if (!e?.unit_token || e.first_offset === undefined || e.last_offset === undefined) continue;
    if (!ranges.has(e.unit_token)) ranges.set(e.unit_token, new Map());
    ranges.get(e.unit_token)!.set(e.first_offset, e.last_offset);
    records += e.records ?? 0;
  }
  return { ranges, records };
}

function summaryText(c: StageCounters, out: string, seconds: number): string {
  const rows = [
    ['records in', c.read + c.skipped_committed],
    ['  already committed (skipped)', c.skipped_committed],
    ['  judged', c.judged],
    ['    clean verdicts', c.clean],
    ['    degraded verdicts', c.degraded],
    ['    no verdict (too few jurors)', c.no_verdict],
    ['  dead letters', c.dead_letters],
    ['ranges committed', c.ranges_committed],
    ['tokens in / out', `${c.tokens_in} / ${c.tokens_out}`],
    ['cost (USD)', c.cost_usd.toFixed(6)],
    ['seconds', seconds.toFixed(1)],
  ];
  const w = Math.max(...rows.map((r) => String(r[0]).length));
  return [...rows.map(([k, v]) => `${String(k).padEnd(w)}  ${v}`), `shards: ${out}/{verdicts,defects,steps,decisions,dead_letters}/  commits: ${out}/_commits/`].join('\n');
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('judge a stream of trace records and write verdicts, defects, step labels and filter decisions as shards')
    .option('-c, --config <file>', JURY_OPTION_HELP.config)
    .option('-i, --input <path>', 'JSONL (.jsonl, .jsonl.gz, .jsonl.zst), Parquet, or a folder of them (default: the bundled examples)')
    .option('-o, --out <dir>', 'output folder for shards and commit manifests', 'out')
    .option('--format <format>', 'parquet | arrow | both', 'parquet')
    .option('--concurrency <n>', 'records judged at once', '16')
    .option('--range-records <n>', 'records per committed range (per shard file)', '1000')
    .option('--range-mb <n>', 'input megabytes per committed range', '64')
    .option('--no-resume', 'refuse to start if the output already has committed ranges (default: skip them)')
    .option('--progress <mode>', 'auto | bar | log | none', 'auto')
    .option('--gold <file>', JURY_OPTION_HELP.gold)
    .option('--audit-log <file>', JURY_OPTION_HELP.auditLog)
    .option('--no-cache', JURY_OPTION_HELP.cache)
    .addHelpText(
      'after',
      `
Every input record leaves as shard rows or as a dead letter with its reason. Ranges of input
positions are committed atomically (parts first, manifest in _commits/ last); re-running the same
command after a crash skips committed ranges and rebuilds the rest under the same file names.
Keep --range-records and --range-mb unchanged when resuming.

Examples:
  reasoning-jury run                                   # bundled examples, simulated jury, ./out
  reasoning-jury run -c jury.yaml -i traces/ -o shards/ --concurrency 64`,
    )
    .action(async (opts: RunOptions) => {
      if (!['parquet', 'arrow', 'both'].includes(opts.format)) throw new UsageError(`--format must be parquet, arrow or both (got "${opts.format}")`);
      if (!['auto', 'bar', 'log', 'none'].includes(opts.progress)) throw new UsageError(`--progress must be auto, bar, log or none (got "${opts.progress}")`);
      const concurrency = positiveInt(opts.concurrency, '--concurrency');
      const maxRecords = positiveInt(opts.rangeRecords, '--range-records');
      const maxChars = positiveInt(opts.rangeMb, '--range-mb') * 1024 * 1024;
      const config = loadJuryConfig(opts);
      const input = opts.input ?? join(packageRoot(), 'examples', 'traces');
      if (!opts.input) process.stderr.write(`reasoning-jury: no --input given, reading the bundled examples in ${input}\n`);
      const out = resolve(opts.out);
      const formats: ShardFormat[] = opts.format === 'both' ? ['parquet', 'arrow'] : [opts.format as ShardFormat];
      const committer = new ShardCommitter(new LocalObjectStore(out), { formats });
      const done = await committedRanges(committer);
      if (!opts.resume && done.ranges.size > 0) throw new UsageError(`${out} already holds committed ranges; use another --out, or drop --no-resume to continue where it stopped`);
      const source = await openFileSource(input).catch((err: Error) => {
        throw new UsageError(err.message);
      });
      const runtime = await openJury(config, opts);
      const stop = new AbortController();
      const onSignal = () => {
        if (stop.signal.aborted) process.exit(130);
        process.stderr.write('\nreasoning-jury: stopping: no new records; finishing and committing those in flight (again to abort)\n');
        stop.abort();
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      const hint = await source.sizeHint?.().catch(() => ({}));
      const total = hint && 'totalRows' in hint && hint.totalRows !== undefined ? Math.max(0, hint.totalRows - done.records) : undefined;
      const progress = createProgress(opts.progress as 'auto', total);
      const t0 = Date.now();
      let counters: StageCounters | undefined;
      try {
        counters = await runStage({
          source,
          runtime,
          config,
          committer,
          committed: done.ranges,
          concurrency,
          range: { maxRecords, maxChars, sequentialUnits: true },
          onProgress: (c) => progress.update(c),
          signal: stop.signal,
        });
        progress.stop(counters);
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        await source.close();
        await runtime.close();
      }
      process.stdout.write(`${summaryText(counters, out, (Date.now() - t0) / 1000)}\n`);
      if (stop.signal.aborted) process.stdout.write('stopped early: run the same command again to continue\n');
    });
}
