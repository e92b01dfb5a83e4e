/**
 * The `run` job (and the library's `runStage`, src/api/stage.ts): output and input picked by URL scheme (src/compose/io.ts), the output's
 * committed ranges read (src/compose/resume.ts), the jury opened, and the stage run with the
 * judging steps (src/pipeline/steps/index.ts).
 */
import { join } from 'node:path';
import type { JuryConfig } from '../../schemas/config.js';
import type { RangeSettings, ShardFormat } from '../../schemas/outputs.js';
import { findInputConnector, openInput, openOutput, type OpenedInput, type OutputTarget } from '../compose/io.js';
import { checkOneManifestSettings, identityOptions, NO_SPEND, RangeSettingsMismatch, readOutputState, type OutputState } from '../compose/resume.js';
import { Budget, budgetWatch } from '../compose/budget.js';
import type { RejudgeKind } from '../compose/rejudge.js';
import { checkNesting, claimOutput, DEFAULT_LEASE_EXPIRY_MS, type LeaseSettings } from '../compose/output-claim.js';
import { leaseScope } from '../pipeline/commit/lease-record.js';
import type { OutputLease } from '../pipeline/commit/output-lease.js';
import { InputChangedError } from '../pipeline/input-identity.js';
import { callingModels, unpricedModels } from '../llm/ledger.js';
import type { GatewayObserver } from '../llm/observer.js';
import type { BatchStats } from '../llm/providers/batch/index.js';
import type { StageView } from '../ops/inputs.js';
import { ShardCommitter } from '../pipeline/commit/shard-commit.js';
import { passesOn, wantsDetail } from '../derive/detail.js';
import { retryingStore } from '../pipeline/storage/retrying-store.js';
import { newCounters, runStage, type IntakeHold, type RangeTiming, type StageCounters } from '../pipeline/stage.js';
import { StorageRetry } from '../pipeline/storage/storage-retry.js';
import { endpointGate } from '../pipeline/intake-gate.js';
import { intakeSettings, judgingSteps } from '../pipeline/steps/index.js';
import { repairOn } from '../pipeline/steps/repair.js';
import type { ShardTableName } from '../../schemas/outputs.js';
import { streamEnricher } from '../taxonomy/stream.js';
import { addLogSecrets, logger, type LogSettings } from '../util/log.js';
import { packageRoot } from '../util/paths.js';
import { applyConfigFlags, setting, settingSource, type ConfigFlagValues } from './config-flags.js';
import { UsageError } from './usage.js';
import { callingSeats } from '../compose/seats.js';
import { openTableLog, reconcileTables, tableLogOf, tableLogOption } from '../compose/table-log.js';
import { CardWriter } from '../compose/card-writer.js';
import { juryFacts, parquetTables, policyFacts } from '../compose/card-facts.js';
import type { JuryContext } from '../jury/judge.js';
import { loadJuryConfig, openJury, type JuryInput, type JuryOptions } from './open-jury.js';

/**
 * Options of `run` after the command line is parsed and checked (plain data: crosses to a
 * worker). The flags that override a config key (--corpus, --duplicate-ids, --on-changed-input,
 * --max-outage, --verdict-details, --budget-*, --no-preflight, --no-cache, --audit-log) are
 * ConfigFlagValues; src/api/config-flags.ts decides whether they or the config win.
 */
export interface RunJobOptions extends JuryOptions, ConfigFlagValues {
  input?: string;
  out: string;
  formats: ShardFormat[];
  /** records judged at once; absent: 16, or BATCH_CONCURRENCY in batch mode */
  concurrency?: number;
  maxRecords: number;
  maxChars: number;
  resume: boolean;
  /** --rejudge: committed ranges with verdicts of this kind are retracted and judged again */
  rejudge?: RejudgeKind;
  /** s3:// input: this worker's share of the objects (rank of world_size) */
  rank?: number;
  worldSize?: number;
  /** kafka:// input: stop once the group has read and committed everything */
  untilCaughtUp?: boolean;
  /** kafka:// input: write an output another consumer group has recorded, with a warning */
  allowOtherGroup?: boolean;
  /** how long an output-store outage is waited out before the run stops (0 = not at all) */
  maxStorageOutageMs?: number;
  /** the judging thread logs as the command line asked */
  log: LogSettings;
  /** --lease-expiry, --wait-for-lease, --take-over (docs/layout.md, "One writer per output") */
  lease?: LeaseSettings;
}

