/**
 * The stage: pull → intake chain → judge pool → range committer. This file is the executor's
 * wiring: the window, the pull loop, stopping and halting. What happens to a record on intake
 * is ./intake.ts, its steps are ./steps/index.ts run by ./judge-pool.ts, and how a range becomes
 * durable is ./range-committer.ts (its states: ./range-state.ts).
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
import type { DuplicateIdPolicy } from '../../schemas/config.js';
import { logger, type Logger } from '../util/log.js';
import type { Admitted, Derived, StepChain } from './envelope.js';
import type { IdentityOptions } from './input-identity.js';
import { IntakeChain, type Mapped, type Routed } from './intake.js';
import { type IntakeGate, type PauseTracker, trackPauses } from './intake-gate.js';
import { JudgePool } from './judge-pool.js';
import { RangeCommitter, type RangeTiming } from './range-committer.js';
import { type RangeLimits, RangePlanner } from './range-planner.js';
import type { RangeWriter } from './range-writer.js';
import type { IntakeSettings } from './record-mapping.js';
import type { ShardCommitter } from './shard-commit.js';
import type { RangeSink } from './sink.js';
import type { CommittedRanges, Source, SourceItem, UnitControl } from './source.js';
import { newCounters, type StageCounters } from './stage-counters.js';
import { Window } from './window.js';

export { countRange, countRecord, newCounters, type StageCounters } from './stage-counters.js';
export type { RangeTiming } from './range-committer.js';

export interface StageOptions {
  source: Source;
  /** how a source row becomes a record (./record-mapping.ts `intakeSettings(config)`) */
  intake: IntakeSettings;
  /** what happens to a record after intake, in order (./steps/index.ts `judgingSteps`) */
  steps: StepChain<Admitted, Derived>;
  committer: ShardCommitter;
  /** receive each range's rows before it becomes visible (Kafka verdict events, DLQ topic) */
  sinks?: readonly RangeSink[];
  /** ranges already committed (from manifests): skipped, not re-judged */
  committed?: CommittedRanges;
  concurrency: number;
  range: RangeLimits;
  /** records held between pull and commit; default 2 * range.maxRecords + concurrency */
  window?: number;
  onProgress?: (p: StageCounters) => void;
  /** the stage counts into this object (so metrics can read it live); default a fresh one */
  counters?: StageCounters;
  /** told after each range leaves the commit protocol, with how long that took */
  onRangeDone?: (e: RangeTiming) => void;
  /** stop pulling new records; what is in flight still finishes and is committed */
  signal?: AbortSignal;
  /** the stage's events (ranges not written); default: this thread's `stage` logger */
  log?: Logger;
  /** while this returns a promise (the output store is down), no new record is pulled */
  intakeHold?: IntakeHold;
  /** holds intake while it says so (./intake-gate.ts `endpointGate`: a model endpoint is down) */
  gate?: IntakeGate;
  /** what a later copy of a record id becomes (./duplicate-ids.ts); default dead_letter */
  duplicateIds?: DuplicateIdPolicy;
  /** check that committed ranges still hold what was judged (./input-identity.ts); file and S3 runs */
  identity?: IdentityOptions;
}

export interface IntakeHold {
  /** null while intake may go on; else settles when it may go on again */
  blocked(): Promise<void> | null;
  /** outages so far and their total length, for the counters */
  readonly stats: { readonly outages: number; readonly outageMs: number };
}

const STOP = Symbol('stop');

class Stage {
  readonly counters: StageCounters;
  private readonly window: Window;
  private readonly planner: RangePlanner;
  private readonly intake: IntakeChain;
  private readonly judges: JudgePool<RangeWriter>;
  private readonly ranges: RangeCommitter;
  private fatal: unknown = null;
  /** an endpoint stayed down too long: stop pulling, commit only ranges already all judged */
  private halted: Error | null = null;
  /** woken when the stage must stop pulling: a commit failed for good, a halt, or the signal */
  private readonly onStop = new Set<() => void>();
  private pause: PauseTracker | null = null;
  private readonly log: Logger;

