import { parentPort, workerData } from 'node:worker_threads';
import type { Scrape } from '../ops/server.js';
import type { StageCounters } from '../pipeline/stage.js';
import { isEndpointOutage } from '../llm/outage.js';
import { newCounters } from '../pipeline/stage.js';
import { redactForLog } from '../util/log.js';
import { applyLogSettings, fatalReport, type FatalReport } from './logging.js';
import { runJob, type RunJobOptions } from '../api/run-job.js';
import type { OpsMessage } from './run-ops.js';
import type { BatchStats } from '../llm/providers/batch/index.js';

/**
 * `run` executes here, in a worker thread whose heap limit the parent sets: V8 otherwise sizes
 * the heap from the machine's memory and lets a long run's footprint creep up.
 */
export type WorkerMessage =
  | { type: 'total'; total: number | undefined }
  | { type: 'progress'; counters: StageCounters; /** batch mode: the batched endpoints' counters */ batch?: BatchStats }
  | { type: 'done'; counters: StageCounters; stopped: boolean; unpriced: string[]; metrics?: Scrape; /** a budget stopped intake: why */ budget?: string; /** batch mode: the batches' last state */ batch?: BatchStats }
  | { type: 'error'; report: FatalReport }
  /** an endpoint stayed down too long (or the run was stopped during an outage): what was committed, and why it stopped */
  | { type: 'outage'; counters: StageCounters; message: string }
  | OpsMessage;

/** What the main thread hands the worker. */
export interface WorkerInput {
  job: RunJobOptions;
  /** keep a metrics registry and answer scrapes (`--metrics-port`) */
  metrics: boolean;
}

const port = parentPort!;
const input = workerData as WorkerInput;
// This thread has its own log sink: the same format and level as the command line's.
applyLogSettings(input.job.log);
const stop = new AbortController();
port.on('message', (m: { type: string }) => {
  if (m.type === 'stop') stop.abort();
});
const ops = input.metrics ? (await import('./run-worker-ops.js')).startWorkerOps(port) : undefined;
let last = 0;
let latest: StageCounters | undefined;
let unpriced: string[] = [];
let budget: string | undefined;
let batch: BatchStats | undefined;
try {
  const counters = await runJob(input.job, {
    signal: stop.signal,
    onUnpriced: (models) => {
      unpriced = models;
    },
    onBudgetStop: (reason) => {
      budget = reason;
    },
    onBatch: (stats) => {
      batch = stats;
    },
    onTotal: (total) => port.postMessage({ type: 'total', total } satisfies WorkerMessage),
    onProgress: (counters, batch) => {
      latest = counters;
      // Progress is for eyes: a few updates a second is plenty.
      if (Date.now() - last < 100) return;
      last = Date.now();
      port.postMessage({ type: 'progress', counters, ...(batch ? { batch } : {}) } satisfies WorkerMessage);
    },
    ...(ops ? { observe: ops.observe } : {}),
  });
  // The final exposition goes with the counters, so the metrics served after the worker is gone
  // are exactly the numbers of the summary.
  port.postMessage({ type: 'done', counters, stopped: stop.signal.aborted, unpriced, ...(budget !== undefined ? { budget } : {}), ...(batch ? { batch } : {}), ...(ops ? { metrics: await ops.final() } : {}) } satisfies WorkerMessage);
} catch (err) {
  // The stage's counters object is live: it already holds the pause that ended the run.
  if (isEndpointOutage(err)) port.postMessage({ type: 'outage', counters: latest ?? newCounters(), message: err.message } satisfies WorkerMessage);
  else {
    // Described here: the error's kind, fields and causes do not survive the trip to the main thread.
    // Redacted here too: this thread knows the endpoints' key variables, the main one does not.
    port.postMessage({ type: 'error', report: redactForLog(fatalReport(err)) } satisfies WorkerMessage);
  }
}
ops?.stop();
port.close();