const DEFAULT_MAX_STORAGE_OUTAGE_MS = 10 * 60_000;
const DEFAULT_CONCURRENCY = 16;
/**
 * Records judged at once in batch mode when --concurrency is not given: each waits for its batch
 * while holding its slot, so this many records (some 3,000 Phase 1 requests with three jurors)
 * make up a batch level.
 */
export const BATCH_CONCURRENCY = 1000;
/** Batch mode: how often progress is reported with the batches' counters when nothing else moves. */
const BATCH_TICK_MS = 1000;

/**
 * The output store as the run uses it: every operation waits out outages (retry with backoff,
 * intake held) for up to the configured time before it fails as a StorageError.
 */
function withOutageRetry(output: OutputTarget, opts: RunJobOptions, signal: AbortSignal): { output: OutputTarget; retry: StorageRetry } {
  const retry = new StorageRetry({ maxOutageMs: opts.maxStorageOutageMs ?? DEFAULT_MAX_STORAGE_OUTAGE_MS, store: output.location, signal, setting: '--max-storage-outage' });
  return { output: { ...output, store: retryingStore(output.store, retry, output.location) }, retry };
}

export interface RunJobHooks {
  /** total records expected (for the ETA), once known */
  onTotal(total: number | undefined): void;
  /** `batch`, in batch mode: the batched endpoints' counters, as of now (also sent every BATCH_TICK_MS while judging) */
  onProgress(c: StageCounters, batch?: BatchStats): void;
  /** the seats' models without a price (their cost_usd is null), once the config is loaded */
  onUnpriced?(models: string[]): void;
  signal: AbortSignal;
  /** a budget stopped intake: the one line that says which and how much was spent */
  onBudgetStop?(reason: string): void;
  /** metrics and probes (`--metrics-port`): told what the job runs and how it goes */
  observe?: RunObserver;
  /** batch mode: the batches' last state, once at the end */
  onBatch?(stats: BatchStats): void;
}

export interface RunObserver {
  gateway?: GatewayObserver;
  /** the stage is about to run: its source and the counters it counts into */
  onStage?(view: StageView): void;
  onRangeDone?(e: RangeTiming): void;
}

/** The input resumes by a consumer group's offsets (kafka://), not by the output's manifests. */
const resumesFromGroup = (url: string): boolean => findInputConnector(url)?.resumesFromGroup === true;

/** Connector and resume problems found before any work starts are one clear line naming the flag, exit 2. */
const asUsage =
  (flag: string) =>
  (err: Error): never => {
    throw new UsageError(`${flag}: ${err.message.replace(/\s*\n\s*/g, ' ')}`);
  };

async function outputState(output: OutputTarget, input: string | undefined, settings: RangeSettings, resume: boolean): Promise<OutputState> {
  const empty: OutputState = { ranges: new Map(), records: 0, manifests: 0, content: new Map(), byUnit: new Map(), spent: NO_SPEND };
  try {
    // Kafka resumes from the group's offsets and the manifests of each partition it is given.
    if (input !== undefined && resumesFromGroup(input)) {
      await checkOneManifestSettings(output.store, settings, output.location);
      return empty;
    }
    const state = await readOutputState(output.store, settings, output.location);
    if (!resume && state.manifests > 0) throw new UsageError(`${output.location} already holds committed ranges; use another --out, or drop --no-resume to continue where it stopped`);
    return state;
  } catch (err) {
    if (err instanceof RangeSettingsMismatch) throw new UsageError(err.message);
    throw err;
  }
}

/** `--rejudge`: retracts the ranges to judge again before their records are read (src/compose/rejudge.ts). */
async function rejudgeFirst(output: OutputTarget, input: string | undefined, kind: RejudgeKind, resume: boolean): Promise<OutputState['pinned']> {
  if (input !== undefined && resumesFromGroup(input)) throw new UsageError('--rejudge: a kafka:// input is not read again from its start; re-judge from a file or s3:// copy of it');
  if (!resume) throw new UsageError('--rejudge judges committed ranges again, so it cannot go with --no-resume');
  // Loaded only for --rejudge: it reads verdict shards, which pulls in the Parquet decompressors.
  const { retractForRejudge } = await import('../compose/rejudge.js');
  const r = await retractForRejudge(output.store, kind, output.location, tableLogOf(output.store));
  const what = kind === 'no-verdict' ? 'without a verdict' : 'degraded or without a verdict';
  logger('cli').info(r.ranges === 0 ? `--rejudge ${kind}: no committed verdict is ${what}` : `--rejudge ${kind}: ${r.verdicts} verdict(s) ${what} in ${r.ranges} committed range(s); those ranges are retracted and judged again`, { ranges: r.ranges, verdicts: r.verdicts });
  return r.pinned;
}

