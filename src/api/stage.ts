/**
 * `runStage`: the whole stage (src/pipeline/stage.ts) with its commit protocol, lease, resume and
 * budget, through the same job as `reasoning-jury run` (./run-job.ts). The source is an input URL
 * as `run --input` takes it, or the caller's own records with their positions, wrapped here as a
 * pipeline Source: the stage cuts ranges by unit and offset, skips the ranges the output already
 * holds, and writes the usual shards and manifests.
 */
import type { ShardFormat } from '../../schemas/outputs.js';
import type { OpenedInput } from '../pipeline/connector.js';
import type { Source, SourceItem } from '../pipeline/source.js';
import type { StageCounters } from '../pipeline/stage.js';
import { logSettings } from '../util/log.js';
import { configLabel, loadConfig } from './config.js';
import { runJob, type CustomInput, type RunJobOptions } from './run-job.js';
import type { PositionedRecord, RunStageOptions, SimulatorGold, StageSummary } from './types.js';

/** `run`'s defaults (src/cli/run.ts); concurrency is left to the job (16, or more in batch mode). */
const DEFAULTS = { rangeRecords: 1000, rangeMb: 64, formats: ['parquet'] as ShardFormat[] };

/** The caller's records as a Source: each a parsed row at its position. */
class RecordsSource implements Source {
  private closed = false;

  constructor(
    readonly name: string,
    private readonly records: AsyncIterable<PositionedRecord> | Iterable<PositionedRecord>,
  ) {}

  async *[Symbol.asyncIterator](): AsyncIterator<SourceItem> {
    for await (const r of this.records) {
      if (this.closed) return;
      yield { position: { source: this.name, unit: r.unit ?? 'records', offset: r.offset }, ok: true, raw: r.record };
    }
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

function customInput(options: RunStageOptions, records: AsyncIterable<PositionedRecord> | Iterable<PositionedRecord>): CustomInput {
  const source = new RecordsSource(options.sourceName ?? 'api', records);
  const opened: OpenedInput = { source, sinks: [], sequentialUnits: false, resumesFromGroup: false, close: () => source.close() };
  return { name: source.name, opened, labelled: goldOf(options.simulatorGold) };
}

const goldOf = (gold: SimulatorGold | undefined) => (gold === undefined ? {} : typeof gold === 'string' ? { input: gold } : { records: gold });

/** Judges the source into `output` and resolves with the stage's counters once every range is committed. */
export async function runStage(options: RunStageOptions): Promise<StageSummary> {
  const config = loadConfig(options.config);
  const byUrl = typeof options.source === 'string';
  const opts: RunJobOptions = {
    // names the config in messages (the job takes the loaded config itself)
    config: configLabel(options.config),
    ...(byUrl ? { input: options.source as string } : {}),
    out: options.output,
    formats: DEFAULTS.formats,
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    maxRecords: options.rangeRecords ?? DEFAULTS.rangeRecords,
    maxChars: DEFAULTS.rangeMb * 1024 * 1024,
    resume: true,
    log: logSettings(),
  };
  const input = byUrl ? undefined : customInput(options, options.source as AsyncIterable<PositionedRecord>);
  const signal = options.signal ?? new AbortController().signal;
  try {
    const counters: StageCounters = await runJob(opts, { signal, onTotal: () => undefined, onProgress: (c) => options.onProgress?.(c) }, { config, ...(input ? { input } : {}) });
    return counters;
  } finally {
    await input?.opened.close();
  }
}
