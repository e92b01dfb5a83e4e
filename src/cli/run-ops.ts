/**
 * `run --metrics-port`: the operations endpoint, served from the main thread while the job runs
 * in the worker (./run-worker.ts). The main thread only relays progress, so it answers probes
 * at once even while the judging thread is busy encoding a large shard or collecting garbage:
 * a liveness probe that timed out there would restart a healthy pod and waste the work in
 * flight. Metrics live where the state is: a scrape asks the worker for its exposition.
 */
import { logger } from '../util/log.js';
import type { Worker } from 'node:worker_threads';
import { NOT_STARTED, readinessOf, type ReadinessFacts, type RunPhase } from '../ops/readiness.js';
import { startOpsServer, type OpsServer, type Scrape } from '../ops/server.js';

/** How long a scrape waits for the judging thread before answering 503 (under the 10 s Prometheus scrape timeout default). */
const SCRAPE_WAIT_MS = 5_000;

/** What the worker sends for the ops endpoint (see run-worker.ts). */
export type OpsMessage = { type: 'facts'; facts: ReadinessFacts } | { type: 'metrics'; id: number; scrape: Scrape };

export class RunOps {
  private phase: RunPhase = 'running';
  private facts: ReadinessFacts = NOT_STARTED;
  private worker: Worker | undefined;
  private final: Scrape | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, (s: Scrape) => void>();
  /** scrapes are posted only once the worker listens for them (its first facts say so) */
  private listening = false;
  private readonly waiting: Array<() => void> = [];

  private constructor(private server: OpsServer | undefined) {}

  static async start(host: string, port: number): Promise<RunOps> {
    const ops = new RunOps(undefined);
    ops.server = await startOpsServer({ host, port }, { metrics: () => ops.scrape(), readiness: () => readinessOf(ops.phase, ops.facts) });
    logger('cli').info(`metrics on ${ops.server.url}/metrics (probes: /healthz, /readyz)`, { url: ops.server.url });
    return ops;
  }

  attach(worker: Worker): void {
    this.worker = worker;
  }

  /** Takes the worker's ops messages; false for any other message. */
  handle(m: { type: string }): boolean {
    const msg = m as OpsMessage;
    if (msg.type === 'facts') {
      this.facts = msg.facts;
      this.listening = true;
      for (const go of this.waiting.splice(0)) go();
    } else if (msg.type === 'metrics') {
      this.pending.get(msg.id)?.(msg.scrape);
      this.pending.delete(msg.id);
    } else return false;
    return true;
  }

  /** A stop was asked for (SIGTERM / SIGINT): not ready from now on. */
  stopping(): void {
    this.phase = 'stopping';
  }

  /** The worker is gone; `last` is its final exposition, served from now on. */
  finished(last: Scrape | undefined): void {
    if (this.phase !== 'stopping') this.phase = 'finished';
    this.final ??= last;
    this.worker = undefined;
    for (const resolve of this.pending.values()) resolve(last ?? { ok: false, reason: 'the run is over' });
    this.pending.clear();
    for (const go of this.waiting.splice(0)) go();
  }

  private scrape(): Promise<Scrape> {
    const worker = this.worker;
    if (!worker) return Promise.resolve(this.final ?? { ok: false, reason: this.phase === 'running' ? 'the judging thread has not started' : 'the run ended without final metrics' });
    const id = this.nextId++;
    return new Promise<Scrape>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve({ ok: false, reason: `the judging thread did not answer within ${SCRAPE_WAIT_MS / 1000} s` });
      }, SCRAPE_WAIT_MS);
      this.pending.set(id, (s) => {
        clearTimeout(timer);
        resolve(s);
      });
      if (this.listening) worker.postMessage({ type: 'scrape', id });
      else this.waiting.push(() => this.worker?.postMessage({ type: 'scrape', id }));
    });
  }

  /**
   * Keeps serving the final numbers for `seconds` after the summary (so a Job's last scrape sees
   * them); SIGTERM or SIGINT ends the wait early.
   */
  async linger(seconds: number): Promise<void> {
    if (seconds <= 0) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        process.off('SIGTERM', done);
        process.off('SIGINT', done);
        resolve();
      };
      const timer = setTimeout(done, seconds * 1000);
      process.once('SIGTERM', done);
      process.once('SIGINT', done);
    });
  }

  async close(): Promise<void> {
    await this.server?.close();
  }
}