/** The curated corpus's format, or off (--corpus, else output.corpus). */
const corpusSetting = (opts: RunJobOptions, config: JuryConfig): 'parquet' | 'jsonl' | 'off' => setting(opts, config, 'corpus');

/**
 * What an entry point other than the command line hands the job: the library's `runStage`
 * (src/api/stage.ts) gives a loaded config and a source it opened over the caller's records.
 */
export interface JobEntry {
  /** the config, loaded and validated already; absent: `--config` (loadJuryConfig) */
  config?: JuryConfig;
  /** records the caller reads itself, instead of opening `opts.input` by URL */
  input?: CustomInput;
}

export interface CustomInput {
  /** the input as messages name it */
  name: string;
  /** the source over the caller's records; the stage skips what the output already holds */
  opened: OpenedInput;
  /** where simulated endpoints take gold labels from */
  labelled?: JuryInput;
}

/** The main job: records in, shards out, resuming from what is already committed. */
export async function runJob(opts: RunJobOptions, hooks: RunJobHooks, entry: JobEntry = {}): Promise<StageCounters> {
  // --max-outage, --verdict-details, --no-cache and --audit-log reach the config here; the other flags are read through setting().
  const config = entry.config ? applyConfigFlags(entry.config, opts) : loadJuryConfig(opts);
  hooks.onUnpriced?.(unpricedModels(config));
  refuseUnpricedUsdBudget(config, opts);
  const inputUrl = entry.input ? undefined : (opts.input ?? join(packageRoot(), 'examples', 'traces'));
  refuseBatchMisfits(config, inputUrl, opts);
  // Endpoint keys can sit in variables of any name: they are secrets for the log as well.
  addLogSecrets(Object.values(config.endpoints).map((e) => (e.api_key_env ? process.env[e.api_key_env] : undefined)));
  if (!opts.input && !entry.input) logger('cli').info(`no --input given, reading the bundled examples in ${inputUrl}`, { path: inputUrl });
  const { output, retry } = withOutageRetry(await openOutput(opts.out, config).catch(asUsage('--out')), opts, hooks.signal);
  const { rank = 0, worldSize = 1, untilCaughtUp = false } = opts;
  const shared = inputUrl !== undefined && resumesFromGroup(inputUrl);
  const lease = await claim(output, inputUrl, opts, hooks.signal);
  try {
    // Ranges that stopped between manifest and publish are finished before anything reads the output;
    // unfinished attempts are dropped only when no other writer (a rank of the same split, a Kafka worker) may own them.
    const tableLog = await openTableLog(output.store, setting(opts, config, 'tableFormat'), config.output.delta.checkpoint_interval, { shared });
    await new ShardCommitter(output.store, tableLog ? { tableLog } : {}).recover({ dropUnfinished: lease !== undefined && !lease.peersLive });
    await reconcileTables(tableLog, output.store, !shared);
    const settings: RangeSettings = { max_records: opts.maxRecords, max_chars: opts.maxChars, formats: opts.formats, corpus: corpusSetting(opts, config) };
    const pinned = opts.rejudge ? await rejudgeFirst(output, inputUrl, opts.rejudge, opts.resume) : undefined;
    const done = { ...(await outputState(output, inputUrl, settings, opts.resume)), ...(pinned ? { pinned } : {}) };
    const input = entry.input?.opened ?? (await openInput(inputUrl!, { config, store: output.store, committed: done.ranges, rank, worldSize, untilCaughtUp, signal: hooks.signal, allowOtherGroup: opts.allowOtherGroup === true, location: output.location }).catch(asUsage('--input')));
    try {
      // Simulated jurors learn the labels of local input files up front (kafka://, s3:// and stdin:// give them with --gold).
      const labelled = entry.input ? (entry.input.labelled ?? {}) : findInputConnector(inputUrl!)?.place === 'local' ? { input: inputUrl! } : {};
      const counters = await judgeInput(config, opts, input, output, done, hooks, labelled, retry, lease);
      if (lease?.lost.aborted) throw lease.lost.reason;
      return counters;
    } finally {
      await input.close();
    }
  } finally {
    await lease?.release().catch(() => undefined); // an output that is gone or down: the lease expires
  }
}

