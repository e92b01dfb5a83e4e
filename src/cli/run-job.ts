import { join } from 'node:path';
import { openFileSource } from '../../connectors/file/index.js';
import { openKafkaInput, runKafkaJob } from '../../connectors/kafka/job.js';
import { isKafkaUrl } from '../../connectors/kafka/options.js';
import { createS3Client, isS3Url } from '../../connectors/s3/client.js';
import { ExclusiveCommitter } from '../../connectors/s3/committer.js';
import { openOutput } from '../../connectors/s3/output.js';
import { openS3ParquetSource } from '../../connectors/s3/parquet-source.js';
import type { ShardFormat } from '../../schemas/outputs.js';
import type { CommittedRanges } from '../pipeline/range-planner.js';
import { listCommitted, ShardCommitter } from '../pipeline/shard-commit.js';
import { runStage, type StageCounters } from '../pipeline/stage.js';
import { packageRoot } from '../util/paths.js';
import { streamEnricher } from '../taxonomy/stream.js';
import { UsageError } from './io.js';
import { loadJuryConfig, openJury, type JuryOptions } from './jury-setup.js';

/** Options of `run` after the command line is parsed and checked (plain data: crosses to a worker). */
export interface RunJobOptions extends JuryOptions {
  input?: string;
  out: string;
  formats: ShardFormat[];
  concurrency: number;
  maxRecords: number;
  maxChars: number;
  resume: boolean;
  /** s3:// input: this worker's share of the objects (rank of world_size) */
  rank?: number;
  worldSize?: number;
  /** kafka:// input: stop once the group has read and committed everything */
  untilCaughtUp?: boolean;
}

export interface RunJobHooks {
  /** total records expected (for the ETA), once known */
  onTotal(total: number | undefined): void;
  onProgress(c: StageCounters): void;
  signal: AbortSignal;
}

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

/** The main job: files in, shards out, resuming from what is already committed. */
export async function runJob(opts: RunJobOptions, hooks: RunJobHooks): Promise<StageCounters> {
  const config = loadJuryConfig(opts);
  const input = opts.input ?? join(packageRoot(), 'examples', 'traces');
  if (!opts.input) process.stderr.write(`reasoning-jury: no --input given, reading the bundled examples in ${input}\n`);
  // --out is a folder or s3://bucket/prefix; manifests are create-only on S3 (racing writers).
  const output = await openOutput(opts.out, config.s3).catch((err: Error) => {
    throw new UsageError(err.message);
  });
  const out = output.location;
  const committer = new ExclusiveCommitter(output.store, { formats: opts.formats });
  if (isKafkaUrl(input)) {
    // Kafka resumes from the group's offsets and the manifests of each partition it is given.
    const kafka = await openKafkaInput(input, config.kafka).catch((err: Error) => {
      throw new UsageError(err.message);
    });
    const runtime = await openJury(config, opts);
    try {
      hooks.onTotal(undefined);
      const enrich = streamEnricher(config, runtime);
      const { concurrency, maxRecords, maxChars, formats } = opts;
      return await runKafkaJob({ input: kafka, config, runtime, store: output.store, formats, concurrency, maxRecords, maxChars, untilCaughtUp: opts.untilCaughtUp ?? false, signal: hooks.signal, onProgress: hooks.onProgress, ...(enrich ? { enrich } : {}) });
    } finally {
      await runtime.close();
    }
  }
  const done = await committedRanges(committer);
  if (!opts.resume && done.ranges.size > 0) throw new UsageError(`${out} already holds committed ranges; use another --out, or drop --no-resume to continue where it stopped`);
  const open = isS3Url(input)
    ? openS3ParquetSource(createS3Client(config.s3), input, { rank: opts.rank ?? 0, worldSize: opts.worldSize ?? 1, committed: done.ranges })
    : openFileSource(input);
  const source = await open.catch((err: Error) => {
    throw new UsageError(err.message);
  });
  try {
    // Local files are read once more up front when simulators need their labels; S3 is not.
    const runtime = await openJury(config, opts, isS3Url(input) ? {} : { input });
    try {
      const enrich = streamEnricher(config, runtime);
      const hint = await source.sizeHint?.().catch(() => undefined);
      hooks.onTotal(hint?.totalRows !== undefined ? Math.max(0, hint.totalRows - done.records) : undefined);
      return await runStage({
        source,
        runtime,
        config,
        committer,
        committed: done.ranges,
        concurrency: opts.concurrency,
        range: { maxRecords: opts.maxRecords, maxChars: opts.maxChars, sequentialUnits: true },
        onProgress: hooks.onProgress,
        signal: hooks.signal,
        ...(enrich ? { enrich } : {}),
      });
    } finally {
      await runtime.close();
    }
  } finally {
    await source.close();
  }
}
