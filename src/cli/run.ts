import type { Command } from 'commander';
import { Worker } from 'node:worker_threads';
import type { ShardFormat } from '../../schemas/outputs.js';
import { findInputConnector, inputConnectors, outputLocation } from '../compose/io.js';
import type { RejudgeKind } from '../compose/rejudge.js';
import type { StageCounters } from '../pipeline/stage.js';
import type { BatchStats } from '../llm/providers/batch/index.js';
import { logger, logSettings, type LogSettings } from '../util/log.js';
import { RunStoppedError, UsageError } from './io.js';
import { configFlagOption, parseConfigFlags, type ConfigFlagName } from './config-flags.js';
import { juryOption, type JuryOptions } from './jury-options.js';
import { addLeaseOptions, leaseSettings, type LeaseFlags } from './lease-options.js';
import { fatalReport, ReportedError, type FatalReport } from './logging.js';
import { createProgress, type ProgressView } from './progress.js';
import type { RunJobOptions } from '../api/run-job.js';
import { RunOps } from './run-ops.js';
import type { WorkerInput, WorkerMessage } from './run-worker.js';
import { parseDuration } from '../util/duration.js';

/** How long the judging thread may take to exit after its last message before it is ended. */
const LINGER_MS = 10_000;

/** What commander parsed; the flags that override a config key are read through src/cli/config-flags.ts. */
interface RunOptions extends JuryOptions, LeaseFlags {
  input?: string;
  out: string;
  format: string;
  concurrency?: string;
  rangeRecords: string;
  rangeMb: string;
  resume: boolean;
  progress: string;
  maxHeapMb: string;
  rank?: string;
  worldSize: string;
  untilCaughtUp?: boolean;
  allowOtherGroup?: boolean;
  metricsPort?: string;
  metricsHost: string;
  metricsLinger: string;
  maxStorageOutage: string;
  rejudge?: string;
}

// A literal list (not the zod enum): this thread must not load the schemas just to parse flags.
const REJUDGE = ['no-verdict', 'degraded'] as const satisfies readonly RejudgeKind[];

function oneOf<T extends string>(v: string, options: readonly T[], flag: string): T {
  if (!(options as readonly string[]).includes(v)) throw new UsageError(`${flag} must be ${options.join(' | ')} (got "${v}")`);
  return v as T;
}

/** The flags of `run` that override a config key (src/cli/config-flags.ts decides which wins). */
const RUN_CONFIG_FLAGS: readonly ConfigFlagName[] = ['corpus', 'tableFormat', 'onChangedInput', 'duplicateIds', 'maxOutageMs', 'verdictDetails', 'budgetUsd', 'budgetTokens', 'preflight', 'batch'];

