/**
 * The stage: intake chain → judge pool → range committer. This file is the executor's wiring:
 * the window, stopping and halting. The intake chain is ./source-pull.ts (pulling) and
 * ./intake.ts (mapping, revocation, duplicate ids, the resume gate); a record's steps are
 * ./steps/index.ts, run by ./judge-pool.ts; how a range becomes durable is ./range-committer.ts
 * (its states: ./range-state.ts).
 *
 * Each record holds a window slot from the moment it is pulled until its range is committed,
 * which bounds memory and turns a slow jury or sink into slower reading. Every record pulled
 * leaves as shard rows or as a dead letter with its reason; nothing is dropped silently.
 *
 * While the output store is down (`intakeHold`) or a model endpoint is (`gate`), nothing new is
 * pulled: records in flight finish and their ranges queue behind the commit that waits. A commit
 * that fails for good stops the stage at once (`failed`): no new records, none lost (what is not
 * committed is read again by the next run). A record whose steps throw EndpointOutageError (down
 * beyond the limit) halts the stage: neither it nor its range is committed; ranges whose records
 * were all judged still are.
 */
import { logger, type Logger } from '../util/log.js';
import { IntakeChain, type Routed } from './intake.js';
import { type PauseTracker, trackPauses } from './intake-gate.js';
import { JudgePool } from './judge-pool.js';
import { RangeCommitter } from './range-committer.js';
import { RangePlanner } from './range-planner.js';
import type { RangeWriter } from './range-writer.js';
import { SourcePuller } from './source-pull.js';
import type { SourceItem, UnitControl } from './source.js';
import { newCounters, type StageCounters } from './stage-counters.js';
import type { StageOptions } from './stage-options.js';
import { Window } from './window.js';

export { countRange, countRecord, newCounters, type StageCounters } from './stage-counters.js';
export type { RangeTiming } from './range-committer.js';
export type { IntakeHold, StageOptions } from './stage-options.js';

class Stage {
  readonly counters: StageCounters;
  private readonly window: Window;
  private readonly planner: RangePlanner;
  private readonly puller: SourcePuller;
  private readonly intake: IntakeChain;
  private readonly judges: JudgePool<RangeWriter>;
  private readonly ranges: RangeCommitter;
  private readonly log: Logger;
  private fatal: unknown = null;
  /** an endpoint stayed down too long: stop pulling, commit only ranges already all judged */
  private halted: Error | null = null;
  private pause: PauseTracker | null = null;

  constructor(private readonly opts: StageOptions) {
    const counters = (this.counters = opts.counters ?? newCounters());
    opts.signal?.addEventListener('abort', () => this.stop(), { once: true });
    this.window = new Window(opts.window ?? 2 * opts.range.maxRecords + opts.concurrency);
    const release = (n: number) => this.window.release(n);
    const failed = (err: unknown) => this.failed(err);
    const progress = () => this.progress();
    const settings = { max_records: opts.range.maxRecords, max_chars: opts.range.maxChars, formats: [...opts.committer.formats], corpus: opts.committer.corpus };
    const log = (this.log = opts.log ?? logger('stage'));
    const commitDeps = { committer: opts.committer, source: opts.source, sinks: opts.sinks ?? [], settings, log };
    this.ranges = new RangeCommitter(commitDeps, counters, { release, failed, progress, isFailed: () => this.fatal !== null, rangeDone: opts.onRangeDone });
    this.planner = new RangePlanner(opts.range, opts.committed, (r) => this.ranges.closed(r));
    this.judges = new JudgePool(opts.concurrency, opts.steps, counters, { done: (w, env) => this.ranges.finish(w, env), outage: (err) => this.halt(err), failed });
    const intake = { settings: opts.intake, duplicateIds: opts.duplicateIds ?? 'dead_letter', identity: opts.identity, counters, log };
    this.intake = new IntakeChain(intake, this.planner, (r) => this.route(r), { release, failed, beforeLaterCommits: (task) => this.ranges.enqueue(task) });
    this.puller = new SourcePuller({
      source: opts.source, intakeHold: opts.intakeHold, stopped: () => this.stopped, pause: () => this.pause, progress,
      admit: (item) => this.admit(item), waiting: () => this.judges.waiting, whenFewerWaiting: (n) => this.judges.whenFewerWaiting(n),
    });
  }

  async run(): Promise<StageCounters> {
    this.opts.source.streaming?.attach(this.control());
    const pauses = this.opts.gate ? trackPauses(this.opts.gate, this.counters, { source: this.opts.source, signal: this.opts.signal, log: this.log, progress: () => this.progress() }) : null;
    this.pause = pauses?.tracker ?? null;
    try {
      await this.puller.pull();
      if (!this.stopped) this.intake.end();
      this.planner.closeAll();
      await this.judges.whenIdle();
      // Every range is closed; the complete ones are committing: wait for the last commits.
      await this.ranges.settled();
    } finally {
      pauses?.close();
    }
    this.ranges.close();
    if (this.fatal) throw this.fatal;
    if (this.halted) throw this.halted;
    this.progress();
    return this.counters;
  }

  private get stopped(): boolean {
    return this.fatal !== null || this.halted !== null || this.opts.signal?.aborted === true;
  }

  private stop(): void {
    this.puller.wake();
  }

  private progress(): void {
    const hold = this.opts.intakeHold?.stats;
    if (hold) [this.counters.storage_outages, this.counters.storage_outage_ms] = [hold.outages, hold.outageMs];
    this.opts.onProgress?.(this.counters);
  }

  /** Mapping, then the window slot, then the rest of intake with no await in between. */
  private async admit(item: SourceItem): Promise<void> {
    const mapped = this.intake.map(item);
    if (this.window.inUse >= this.window.size) this.breakStall();
    if (!(await this.window.acquire())) return; // the stage stopped while waiting
    if (!this.intake.admit(mapped)) this.window.release(1);
  }

  /** A record that passed intake goes to its range's writer: judged, or finished at once. */
  private route(r: Routed): void {
    const pos = r.env.position;
    const w = this.ranges.writerFor(r.range, pos.source);
    if (r.digest !== undefined) w.digest(pos.offset, r.digest);
    if (r.to === 'judge') this.judges.judge(w, r.env);
    else if (r.to === 'finish') this.ranges.finish(w, r.env);
    else this.ranges.dropDuplicate(w, pos.offset, r.duplicate);
  }

  /** Something failed for good: stop pulling now. */
  private failed(err: unknown): void {
    this.fatal ??= err;
    // Slots of an uncommitted range never come back: wake the intake so it sees the stop.
    this.window.close();
    this.stop();
  }

  /** A record met an endpoint down beyond the limit: it stays unjudged, and the stage stops. */
  private halt(err: Error): void {
    this.halted ??= err;
    this.judges.clear(); // records not started yet would only meet the same outage
    this.window.close(); // the halted records' slots never come back
    this.pause?.wake();
    this.stop();
  }

  /** What a streaming source may ask of the stage while it runs. */
  private control(): UnitControl {
    return {
      closeUnit: (token) => this.planner.closeUnitNow(token),
      dropUnit: (token) => {
        const n = this.ranges.dropUnit(token);
        this.planner.closeUnitNow(token); // its open range, if any, was dropped above
        this.intake.revoked(token, n);
        return n;
      },
    };
  }

  // Interleaved units (Kafka partitions) can fill the window with open ranges that never fill up.
  private breakStall(): void {
    const token = this.ranges.stalledUnit();
    if (token !== undefined) this.planner.closeUnitNow(token);
  }
}

export function runStage(opts: StageOptions): Promise<StageCounters> {
  return new Stage(opts).run();
}
