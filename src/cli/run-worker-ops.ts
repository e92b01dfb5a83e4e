/**
 * The judging thread's side of `--metrics-port`: the metrics registry (it lives here, with the
 * state it reads), readiness facts pushed to the main thread when they change, and scrapes
 * answered on request. Loaded only when the flag is given, so prom-client stays unloaded
 * otherwise.
 */
import type { MessagePort } from 'node:worker_threads';
import { collectDefaultMetrics } from 'prom-client';
import { createRunMetrics } from '../ops/metrics.js';
import type { Scrape } from '../ops/server.js';
import type { OpsMessage } from './run-ops.js';
import type { RunObserver } from '../api/run-job.js';

/** How often readiness facts are checked (a change is posted at once). */
const FACTS_EVERY_MS = 250;

export interface WorkerOps {
  observe: RunObserver;
  /** the last exposition, taken after the stage finished: what the summary says */
  final(): Promise<Scrape>;
  stop(): void;
}

export function startWorkerOps(port: MessagePort): WorkerOps {
  const metrics = createRunMetrics();
  // Node's own metrics (heap, event loop delay, GC) of this thread: the one --max-heap-mb limits.
  collectDefaultMetrics({ register: metrics.registry });
  const scrape = async (): Promise<Scrape> => {
    try {
      return { ok: true, contentType: metrics.contentType, body: await metrics.exposition() };
    } catch (err) {
      return { ok: false, reason: `metrics failed: ${(err as Error).message}` };
    }
  };
  let posted = '';
  const postFacts = () => {
    const facts = metrics.facts();
    const key = JSON.stringify(facts);
    if (key === posted) return;
    posted = key;
    port.postMessage({ type: 'facts', facts } satisfies OpsMessage);
  };
  const timer = setInterval(postFacts, FACTS_EVERY_MS);
  const onMessage = (m: { type: string; id?: number }) => {
    if (m.type === 'scrape') void scrape().then((s) => port.postMessage({ type: 'metrics', id: m.id!, scrape: s } satisfies OpsMessage));
  };
  port.on('message', onMessage);
  postFacts(); // the main thread posts scrapes only after this
  return {
    observe: {
      gateway: metrics.gateway,
      onStage: (view) => {
        metrics.watch(view);
        postFacts();
      },
      onRangeDone: (e) => metrics.onRangeDone(e),
    },
    final: scrape,
    stop() {
      clearInterval(timer);
      port.off('message', onMessage);
    },
  };
}
