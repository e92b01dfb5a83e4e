import type { Impact } from '../../schemas/defect.js';
import type { TraceRecord } from '../../schemas/trace.js';

export const BENCHMARKS = ['processbench', 'prmbench', 'bigbench-mistake', 'mr-ben', 'deltabench', 'hard2verify'] as const;
export type BenchmarkName = (typeof BENCHMARKS)[number];

/**
 * What a benchmark's annotators labelled. `first_error`: only the earliest error is known, so
 * steps after it carry no label (ProcessBench, BIG-Bench Mistake, MR-Ben). `all_steps`: every
 * step is labelled (PRMBench, DeltaBench, Hard2Verify).
 */
export type LabelScope = 'first_error' | 'all_steps';

/** One benchmark file (or folder) as trace records with the benchmark's own step boundaries. */
export interface LoadedBenchmark {
  benchmark: BenchmarkName;
  scope: LabelScope;
  /** every record has `steps` and `gold`; meta carries benchmark, split and protocol fields */
  records: TraceRecord[];
  /** items that could not become records: where and why */
  skipped: Array<{ source: string; reason: string }>;
}

/** Gold labels of one record as the scorers read them (all step numbers 1-based). */
export interface StepGold {
  record_id: string;
  /** the benchmark's split / task / subject, for per-split protocols */
  split: string;
  n_steps: number;
  /** erroneous steps inside 1..n_steps, ascending (first_error scope: the first one only) */
  error_steps: number[];
  first_error: number | null;
  scope: LabelScope;
  /** PRMBench error class ("correct" for the clean companion set); null elsewhere */
  classification: string | null;
  /** error steps exactly as the file lists them, out-of-range ones included (PRMBench) */
  raw_error_steps: number[];
}

/**
 * What a system predicted for one record: the highest severity cited per step. `failed` marks a
 * record with no usable verdict, which each official scorer counts in its own way.
 */
export interface StepPrediction {
  record_id: string;
  n_steps: number;
  failed: boolean;
  /** step (1-based) -> highest severity of any defect citing it */
  impacts: ReadonlyMap<number, Impact>;
  /** set when the record was selected but has no verdict at all (see MissingPolicy) */
  missing?: MissingReason;
  /** non-neutral defects whose every cited step is outside 1..n_steps (they flag nothing) */
  stray_defects?: number;
}

/**
 * Why a selected record has no verdict to score: never judged (an interrupted run, a record the
 * stage dead-lettered), its verdict line could not be read, or the verdict has another step count.
 */
export type MissingReason = 'no_verdict' | 'unreadable' | 'step_count';
export const MISSING_REASONS = ['no_verdict', 'unreadable', 'step_count'] as const;

/**
 * How a selected record without a verdict is scored: `wrong` (the default, as ProcessBench's
 * scorer counts an unparseable answer) gives it the answer each protocol counts as wrong;
 * `exclude` leaves it out. Either way the report counts them by reason.
 */
export type MissingPolicy = 'wrong' | 'exclude';
export const MISSING_POLICIES = ['wrong', 'exclude'] as const;

/**
 * How a record with no verdict enters the pooled step metrics: `wrong` counts every labelled
 * step as misclassified, `flag_all` as if every step were flagged (Hard2Verify's rule),
 * `exclude` leaves the record out.
 */
export type FailedPolicy = 'wrong' | 'flag_all' | 'exclude';
export const FAILED_POLICIES = ['wrong', 'flag_all', 'exclude'] as const;