  constructor(private readonly opts: StageOptions) {
    const counters = (this.counters = opts.counters ?? newCounters());
    opts.signal?.addEventListener('abort', () => this.stop(), { once: true });
    this.window = new Window(opts.window ?? 2 * opts.range.maxRecords + opts.concurrency);
    const release = (n: number) => this.window.release(n);
    const failed = (err: unknown) => this.failed(err);
    const settings = { max_records: opts.range.maxRecords, max_chars: opts.range.maxChars, formats: [...opts.committer.formats], corpus: opts.committer.corpus };
    const log = (this.log = opts.log ?? logger('stage'));
    this.ranges = new RangeCommitter({ committer: opts.committer, source: opts.source, sinks: opts.sinks ?? [], settings, log }, counters, {
      release, failed, progress: () => this.progress(), isFailed: () => this.fatal !== null, rangeDone: opts.onRangeDone,
    });
    this.planner = new RangePlanner(opts.range, opts.committed, (r) => this.ranges.closed(r));
    this.judges = new JudgePool(opts.concurrency, opts.steps, counters, { done: (w, env) => this.ranges.finish(w, env), outage: (err) => this.halt(err), failed });
    const intake = { settings: opts.intake, duplicateIds: opts.duplicateIds ?? 'dead_letter', identity: opts.identity, counters, log };
    this.intake = new IntakeChain(intake, this.planner, (r) => this.route(r), { release, failed, beforeLaterCommits: (task) => this.ranges.enqueue(task) });
  }

  async run(): Promise<StageCounters> {
    this.opts.source.streaming?.attach(this.control());
    const pauses = this.opts.gate ? trackPauses(this.opts.gate, this.counters, { source: this.opts.source, signal: this.opts.signal, log: this.log, progress: () => this.progress() }) : null;
    this.pause = pauses?.tracker ?? null;
    try {
      await this.pull();
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
    for (const wake of [...this.onStop]) wake();
  }

  /**
   * `p`, or STOP as soon as the stage must stop. (Not Promise.race with one long-lived promise:
   * that adds a reaction to it per record, and a streaming run never lets them go.)
   */
  private unlessStopped<T>(p: Promise<T>): Promise<T | typeof STOP> {
    if (this.stopped) return Promise.resolve(STOP);
    return new Promise((resolve, reject) => {
      const wake = () => resolve(STOP);
      this.onStop.add(wake);
      p.then(
        (v) => (this.onStop.delete(wake), resolve(v)),
        (e: unknown) => (this.onStop.delete(wake), reject(e)),
      );
    });
  }

  /** Pulls and admits records until the source ends or the stage must stop. */
  private async pull(): Promise<void> {
    const items = this.opts.source[Symbol.asyncIterator]();
    let pending: Promise<IteratorResult<SourceItem>> | null = null;
    let failed = true;
    try {
      for (;;) {
        await this.holdIntake();
        if (this.stopped) break;
        pending = items.next();
        const next = await this.unlessStopped(pending);
        if (next !== STOP) pending = null;
        if (next === STOP || next.done || this.stopped) break;
        await this.admit(this.intake.map(next.value));
        // Keep the judging queue short: records wait in the source, not in memory.
        if (this.judges.waiting > 0) await this.unlessStopped(this.judges.whenFewerWaiting(1));
      }
      failed = false;
    } finally {
      // Like a for-await exit, also when the loop threw: the source closes what it holds open (a
      // file handle left to the garbage collector fails the process on Node 26). A pull still
      // pending (a stop cut it short) is let go, and its record, never admitted, is read again by
      // the next run. After a throw, that error is the one that counts, not the closing's.
      if (pending) void pending.then(() => items.return?.()).catch(() => undefined);
      else if (failed) await Promise.resolve(items.return?.()).catch(() => undefined);
      else await items.return?.();
    }
  }

  /** While the output store or a model endpoint is down, nothing new is pulled. */
  private async holdIntake(): Promise<void> {
    while (this.pause?.held && !this.stopped) await this.unlessStopped(this.pause.whenOpen());
    const blocked = this.opts.intakeHold?.blocked();
    if (!blocked) return;
    this.progress();
    await this.unlessStopped(blocked);
    this.progress();
  }

  private progress(): void {
    const hold = this.opts.intakeHold?.stats;
    if (hold) [this.counters.storage_outages, this.counters.storage_outage_ms] = [hold.outages, hold.outageMs];
    this.opts.onProgress?.(this.counters);
  }

  private async admit(m: Mapped): Promise<void> {
    if (this.window.inUse >= this.window.size) this.breakStall();
    // Take the slot before the rest of intake, which assigns and buffers with no await in between.
    if (!(await this.window.acquire())) return; // the stage stopped while waiting
    if (!this.intake.admit(m)) this.window.release(1);
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
