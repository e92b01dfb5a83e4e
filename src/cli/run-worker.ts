import { parentPort, workerData } from 'node:worker_threads';
import { ConfigError } from '../config/load.js';
import { isEndpointOutage } from '../llm/outage.js';
import { newCounters, type StageCounters } from '../pipeline/stage.js';
import { UsageError } from './io.js';
import { runJob, type RunJobOptions } from './run-job.js';

/**
 * `run` executes here, in a worker thread whose heap limit the parent sets: V8 otherwise sizes
 * the heap from the machine's memory and lets a long run's footprint creep up.
 */
export type WorkerMessage =
  | { type: 'total'; total: number | undefined }
  | { type: 'progress'; counters: StageCounters }
  | { type: 'done'; counters: StageCounters; stopped: boolean }
  | { type: 'error'; usage: boolean; message: string }
  /** an endpoint stayed down too long (or the run was stopped during an outage): what was committed, and why it stopped */
  | { type: 'outage'; counters: StageCounters; message: string };

const port = parentPort!;
const stop = new AbortController();
port.on('message', (m: { type: string }) => {
  if (m.type === 'stop') stop.abort();
});
let last = 0;
let latest: StageCounters | undefined;
try {
  const counters = await runJob(workerData as RunJobOptions, {
    signal: stop.signal,
    onTotal: (total) => port.postMessage({ type: 'total', total } satisfies WorkerMessage),
    onProgress: (counters) => {
      latest = counters;
      // Progress is for eyes: a few updates a second is plenty.
      if (Date.now() - last < 100) return;
      last = Date.now();
      port.postMessage({ type: 'progress', counters } satisfies WorkerMessage);
    },
  });
  port.postMessage({ type: 'done', counters, stopped: stop.signal.aborted } satisfies WorkerMessage);
} catch (err) {
  // The stage's counters object is live: it already holds the pause that ended the run.
  if (isEndpointOutage(err)) port.postMessage({ type: 'outage', counters: latest ?? newCounters(), message: err.message } satisfies WorkerMessage);
  else {
    const usage = err instanceof UsageError || err instanceof ConfigError;
    port.postMessage({ type: 'error', usage, message: usage ? (err as Error).message : ((err as Error).stack ?? String(err)) } satisfies WorkerMessage);
  }
}
port.close();
