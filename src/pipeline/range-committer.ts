/**
 * The range committer: the ranges being filled, and the chain that commits them one at a time
 * in the order they complete. Finished records join their range's writer (./range-writer.ts);
 * a range whose last record finished runs the commit protocol (./range-commit.ts) on the chain,
 * and then its window slots are freed. Each range's state is explicit (./range-state.ts).
 *
 * Counts how records ended (judged, clean, degraded, no_verdict, dead_letters, spend) and how
 * ranges ended (ranges_committed, ranges_not_written and their records).
 */
import type { Finished } from './envelope.js';
import type { Duplicate } from './duplicate-ids.js';
import { commitRange, type RangeCommitDeps } from './range-commit.js';
import type { PlannedRange } from './range-planner.js';
import { RangeState } from './range-state.js';
import { RangeWriter } from './range-writer.js';
import { recordLog, type RecordLog } from './record-log.js';
import type { RangeOutcome } from './source.js';
import { countRange, countRecord, type StageCounters } from './stage-counters.js';

export interface RangeTiming {
  outcome: RangeOutcome;
  records: number;
  /** from asking the source for clearance to the manifest written (or the refusal) */
  seconds: number;
}

export interface RangeCommitterEvents {
  /** window slots freed: a committed range's, or a record's whose range was dropped */
  release(n: number): void;
  progress(): void;
  /** a commit failed for good: the stage stops, later commits are not attempted */
  failed(err: unknown): void;
  isFailed(): boolean;
  rangeDone?: ((e: RangeTiming) => void) | undefined;
}

export class RangeCommitter {
  private readonly writers = new Map<number, RangeWriter>();
  private chain: Promise<void> = Promise.resolve();
  private readonly records: RecordLog;

  constructor(
    private readonly deps: RangeCommitDeps,
    private readonly counters: StageCounters,
    private readonly on: RangeCommitterEvents,
  ) {
    this.records = recordLog(deps.log);
  }

  writerFor(range: PlannedRange, source: string): RangeWriter {
    let w = this.writers.get(range.id);
    if (!w) this.writers.set(range.id, (w = new RangeWriter(range, source)));
    // assign() may have closed the range with this very record; it completes when the record does.
    if (range.closed) w.close();
    return w;
  }

  /** The planner closed a range: no record joins it any more. */
  closed(range: PlannedRange): void {
    const w = this.writers.get(range.id);
    if (w?.close()) this.schedule(w);
  }

  /** A record finished its steps (or left intake as a dead letter). */
  finish(w: RangeWriter, env: Finished): void {
    countRecord(this.counters, env);
    this.records.finished(env);
    if (w.state === RangeState.Dropped) return this.on.release(1);
    const complete = w.add(env);
    this.on.progress();
    if (complete) this.schedule(w);
  }

  /** A later copy of a record id, dropped unjudged into its range's manifest. */
  dropDuplicate(w: RangeWriter, offset: number, d: Duplicate): void {
    if (w.state === RangeState.Dropped) this.on.release(1);
    else if (w.addDuplicate(offset, d)) this.schedule(w);
  }

  /** Runs `task` on the chain: after the commits scheduled so far, before any later one. */
  enqueue(task: () => Promise<void>): void {
    this.chain = this.chain.then(() => (this.on.isFailed() ? undefined : task())).catch((err: unknown) => this.on.failed(err));
  }

  /** Settles once every commit scheduled so far has. */
  settled(): Promise<void> {
    return this.chain;
  }

  close(): void {
    this.records.close();
  }

  private schedule(w: RangeWriter): void {
    this.enqueue(() => this.commit(w));
  }

  private async commit(w: RangeWriter): Promise<void> {
    if (w.state === RangeState.Dropped) return;
    const t0 = performance.now();
    const outcome = await commitRange(w, this.deps);
    this.writers.delete(w.plan.id);
    countRange(this.counters, outcome, w.plan.items);
    this.on.rangeDone?.({ outcome, records: w.plan.items, seconds: (performance.now() - t0) / 1000 });
    this.on.release(w.plan.items);
    this.on.progress();
  }

  /** A unit was revoked: its ranges not yet committing are dropped; returns their records. */
  dropUnit(token: string): number {
    let n = 0;
    for (const w of [...this.writers.values()]) {
      if (w.plan.unitToken !== token || !w.drop()) continue;
      this.writers.delete(w.plan.id);
      this.on.release(w.done); // the ones still in flight release as they finish
      n += w.plan.items;
    }
    return n;
  }

  /**
   * Interleaved units (Kafka partitions) can fill the window with open ranges that never fill
   * up: the unit of the largest one, to be closed early rather than wait forever. None while a
   * closed range will commit and free slots.
   */
  stalledUnit(): string | undefined {
    let largest: RangeWriter | undefined;
    for (const w of this.writers.values()) {
      if (w.plan.closed) return undefined;
      if (!largest || w.plan.items > largest.plan.items) largest = w;
    }
    return largest?.plan.unitToken;
  }
}