/**
 * The folder checks and the output's lease, before anything touches the output. Kafka runs take
 * none here: a consumer group shares its output, and each worker owns what its partitions write.
 */
async function claim(output: OutputTarget, inputUrl: string | undefined, opts: RunJobOptions, signal: AbortSignal): Promise<OutputLease | undefined> {
  // An OutputFolderError (--out not writable, nested in --input) is a usage error by its kind: exit 2.
  if (inputUrl !== undefined) checkNesting(inputUrl, output.location);
  if (inputUrl !== undefined && resumesFromGroup(inputUrl)) return undefined;
  const settings = opts.lease ?? { expiryMs: DEFAULT_LEASE_EXPIRY_MS, waitMs: 0, takeOver: false };
  return await claimOutput(output, { command: 'run', scope: leaseScope(opts.rank ?? 0, opts.worldSize ?? 1), settings, signal });
}

/**
 * Batch mode takes neither deliberation (a moderator's turns are sequential: every turn would be
 * one batch round-trip, a day each at worst) nor kafka:// input (see docs/batch.md): one line each.
 */
function refuseBatchMisfits(config: JuryConfig, inputUrl: string | undefined, opts: RunJobOptions): void {
  if (!setting(opts, config, 'batch')) return;
  const from = settingSource(opts, 'batch');
  if (config.mode === 'deliberation') throw new UsageError(`${from}: batch mode does not run mode "deliberation": its moderator's turns are sequential, so each turn would wait for a batch of its own (up to a day); use mode consolidation, or run deliberation online`);
  if (inputUrl !== undefined && resumesFromGroup(inputUrl)) throw new UsageError(`${from}: batch mode does not read kafka:// input: a partition's offsets are committed in order, so one record waiting hours for its batch would hold back every commit after it and the group's rebalances would re-read what waits; copy the topic to files (or s3://) and judge those in batch mode`);
}

async function judgeInput(config: JuryConfig, opts: RunJobOptions, input: OpenedInput, output: OutputTarget, done: OutputState, hooks: RunJobHooks, labelled: JuryInput, hold: IntakeHold, lease: OutputLease | undefined): Promise<StageCounters> {
  const observe = hooks.observe ?? {};
  // Batch mode keeps its journal beside the manifests, so a re-run re-attaches to what is pending.
  const runtime = await openJury(config, opts, labelled, { ...(observe.gateway ? { observer: observe.gateway } : {}), batchJournal: output.store });
  const batchStats = runtime.batchStats;
  const report = batchStats && hooks.onBatch ? () => hooks.onBatch!(batchStats()) : () => undefined;
  let ticker: NodeJS.Timeout | undefined;
  try {
    // Before any record is read: a refused key or an unknown model stops here, with nothing judged.
    if (setting(opts, config, 'preflight')) {
      // Stopped while it ran (SIGTERM as a consumer group shrinks): a clean stop, nothing read.
      const stopped = await runtime.gateway.preflight(callingSeats(config), hooks.signal).then(
        () => false,
        (err: unknown) => {
          if (hooks.signal.aborted) return true;
          throw err;
        },
      );
      if (stopped) return newCounters();
    }
    const steps = judgingSteps({ config, jury: runtime.jury, enrich: streamEnricher(config, runtime) });
    const hint = input.resumesFromGroup ? undefined : await input.source.sizeHint?.().catch(() => undefined);
    hooks.onTotal(hint?.totalRows !== undefined ? Math.max(0, hint.totalRows - done.records) : undefined);
    const counters = newCounters();
    observe.onStage?.({ source: input.source, counters, health: runtime.health, ...(batchStats ? { batch: batchStats } : {}) });
    // While every record waits for its batch the stage reports nothing: the batches' part moves on its own.
    if (batchStats) ticker = setInterval(() => hooks.onProgress(counters, batchStats()), BATCH_TICK_MS).unref();
    const budget = watchBudget(config, opts, done, hooks);
    const card = datasetCard(config, opts, output, done, runtime.jury);
    card.update(); // before any record: an output whose input is empty loads too
    return await runStage({
      source: input.source,
      sinks: input.sinks,
      intake: intakeSettings(config),
      steps,
      // A writer that lost the output's lease writes no further manifest.
      committer: new ShardCommitter(output.store, { formats: opts.formats, corpus: corpusSetting(opts, config), off: offTables(config), afterCommit: card.committed, ...tableLogOption(output.store), ...(lease ? { beforeManifest: () => lease.confirmHeld() } : {}) }),
      committed: done.ranges,
      concurrency: opts.concurrency ?? (batchStats ? BATCH_CONCURRENCY : DEFAULT_CONCURRENCY),
      range: { maxRecords: opts.maxRecords, maxChars: opts.maxChars, sequentialUnits: input.sequentialUnits, ...(done.pinned ? { pinned: done.pinned } : {}) },
      onProgress: (c) => (budget.check(c), hooks.onProgress(c, batchStats?.())),
      counters,
      ...(observe.onRangeDone ? { onRangeDone: observe.onRangeDone } : {}),
      signal: AbortSignal.any([hooks.signal, budget.signal, ...(lease ? [lease.lost] : [])]),
      intakeHold: hold,
      gate: endpointGate(runtime.health, () => runtime.gateway.stopWaiting()),
      duplicateIds: setting(opts, config, 'duplicateIds'),
      // Kafka offsets hold one message for ever: nothing there can change under a committed range.
      ...(input.resumesFromGroup ? {} : { identity: identityOptions(output.store, done, setting(opts, config, 'onChangedInput'), output.location, tableLogOf(output.store)) }),
    })
      .catch((err: unknown) => {
        // A changed input is the user's to decide about: one line, exit 2, like other input mistakes.
        throw err instanceof InputChangedError ? new UsageError(err.message) : err;
      })
      .finally(() => card.flush()); // the last card is written while the run still holds the lease
  } finally {
    clearInterval(ticker);
    report();
    await runtime.close();
  }
}

