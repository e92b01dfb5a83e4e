/**
 * The types of the library's public surface (src/api/index.ts). Everything a caller sees is
 * declared here or in schemas/, so the shipped declarations stay small (scripts/api-types.mjs
 * copies only what these reach) and the API report (api/reasoning-jury.api.md) lists it all.
 */
import type { Duplex } from 'node:stream';
import type { JuryConfig, JuryConfigInput } from '../../schemas/config.js';
import type { DeadLetterRow, DecisionRow, DefectRow, StepRow, VerdictRow } from '../../schemas/outputs.js';
import type { TraceRecord } from '../../schemas/trace.js';
import type { Verdict } from '../../schemas/verdict.js';

export type { DeadLetterRow, DecisionRow, DefectRow, JuryConfig, JuryConfigInput, StepRow, TraceRecord, Verdict, VerdictRow };

/**
 * A jury config: the path of a YAML or JSON file (relative paths inside it are read against its
 * folder), or the object such a file holds (relative paths against the working directory).
 * Validated as the CLI validates `--config`: a mistake is a ConfigError naming its key path.
 */
export type ConfigSource = string | JuryConfigInput;

/**
 * Where simulated endpoints (`kind: simulator`) take gold labels from: a local JSONL or Parquet
 * file or folder of labelled records (what `run` uses its `--input` for), or the records
 * themselves. Ignored by real endpoints.
 */
export type SimulatorGold = string | readonly TraceRecord[];

export interface JuryOptions {
  /** gold labels for simulated endpoints; default: none (the simulator then judges blind) */
  simulatorGold?: SimulatorGold;
  /**
   * One tiny call per endpoint and model before the first record, so a refused key or an
   * unknown model fails `createJury` rather than a record (default: the config's `preflight`).
   */
  preflight?: boolean;
}

/** The rows `run` writes for one judged record (the verdicts, defects, steps and decisions tables). */
export interface JudgedRows {
  verdict: VerdictRow;
  defects: DefectRow[];
  steps: StepRow[];
  decision: DecisionRow;
}

/** One judged record: the consensus verdict and what is derived from it. */
export interface Judgement {
  verdict: Verdict;
  /** one label per step (the steps table) */
  steps: StepRow[];
  /** keep / drop / review by the config's filter policy (the decisions table) */
  decision: DecisionRow;
  rows: JudgedRows;
}

export interface JudgeCallOptions {
  /** stops waiting for the verdict; the promise rejects with the signal's reason */
  signal?: AbortSignal;
}

export interface Jury {
  /** the config as loaded and validated */
  readonly config: JuryConfig;
  /**
   * Judges one record (the shape `input.mapping` describes; by default `id`, `problem`, `trace`
   * or `steps`). A record that cannot be judged rejects with a RecordError carrying its dead
   * letter; an endpoint fault that waiting cannot heal, or an outage past `max_outage_ms`,
   * rejects with an EndpointFaultError or EndpointOutageError (kind `endpoint`).
   */
  judge(record: unknown, options?: JudgeCallOptions): Promise<Judgement>;
  /** closes the model clients and any simulator the jury started; safe to call twice */
  close(): Promise<void>;
}

/** What `juryStream` emits for a record it judged. */
export interface JudgedResult extends Judgement {
  ok: true;
  /** the record as it was written to the stream */
  record: unknown;
  /** its place in the input, from 0 */
  index: number;
}

/**
 * What `juryStream` emits for a record that could not be judged: never a stream error. A later
 * copy of a record id the stream has already seen is one too (reason `duplicate record_id ...
 * (first seen at records:<index>)`), unjudged, under both `input.duplicate_ids: dead_letter`
 * (the default) and `keep_first` (a stream has no manifest to list a dropped copy in);
 * `keep_all` judges every copy.
 */
export interface DeadLetterResult {
  ok: false;
  record: unknown;
  index: number;
  /** why, in one line (the dead_letters table's `error`) */
  reason: string;
  deadLetter: DeadLetterRow;
}

export type StreamResult = JudgedResult | DeadLetterResult;

export interface JuryStreamOptions {
  /** a config to open a jury from (closed with the stream), or `jury`: one the caller opened and closes */
  config?: ConfigSource;
  jury?: Jury;
  /** gold labels for simulated endpoints, with `config` */
  simulatorGold?: SimulatorGold;
  /** records judged at once, and the most held between intake and the reader (default 8) */
  concurrency?: number;
  /** results in input order (default), or as they finish */
  ordered?: boolean;
  /** records buffered on the writable side before `write()` returns false (default 1) */
  writableHighWaterMark?: number;
  /** results buffered on the readable side before judging stops (default 1) */
  readableHighWaterMark?: number;
}

/** A record of the caller's source and where it sits: a unit (a file, a partition) and an offset in it. */
export interface PositionedRecord {
  record: unknown;
  /** default "records" */
  unit?: string;
  /** increasing within a unit; ranges and shard names are cut by it */
  offset: number;
}

export interface RunStageOptions {
  /** an input URL or path as `run --input` takes it, or the caller's own records */
  source: string | AsyncIterable<PositionedRecord> | Iterable<PositionedRecord>;
  /** a folder or s3:// URL, as `run --out` */
  output: string;
  config: ConfigSource;
  /** names the caller's source in positions and dead letters (default "api") */
  sourceName?: string;
  simulatorGold?: SimulatorGold;
  /** records judged at once (default as `run`: 16, or 1,000 in batch mode, where a record waits for its batch) */
  concurrency?: number;
  /** records per committed range (default 1000, as `run`) */
  rangeRecords?: number;
  /** stops intake; what is in flight is judged and committed */
  signal?: AbortSignal;
  /** told the stage's counters as it goes */
  onProgress?: (counters: StageSummary) => void;
}

/** What the stage did, as `run` prints it (the stage's counters; more keys may be present). */
export interface StageSummary {
  /** records pulled from the source */
  readonly read: number;
  /** records of ranges the output already held, not judged again */
  readonly skipped_committed: number;
  readonly judged: number;
  readonly clean: number;
  readonly degraded: number;
  readonly no_verdict: number;
  readonly dead_letters: number;
  readonly ranges_committed: number;
  readonly records_committed: number;
  readonly tokens_in: number;
  readonly tokens_out: number;
  readonly cost_usd: number;
}

/**
 * The Duplex `juryStream` returns: records in (object mode), StreamResult out. Besides the
 * stream's own members it says how many records it holds between intake and the reader.
 */
export interface JuryStream extends Duplex {
  /** records accepted and not yet handed to the reader (judging, or judged and waiting); never above `concurrency` */
  readonly inFlight: number;
  /** the highest `inFlight` so far */
  readonly maxInFlight: number;
}