const positiveInt = (v: string, flag: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer (got "${v}")`);
  return n;
};

/** Batch mode's rows of the summary: what was submitted, what is still out, what the journal gave back. */
function batchRows(b: BatchStats | undefined): Array<[string, string | number]> {
  if (!b) return [];
  return [
    ['batches submitted / completed / failed or expired', `${b.submitted} / ${b.completed} / ${b.failed}`],
    ['  requests sent in batches', b.requests_submitted],
    ['  answered from the batch journal (earlier run)', b.served_from_journal],
    ['  batches still in progress', b.in_progress],
    ['  requests still waiting (oldest)', `${b.waiting} (${(b.oldest_wait_ms / 1000).toFixed(1)} s)`],
  ];
}

function summaryText(c: StageCounters, out: string, seconds: number, unpriced: readonly string[], batch?: BatchStats): string {
  const rows = [
    ['records in', c.read + c.skipped_committed],
    ['  already committed (skipped)', c.skipped_committed],
    ['  judged', c.judged],
    ['    clean verdicts', c.clean],
    ['    degraded verdicts', c.degraded],
    ['    no verdict (too few jurors)', c.no_verdict],
    ['  dead letters', c.dead_letters],
    ...(c.duplicates_dropped > 0 ? [['  later copies of a record_id dropped (keep_first; listed in manifests)', c.duplicates_dropped]] : []),
    ...(c.ranges_retracted > 0 ? [['ranges retracted (their input changed; judged again)', c.ranges_retracted]] : []),
    ...(c.dropped_revoked > 0 ? [['  dropped when a partition moved (re-read there)', c.dropped_revoked]] : []),
    ...(c.pauses > 0 ? [['paused (an endpoint was down)', `${c.pauses} time(s), ${(c.paused_ms / 1000).toFixed(1)} s in all`]] : []),
    ['ranges committed', c.ranges_committed],
    ...(c.ranges_not_written > 0 ? [['ranges not written (partition moved or overlapped; re-read)', c.ranges_not_written]] : []),
    ...(c.storage_outages > 0 ? [['output store outages waited out', `${c.storage_outages} (${(c.storage_outage_ms / 1000).toFixed(1)} s, intake held)`]] : []),
    ...batchRows(batch),
    ['tokens in / out', `${c.tokens_in} / ${c.tokens_out}`],
    // A plain number (scripts read it); what it leaves out is said on the rows after it.
    ['cost (USD)', c.cost_usd.toFixed(6)],
    ...(unpriced.length > 0
      ? [
          ['models without a price (cost_usd null)', unpriced.join(', ')],
          ['  records with unknown cost (not in the cost above)', c.unpriced_records],
        ]
      : []),
    ['seconds', seconds.toFixed(1)],
  ];
  const w = Math.max(...rows.map((r) => String(r[0]).length));
  return [...rows.map(([k, v]) => `${String(k).padEnd(w)}  ${v}`), `shards: ${out}/{verdicts,defects,steps,decisions,verdict_details,dead_letters}/  commits: ${out}/_commits/`].join('\n');
}

/** `run`: judge in the worker thread, print the summary, then keep the metrics up for --metrics-linger. */
async function runCommand(opts: RunOptions): Promise<void> {
  const { job, maxHeapMb, metrics } = parseRunOptions(opts);
  const t0 = Date.now();
  const ops = metrics
    ? await RunOps.start(metrics.host, metrics.port).catch((err: Error) => {
        throw new UsageError(err.message);
      })
    : undefined;
  try {
    const done = await runInWorker(job, maxHeapMb, opts.progress as ProgressMode, ops);
    process.stdout.write(`${summaryText(done.counters, outputLocation(opts.out), (Date.now() - t0) / 1000, done.unpriced, done.batch)}\n`);
    if (done.outage) throw new RunStoppedError(done.outage);
    if (done.budget !== undefined) process.stdout.write(`stopped by budget: ${done.budget}\nraise budget_usd / budget_tokens (or --budget-usd / --budget-tokens) and run the same command again to continue\n`);
    else if (done.stopped) process.stdout.write('stopped early: run the same command again to continue\n');
    await ops?.linger(metrics!.lingerS);
  } finally {
    await ops?.close();
  }
}

/** What `run --help` adds after the options: the guarantees and how each failure is handled. */
const RUN_HELP = `
Every input record leaves as shard rows or as a dead letter with its reason. Ranges of input
positions are committed atomically: parts are staged under _staging/, the manifest in _commits/
is written, then the parts move to their names (docs/layout.md), so a failed range leaves nothing
a folder glob picks up. Every table gets a part per range, zero rows included (repairs only with
repair: on in the config: defect-guided retries, docs/repair.md); Arrow IPC parts go under OUT/arrow/. The curated corpus (OUT/corpus/decision=keep|drop|review/) holds every
judged record as it was read, with its decision and a defect summary; dead letters are not in it.
Re-running the same command after a crash skips committed ranges and rebuilds the rest under the
same file names. Every manifest records --range-records, --range-mb, --format and --corpus;
resuming with other values is refused with one line, since the ranges would be planned under other names.

Each manifest also records a hash of the records its range was judged from. If a committed input
file was edited since, the run stops with one line naming the file and the records
(--on-changed-input error, the default), or retracts that range and the file's later ranges and
judges them again (rejudge). --rejudge no-verdict (or degraded) judges again, without deleting
the output, the committed ranges holding a verdict that could not be formed (or any degraded
one): each is retracted (manifest first) and committed again under its name. A record_id seen again in the run becomes a dead letter naming the
first copy's position (--duplicate-ids dead_letter, the default), is dropped and listed in its
manifest (keep_first), or is judged again (keep_all). Read the output by its manifests:
\`reasoning-jury shards list OUT\` (docs/reading-shards.md).

When the output store is down or full (S3 refusing connections, timing out, answering 5xx or
SlowDown; a local disk full or failing with EIO), the commit waits and retries with backoff for
up to --max-storage-outage, with one line when the wait starts and one when the store is back.
Meanwhile no new records are read; those in flight finish and wait for their commit. If the
store is still down after that, run stops with one line naming the range and the file or key,
and exits 1; nothing uncommitted is visible, and the same command resumes where it stopped.

Budgets (--budget-usd, --budget-tokens, or budget_usd / budget_tokens in the config) count the
usage recorded on the output's verdicts and repairs rows (retries and re-judging cost too):
committed ranges of earlier runs (their manifests keep the sums) plus what this run judges. Once a cap is reached no new record is read; the records in
flight finish and their ranges commit, so the output can pass the cap by what was in flight (at
most --concurrency records). The summary says which cap stopped it; raise the cap and run the
same command again to judge the rest. Estimate first with \`reasoning-jury estimate\`.

Operational events (assignments, ranges not written, records without a verdict, kafkajs
warnings) go to stderr, one per line, as text or with --log-format json as JSON; a fatal error
is one line naming what failed and what to do (--debug adds its stack). The summary goes to stdout.

When an endpoint stops answering (refused connections, timeouts, 5xx), intake pauses and the
records in flight wait for it; none becomes a failed verdict because of it. An outage longer
than --max-outage stops the run with one line and exit code 3, committing only ranges whose
records were all judged; running the same command again judges the rest. A refused key (401,
403), a model the server does not serve (404), or a call every attempt of which the endpoint
fails stops the run the same way at once. Before reading input, one tiny call per endpoint and
model checks key, model and dialect (--no-preflight skips it).

One writer per output: before touching --out (file and s3:// inputs) run takes the output's
lease (OUT/_lease/), renews it while it runs and releases it at the end. A second command on
the same --out stops with one line naming the holder and exit code 4 before any model call, or
waits for it with --wait-for-lease; a killed holder's lease expires after --lease-expiry, or is
taken at once with --take-over. --out may not be inside --input or contain it (exit 2); an
--out that cannot be written stops the run at start, one that vanishes mid-run stops it (exit 1).
Every exit code, of every command: docs/operating.md ("Exit codes").

Examples:
  reasoning-jury run                                   # bundled examples, simulated jury, ./out
  reasoning-jury run -c jury.yaml -i traces/ -o shards/ --concurrency 64
  reasoning-jury run -i kafka://traces --log-format json 2> >(jq -c 'select(.level != "info")')`;

export function registerRun(program: Command): void {
  const run = program
    .command('run')
    .description('judge a stream of trace records and write verdicts, defects, step labels and filter decisions as shards')
    .addOption(juryOption('config'))
    .option('-i, --input <path>', `${inputConnectors().map((c) => c.help).join('; ')} (default: the bundled examples)`)
    .option('-o, --out <dir>', 'output folder, or s3://bucket/prefix, for shards and commit manifests', 'out')
    .option('--format <format>', 'shard tables as parquet | arrow | both (Arrow IPC parts go under OUT/arrow/)', 'parquet')
    .addOption(configFlagOption('verdictDetails'))
    .addOption(configFlagOption('corpus'))
    .addOption(configFlagOption('tableFormat'))
    .option('--concurrency <n>', 'records judged at once (default 16; 1000 in batch mode, where a record waits for its batch)')
    .addOption(configFlagOption('batch'))
    .option('--range-records <n>', 'records per committed range (per shard file)', '1000')
    .option('--range-mb <n>', 'input megabytes per committed range', '64')
    .addOption(configFlagOption('onChangedInput'))
    .option('--rejudge <which>', 'no-verdict | degraded: retract the committed ranges holding verdicts that have no verdict (or are degraded) and judge them again (file and s3:// inputs)')
    .addOption(configFlagOption('duplicateIds'))
    .addOption(configFlagOption('budgetUsd'))
    .addOption(configFlagOption('budgetTokens'))
    .addOption(configFlagOption('preflight'))
    .option('--no-resume', 'refuse to start if the output already has committed ranges (default: skip them)')
    .option('--progress <mode>', 'auto | bar | log | none (with --log-format json: auto and log are JSON events, bar is refused)', 'auto')
    .option('--max-heap-mb <mb>', 'heap limit of the judging thread; keeps memory flat on long runs (0 = V8 default)', '1024')
    .addOption(juryOption('gold'))
    .addOption(juryOption('auditLog'))
    .addOption(juryOption('cache'))
    .option('--rank <n>', 's3:// input: this worker\'s index among --world-size workers (default $JOB_COMPLETION_INDEX, else 0)')
    .option('--world-size <n>', 's3:// input: number of workers sharing the objects', '1')
    .option('--max-storage-outage <duration>', 'how long to wait out an output store that is down or full (e.g. 90s, 10m, 1h; 0 = fail at once): commits retry with backoff and no new records are read meanwhile', '10m')
    .option('--until-caught-up', 'kafka:// input: exit once the consumer group has read and committed every partition (default: keep streaming)')
    .option('--allow-other-group', 'kafka:// input: write an output another consumer group writes too (warned; both groups read every partition)')
    .option('--metrics-port <n>', 'serve Prometheus /metrics and the /healthz, /readyz probes on this port (0 = any free port, printed on stderr; default: off)')
    .option('--metrics-host <addr>', 'address the metrics port listens on', '0.0.0.0')
    .option('--metrics-linger <s>', 'after the summary, keep serving the final metrics this many seconds (or until SIGTERM), so a last scrape sees them', '0')
    .addOption(configFlagOption('maxOutageMs'));
  addLeaseOptions(run).addHelpText('after', RUN_HELP).action(runCommand);
}

type ProgressMode = 'auto' | 'bar' | 'log' | 'none';

interface MetricsOptions {
  host: string;
  port: number;
  lingerS: number;
}

function parseMetricsOptions(opts: RunOptions): MetricsOptions | undefined {
  const lingerS = Number(opts.metricsLinger);
  if (!Number.isFinite(lingerS) || lingerS < 0) throw new UsageError(`--metrics-linger must be a number of seconds (got "${opts.metricsLinger}")`);
  if (opts.metricsPort === undefined) return undefined;
  const port = Number(opts.metricsPort);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--metrics-port must be a port number 0-65535 (got "${opts.metricsPort}")`);
  return { host: opts.metricsHost, port, lingerS };
}

/** The command line, checked, as the plain data the judging thread takes. */
function parseRunOptions(opts: RunOptions): { job: RunJobOptions; maxHeapMb: number; metrics: MetricsOptions | undefined } {
  if (!['parquet', 'arrow', 'both'].includes(opts.format)) throw new UsageError(`--format must be parquet, arrow or both (got "${opts.format}")`);
  const configFlags = parseConfigFlags(opts as unknown as Record<string, unknown>, RUN_CONFIG_FLAGS);
  if (!['auto', 'bar', 'log', 'none'].includes(opts.progress)) throw new UsageError(`--progress must be auto, bar, log or none (got "${opts.progress}")`);
  const log = logSettings();
  if (log.format === 'json' && opts.progress === 'bar') throw new UsageError('--progress bar draws on the terminal and would break the JSON lines of --log-format json: use --progress log (JSON events) or none');
  const maxHeapMb = Number(opts.maxHeapMb);
  if (!Number.isInteger(maxHeapMb) || maxHeapMb < 0) throw new UsageError(`--max-heap-mb must be a whole number of megabytes (got "${opts.maxHeapMb}")`);
  const worldSize = positiveInt(opts.worldSize, '--world-size');
  const rankText = opts.rank ?? (worldSize > 1 ? process.env.JOB_COMPLETION_INDEX : undefined) ?? '0';
  const rank = Number(rankText);
  if (!Number.isInteger(rank) || rank < 0 || rank >= worldSize) throw new UsageError(`--rank must be a whole number below --world-size ${worldSize} (got "${rankText}")`);
  const maxStorageOutageMs = parseDuration(opts.maxStorageOutage);
  if (maxStorageOutageMs === null) throw new UsageError(`--max-storage-outage must be a duration like 90s, 10m or 1h (got "${opts.maxStorageOutage}")`);
  const job: RunJobOptions = {
    rank,
    maxStorageOutageMs,
    worldSize,
    untilCaughtUp: opts.untilCaughtUp === true,
    allowOtherGroup: opts.allowOtherGroup === true,
    ...(opts.config ? { config: opts.config } : {}),
    ...(opts.gold ? { gold: opts.gold } : {}),
    ...(opts.auditLog ? { auditLog: opts.auditLog } : {}),
    cache: opts.cache,
    ...(opts.input ? { input: opts.input } : {}),
    out: opts.out,
    formats: opts.format === 'both' ? ['parquet', 'arrow'] : [opts.format as ShardFormat],
    ...(opts.concurrency !== undefined ? { concurrency: positiveInt(opts.concurrency, '--concurrency') } : {}),
    maxRecords: positiveInt(opts.rangeRecords, '--range-records'),
    maxChars: positiveInt(opts.rangeMb, '--range-mb') * 1024 * 1024,
    resume: opts.resume,
    ...(opts.rejudge !== undefined ? { rejudge: oneOf(opts.rejudge, REJUDGE, '--rejudge') } : {}),
    log,
    ...configFlags,
    lease: leaseSettings(opts),
  };
  return { job, maxHeapMb, metrics: parseMetricsOptions(opts) };
}

const OOM_HINT = 'raise --max-heap-mb, then run the same command again (committed ranges are skipped)';

interface WorkerOutcome {
  counters: StageCounters;
  stopped: boolean;
  /** models without a price (their cost is unknown) */
  unpriced: string[];
  /** set when a budget stopped intake: which cap and the spend */
  budget?: string;
  /** set when an endpoint outage stopped the run: the one line to print */
  outage?: string;
  /** batch mode: the batches' last state */
  batch?: BatchStats;
}

/**
 * Runs the job in a worker thread with a heap limit and relays its progress. The first SIGINT
 * or SIGTERM asks it to stop pulling and commit what is in flight; a second SIGINT aborts.
 */
async function runInWorker(job: RunJobOptions, maxHeapMb: number, progressMode: ProgressMode, ops: RunOps | undefined): Promise<WorkerOutcome> {
  // A worker sees no stdin of its own: an input that reads it (stdin://) gets ours piped in.
  const stdin = job.input !== undefined && findInputConnector(job.input)?.readsStdin === true;
  const worker = new Worker(new URL('./run-worker.js', import.meta.url), {
    workerData: { job, metrics: ops !== undefined } satisfies WorkerInput,
    ...(maxHeapMb > 0 ? { resourceLimits: { maxOldGenerationSizeMb: maxHeapMb } } : {}),
    ...(stdin ? { stdin: true } : {}),
  });
  // A worker that stops before the input ends closes its end: the lines left over are not an error.
  if (stdin && worker.stdin) process.stdin.pipe(worker.stdin.on('error', () => undefined));
  let progress: ProgressView | null = null;
  let finished: WorkerOutcome | null = null;
  let failure: FatalReport | null = null;
  ops?.attach(worker);
  const onSignal = () => {
    ops?.stopping();
    if (finished === null && failure === null) {
      if (job.log.format === 'text') process.stderr.write('\n'); // off the progress bar's line
      logger('cli').info('stopping: no new records; finishing and committing those in flight (again to abort)');
      worker.postMessage({ type: 'stop' });
    }
    process.once('SIGINT', () => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // After its last word the thread should end at once; one that lingers (a client still holding
  // a connection open) holds nothing worth waiting for: everything it reported is committed.
  let lingering: NodeJS.Timeout | undefined;
  const endLingering = () => {
    lingering ??= setTimeout(() => {
      logger('cli').warn('the judging thread finished but did not exit (a connection still open); ending it');
      void worker.terminate();
    }, LINGER_MS).unref();
  };
  worker.on('message', (m: WorkerMessage) => {
    if (m.type === 'done' || m.type === 'outage' || m.type === 'error') endLingering();
    if (ops?.handle(m)) return;
    if (m.type === 'total') progress = createProgress(progressMode, m.total, { format: job.log.format });
    else if (m.type === 'progress') progress?.update(m.counters, m.batch);
    else if (m.type === 'done') {
      finished = { counters: m.counters, stopped: m.stopped, unpriced: m.unpriced, ...(m.budget !== undefined ? { budget: m.budget } : {}), ...(m.batch ? { batch: m.batch } : {}) };
      ops?.finished(m.metrics);
    } else if (m.type === 'outage') finished = { counters: m.counters, stopped: false, unpriced: [], outage: m.message };
    else if (m.type === 'error') failure = m.report;
  });
  const exitCode = await new Promise<number>((resolve) => {
    worker.on('error', (err) => {
      const oom = (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
      failure ??= fatalReport(oom ? Object.assign(err, { hint: OOM_HINT }) : err);
    });
    worker.on('exit', resolve);
  });
  clearTimeout(lingering);
  ops?.finished(undefined); // a no-op after 'done'; otherwise the worker died without final numbers
  if (stdin) process.stdin.unpipe().destroy(); // lines the run did not read keep no process alive
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  const f = failure as FatalReport | null;
  if (f) throw new ReportedError(f);
  const done = finished as WorkerOutcome | null;
  if (!done) {
    throw Object.assign(new Error(`the judging thread exited with code ${exitCode} before finishing`), { hint: `if it ran out of memory: ${OOM_HINT}` });
  }
  (progress as ProgressView | null)?.stop(done.counters, done.batch);
  return done;
}