/**
 * The output's dataset card (src/compose/card-writer.ts): the Parquet tables this run writes,
 * its jury and policy, and counts from the manifests read at start plus each range it commits.
 */
function datasetCard(config: JuryConfig, opts: RunJobOptions, output: OutputTarget, done: OutputState, jury: JuryContext): CardWriter {
  return new CardWriter({
    store: output.store,
    location: output.location,
    tables: parquetTables(opts.formats, offTables(config)),
    corpus: corpusSetting(opts, config) === 'parquet',
    facts: { command: 'run', jury: juryFacts(config, { promptHash: jury.prompts.hash, configHash: jury.configHash }), policy: policyFacts(config.filter) },
    seed: [...done.byUnit.values()].flat(),
  });
}

/** A dollar cap over models without a price would never be reached: refused, not ignored. */
function refuseUnpricedUsdBudget(config: JuryConfig, opts: RunJobOptions): void {
  const usd = setting(opts, config, 'budgetUsd');
  if (usd === undefined || unpricedModels(config).length < callingModels(config).length) return;
  throw new UsageError(`${settingSource(opts, 'budgetUsd')} ${usd}: no model of the config has a price under prices:, so no cost is ever counted; add prices or cap with --budget-tokens`);
}

/**
 * The run's budget (src/compose/budget.ts), flags over config, checked once before the stage
 * starts (an output already over it reads nothing) and then on every progress update.
 */
function watchBudget(config: JuryConfig, opts: RunJobOptions, done: OutputState, hooks: RunJobHooks): ReturnType<typeof budgetWatch> {
  const usd = setting(opts, config, 'budgetUsd');
  const tokens = setting(opts, config, 'budgetTokens');
  const budget = new Budget({ ...(usd !== undefined ? { usd } : {}), ...(tokens !== undefined ? { tokens } : {}) }, done.spent);
  const log = logger('cli');
  if (budget.active && done.spent.unrecorded_ranges > 0) log.warn(`${done.spent.unrecorded_ranges} committed range(s) were written before manifests recorded usage: their spend is not counted against the budget`);
  const watch = budgetWatch(budget, (reason) => {
    log.warn(`stopping: ${reason}; no new records, finishing and committing those in flight`);
    hooks.onBudgetStop?.(reason);
  });
  watch.check(newCounters());
  return watch;
}

/** Tables this run does not write when they have no rows: verdict_details unless asked for, repairs unless repair is on. */
function offTables(config: JuryConfig): ShardTableName[] {
  return [...(wantsDetail(config.verdict_details, config.mode, passesOn(config)) ? [] : ['verdict_details' as const]), ...(repairOn(config) ? [] : ['repairs' as const]), 'reviews'];
}
