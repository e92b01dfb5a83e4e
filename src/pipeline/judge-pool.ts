/**
 * The judge pool: up to `concurrency` admitted records run their steps at once and finish in
 * any order. It counts `in_flight`; a finished record (rows or dead letter) goes to `done`. A
 * record whose steps throw EndpointOutageError (down beyond the limit) never finishes: it goes to
 * `outage`, so neither it nor its range is committed. Any other throw is a bug and goes to `failed`.
 */
import PQueue from 'p-queue';
import { isEndpointOutage } from '../llm/outage.js';
import type { Admitted, Derived, Finished, StepChain } from './envelope.js';
import type { StageCounters } from './stage-counters.js';

export interface JudgePoolEvents<T> {
  done(to: T, env: Finished): void;
  outage(err: Error): void;
  failed(err: unknown): void;
}

export class JudgePool<T> {
  private readonly queue: PQueue;

  constructor(
    concurrency: number,
    private readonly steps: StepChain<Admitted, Derived>,
    private readonly counters: Pick<StageCounters, 'in_flight'>,
    private readonly on: JudgePoolEvents<T>,
  ) {
    this.queue = new PQueue({ concurrency });
  }

  /** Judges `env`, then hands it to `done` with `to` (its range). */
  judge(to: T, env: Admitted): void {
    this.counters.in_flight += 1;
    void this.queue.add(async () => {
      let out: Finished;
      try {
        out = await this.steps.run(env);
      } catch (err) {
        this.counters.in_flight -= 1;
        // Never finished: its range never completes, so neither it nor its range is committed.
        if (isEndpointOutage(err)) return this.on.outage(err);
        return this.on.failed(err);
      }
      this.counters.in_flight -= 1;
      this.on.done(to, out);
    });
  }

  /** Records waiting for a free judge. */
  get waiting(): number {
    return this.queue.size;
  }

  whenFewerWaiting(n: number): Promise<void> {
    return this.queue.onSizeLessThan(n);
  }

  whenIdle(): Promise<void> {
    return this.queue.onIdle();
  }

  /** Forgets the records not started yet (they would only meet the same outage). */
  clear(): void {
    this.queue.clear();
  }
}
