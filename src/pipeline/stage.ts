/**
 * The stage: pull → intake (map + validate) → steps (segment → judge → derive → taxonomy) →
 * range writer + commit. The executor is this file; what happens to a record is the step list
 * (./steps/index.ts) and how a range becomes durable is ./range-writer.ts.
 *
 * Up to `concurrency` records run their steps at once and finish in any order. Each record
 * holds a window slot from the moment it is pulled until its range is committed, which bounds
 * memory and turns a slow jury or sink into slower reading. Every record pulled leaves as shard
 * rows or as a dead letter with its reason; nothing is dropped silently.
 *
 * While the output store is down (`intakeHold`), nothing new is pulled: records in flight
 * finish into the window and their ranges queue behind the commit that waits for the store.
 * A commit that fails for good stops the stage at once: no new records, none lost (what is not
 * committed is read again by the next run), and the error names the range.
 *
 * While a model endpoint is down (`gate`), intake pauses the same way and the records in flight
 * wait for it. A record whose steps throw EndpointOutageError (down beyond the limit) halts the
 * stage: neither it nor its range is committed; ranges whose records were all judged still are.
 */
import PQueue from 'p-queue';
import { logger, type Logger } from '../util/log.js';
import { limitedLog, type LimitedLog } from '../util/repeat-limiter.js';
import { unitToken } from './positions.js';
import { type PlannedRange, type RangeLimits, RangePlanner } from './range-planner.js';
import { commitRange, type RangeCommitDeps, RangeWriter } from './range-writer.js';
import type { ShardCommitter } from './shard-commit.js';
import type { RangeSink } from './sink.js';
import type { CommittedRanges, RangeOutcome, Source, SourceItem, UnitControl } from './source.js';
import { runSteps, type Envelope, type PipelineStep } from './envelope.js';
import { PauseTracker, type IntakeGate } from './intake-gate.js';
import { isEndpointOutage } from '../llm/outage.js';
import { intake, type IntakeSettings } from './record-mapping.js';
import { recordLog, type RecordLog } from './record-log.js';
import { Window } from './window.js';
import type { DuplicateIdPolicy } from '../../schemas/config.js';
import { DuplicateIds, duplicateReason } from './duplicate-ids.js';
import { deadLetter } from './envelope.js';
import { describeChange, foldDigest, InputChangedError, itemDigest, newContentHash, type IdentityOptions, type SkipCheck } from './input-identity.js';

export interface StageOptions {
  source: Source;
  /** how a source row becomes a record (./steps/map.ts `intakeSettings(config)`) */
  intake: IntakeSettings;
  /** what happens to a record after intake, in order (./steps/index.ts `judgingSteps`) */
  steps: readonly PipelineStep[];
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

export interface RangeTiming {
  outcome: RangeOutcome;
  records: number;
  /** from asking the source for clearance to the manifest written (or the refusal) */
  seconds: number;
}

/** What the stage has done so far; the run summary and the progress line read it. */
export interface StageCounters {
  /** records pulled from the source (excluding those skipped as already committed) */
  read: number;
  skipped_committed: number;
  in_flight: number;
  judged: number;
  clean: number;
  degraded: number;
  no_verdict: number;
  dead_letters: number;
  /** ranges whose shards are in the output: written now, or found written (a restart, a racing writer) */
  ranges_committed: number;
  records_committed: number;
  /** ranges a streaming source told the stage not to write (partition moved, overlap); re-read */
  ranges_not_written: number;
  records_not_written: number;
  /** records pulled but dropped unwritten because their unit was revoked (re-read by its next owner) */
  dropped_revoked: number;
  /** later copies of a record id dropped unjudged (input.duplicate_ids: keep_first; listed in their manifests) */
  duplicates_dropped: number;
  /** committed ranges retracted because their input changed (input.on_changed_input: rejudge) */
  ranges_retracted: number;
  /** tokens and cost of the judged records' verdicts and repairs rows (retries, re-judging) */
  tokens_in: number;
  tokens_out: number;
  /** priced calls only: see unpriced_records */
  cost_usd: number;
  /** judged records whose cost is unknown (some call used a model without a price) */
  unpriced_records: number;
  /** output-store outages waited out (intake held meanwhile), and their total length */
  storage_outages: number;
  storage_outage_ms: number;
  /** times intake paused because an endpoint was down, their total time (the current one included), and whether it is paused now */
  pauses: number;
  paused_ms: number;
  paused: boolean;
}

export function newCounters(): StageCounters {
  return { read: 0, skipped_committed: 0, in_flight: 0, judged: 0, clean: 0, degraded: 0, no_verdict: 0, dead_letters: 0, ranges_committed: 0, records_committed: 0, ranges_not_written: 0, records_not_written: 0, dropped_revoked: 0, duplicates_dropped: 0, ranges_retracted: 0, tokens_in: 0, tokens_out: 0, cost_usd: 0, unpriced_records: 0, storage_outages: 0, storage_outage_ms: 0, pauses: 0, paused_ms: 0, paused: false };
}

/** Counts a record that finished its steps. */
export function countRecord(c: StageCounters, env: Envelope): void {
  if (env.dead) {
    c.dead_letters += 1;
    return;
  }
  const v = env.verdict!;
  const row = env.rows!.verdict;
  c.judged += 1;
  if (v.error) c.no_verdict += 1;
  else if (v.degraded) c.degraded += 1;
  else c.clean += 1;
  // The record's spend: its verdict and its repairs rows (retries and their re-judging).
  const repairs = env.rows!.repairs ?? [];
  c.tokens_in += row.tokens_in + repairs.reduce((a, r) => a + r.tokens_in, 0);
  c.tokens_out += row.tokens_out + repairs.reduce((a, r) => a + r.tokens_out, 0);
  c.cost_usd += (row.cost_usd ?? 0) + repairs.reduce((a, r) => a + (r.cost_usd ?? 0), 0);
  if (row.cost_usd === null || repairs.some((r) => r.cost_usd === null)) c.unpriced_records += 1;
}

export function countRange(c: StageCounters, outcome: RangeOutcome, records: number): void {
  if (outcome === 'committed' || outcome === 'existing') {
    c.ranges_committed += 1;
    c.records_committed += records;
  } else {
    c.ranges_not_written += 1;
    c.records_not_written += records;
  }
}

const STOP = Symbol('stop');

/** An admitted record with its window slot, not yet placed in a range. */
interface Held {
  env: Envelope;
  chars: number;
  token: string;
}


class Stage {
  readonly counters: StageCounters;
  private readonly window: Window;
  private readonly judges: PQueue;
  private readonly writers = new Map<number, RangeWriter>();
  private readonly planner: RangePlanner;
  private readonly commitDeps: RangeCommitDeps;
  /** bumped when a unit is dropped: a record pulled before that must not start a range */
  private readonly generations = new Map<string, number>();
  private commitChain: Promise<void> = Promise.resolve();
  private fatal: unknown = null;
  /** woken when the stage must stop pulling: a commit failed for good, or the signal fired */
  private readonly onStop = new Set<() => void>();
  private readonly records: RecordLog;
  /** an endpoint stayed down too long: stop pulling, commit only ranges already all judged */
  private halted: Error | null = null;
  private pause: PauseTracker | null = null;
  private pauseLog: LimitedLog | null = null;
  private readonly duplicates: DuplicateIds;
  /** the committed range being read past, until its records are known unchanged */
  private pending: SkipCheck<Held> | null = null;

  constructor(private readonly opts: StageOptions) {
    this.counters = opts.counters ?? newCounters();
    opts.signal?.addEventListener('abort', () => this.stop(), { once: true });
    this.window = new Window(opts.window ?? 2 * opts.range.maxRecords + opts.concurrency);
    this.judges = new PQueue({ concurrency: opts.concurrency });
    this.planner = new RangePlanner(opts.range, opts.committed, (r) => this.onClosed(r));
    const settings = { max_records: opts.range.maxRecords, max_chars: opts.range.maxChars, formats: [...opts.committer.formats], corpus: opts.committer.corpus };
    this.commitDeps = { committer: opts.committer, source: opts.source, sinks: opts.sinks ?? [], settings, log: opts.log ?? logger('stage') };
    this.records = recordLog(this.commitDeps.log);
    this.duplicates = new DuplicateIds(opts.duplicateIds ?? 'dead_letter');
  }

  async run(): Promise<StageCounters> {
    this.opts.source.streaming?.attach(this.control());
    this.startPauses();
    try {
      await this.pull();
      if (this.pending && !this.stopped) this.settle(this.pending);
      this.planner.closeAll();
      await this.judges.onIdle();
      // Every range is closed; the complete ones are committing: wait for the last commits.
      await this.commitChain;
    } finally {
      this.pause?.stop();
      this.pauseLog?.close();
    }
    this.records.close();
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
        await this.admit(next.value);
        // Keep the judging queue short: records wait in the source, not in memory.
        if (this.judges.size > 0) await this.unlessStopped(this.judges.onSizeLessThan(1));
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

  private async admit(item: SourceItem): Promise<void> {
    const token = unitToken(item.position);
    const generation = this.generations.get(token) ?? 0;
    const { env, chars } = intake(item, this.opts.intake);
    if (this.window.inUse >= this.window.size) this.breakStall();
    // Take the slot before assigning, and assign and buffer with no await in between.
    if (!(await this.window.acquire())) return; // the stage stopped while waiting

    if ((this.generations.get(token) ?? 0) !== generation) {
      this.window.release(1);
      this.counters.dropped_revoked += 1;
      return;
    }
    this.place({ env, chars, token });
  }

  /** Assigns an admitted record (holding its window slot) to a range, and judges it or leaves it. */
  private place(h: Held): void {
    const { env, token } = h;
    const pos = env.position;
    if (this.pending && (this.pending.unitToken !== token || pos.offset > this.pending.last)) this.settle(this.pending);
    const assigned = this.planner.assign(pos.unit, token, pos.offset, h.chars);
    const dup = this.duplicates.see(env);
    if (assigned.skip) return this.skipped(h, assigned.first, assigned.last);
    this.counters.read += 1;
    const writer = this.writerFor(assigned.range, pos.source);
    if (this.opts.identity) writer.digest(pos.offset, itemDigest(env.item));
    if (dup && !env.dead && this.duplicates.policy === 'keep_first') {
      this.counters.duplicates_dropped += 1;
      if (writer.state === 'dropped') this.window.release(1);
      else if (writer.addDuplicate(pos.offset, dup)) this.scheduleCommit(writer);
      return;
    }
    if (dup && !env.dead) return this.finish(writer, { ...env, dead: deadLetter(pos, duplicateReason(dup), JSON.stringify(env.record)) });
    if (env.dead) return this.finish(writer, env);
    this.judge(writer, env);
  }

  /**
   * A record of a committed range. Without identity checks it is let go at once; with them its
   * digest joins the range's check, and under `rejudge` it is held (slot and all) until the
   * range is known unchanged, so it can still be judged if not.
   */
  private skipped(h: Held, first: number, last: number): void {
    const identity = this.opts.identity;
    if (!identity) {
      this.window.release(1);
      this.counters.skipped_committed += 1;
      return;
    }
    const pos = h.env.position;
    let check = this.pending;
    if (!check || check.unitToken !== h.token || check.first !== first) {
      if (check) this.settle(check);
      const expectedRecords = identity.expected.get(h.token)?.get(first)?.records ?? 0;
      check = this.pending = { unit: pos.unit, unitToken: h.token, first, last, expectedRecords, hash: newContentHash(), seen: 0, held: [] };
    }
    foldDigest(check.hash, pos.offset, itemDigest(h.env.item));
    check.seen += 1;
    if (identity.policy === 'rejudge') check.held.push(h);
    else {
      this.window.release(1);
      this.counters.skipped_committed += 1;
    }
    if (pos.offset >= last) this.settle(check);
  }

  /** A committed range's records have all been read: skip them, stop (error), or retract and judge them (rejudge). */
  private settle(check: SkipCheck<Held>): void {
    const identity = this.opts.identity!;
    if (this.pending === check) this.pending = null;
    const expected = identity.expected.get(check.unitToken)?.get(check.first);
    // Manifests written before content hashes existed cannot be compared: trusted as before.
    const change = expected ? describeChange(check, expected.sha256) : null;
    if (!change) {
      this.window.release(check.held.length);
      this.counters.skipped_committed += check.held.length;
      return;
    }
    if (identity.policy === 'error') return this.failed(new InputChangedError(check.unit, change));
    this.commitDeps.log.warn(`input ${check.unit} changed since it was judged: ${change}; retracting its ranges from offset ${check.first} on and judging them again`, { unit: check.unit, first_offset: check.first });
    const known = identity.expected.get(check.unitToken)!;
    for (const first of [...known.keys()]) {
      if (first < check.first) continue;
      known.delete(first);
      this.counters.ranges_retracted += 1;
    }
    this.planner.uncommit(check.unitToken, check.first);
    // On the commit chain: the old ranges are gone before any new range of this run is written.
    this.commitChain = this.commitChain.then(() => (this.fatal ? undefined : identity.retract(check.unitToken, check.first))).catch((err: unknown) => this.failed(err));
    for (const h of check.held) this.place(h);
  }

  private judge(writer: RangeWriter, env: Envelope): void {
    this.counters.in_flight += 1;
    void this.judges.add(async () => {
      let out: Envelope;
      try {
        out = await runSteps(this.opts.steps, env);
      } catch (err) {
        this.counters.in_flight -= 1;
        // Never finished: its range never completes, so neither it nor its range is committed.
        if (isEndpointOutage(err)) return this.halt(err);
        return this.failed(err);
      }
      this.counters.in_flight -= 1;
      this.finish(writer, out);
    });
  }

  private writerFor(range: PlannedRange, source: string): RangeWriter {
    let w = this.writers.get(range.id);
    if (!w) this.writers.set(range.id, (w = new RangeWriter(range, source)));
    // assign() may have closed the range with this very record; it completes when the record does.
    if (range.closed) w.close();
    return w;
  }

  private onClosed(range: PlannedRange): void {
    const w = this.writers.get(range.id);
    if (w?.close()) this.scheduleCommit(w);
  }

  private finish(w: RangeWriter, env: Envelope): void {
    countRecord(this.counters, env);
    this.records.finished(env);
    if (w.state === 'dropped') {
      this.window.release(1);
      return;
    }
    const complete = w.add(env);
    this.progress();
    if (complete) this.scheduleCommit(w);
  }

  // Commits run one at a time, in the order ranges complete.
  private scheduleCommit(w: RangeWriter): void {
    this.commitChain = this.commitChain
      .then(() => (this.fatal ? undefined : this.commit(w)))
      .catch((err: unknown) => this.failed(err));
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

  private startPauses(): void {
    const gate = this.opts.gate;
    if (!gate) return;
    const pauses = limitedLog(this.commitDeps.log);
    this.pauseLog = pauses;
    this.pause = new PauseTracker(gate, this.counters, {
      hold: (held) => {
        this.opts.source.streaming?.hold?.(held);
        // Already stopping when the outage began: nothing will wait for it to end.
        if (held && this.opts.signal?.aborted) queueMicrotask(() => gate.stopWaiting?.());
      },
      // An endpoint that flaps pauses and resumes often: one line per kind of event per window.
      log: (line, resumed) => (resumed ? pauses.write('info', 'intake resumed', line) : pauses.write('warn', 'intake paused', line)),
      progress: () => this.progress(),
    });
    // Stopping during an outage: the records waiting for it give up now (uncommitted) instead
    // of at the maximum outage.
    this.opts.signal?.addEventListener('abort', () => {
      this.pause?.wake();
      if (this.pause?.held) gate.stopWaiting?.();
    }, { once: true });
  }

  private async commit(w: RangeWriter): Promise<void> {
    if (w.state === 'dropped') return;
    const t0 = performance.now();
    const outcome = await commitRange(w, this.commitDeps);
    this.writers.delete(w.plan.id);
    countRange(this.counters, outcome, w.plan.items);
    this.opts.onRangeDone?.({ outcome, records: w.plan.items, seconds: (performance.now() - t0) / 1000 });
    this.window.release(w.plan.items);
    this.progress();
  }

  /** What a streaming source may ask of the stage while it runs. */
  private control(): UnitControl {
    return {
      closeUnit: (token) => this.planner.closeUnitNow(token),
      dropUnit: (token) => this.dropUnit(token),
    };
  }

  private dropUnit(token: string): number {
    let n = 0;
    for (const w of [...this.writers.values()]) {
      if (w.plan.unitToken !== token || !w.drop()) continue;
      this.writers.delete(w.plan.id);
      this.window.release(w.done); // the ones still in flight release as they finish
      n += w.plan.items;
    }
    this.planner.closeUnitNow(token); // its open range, if any, was dropped above
    this.generations.set(token, (this.generations.get(token) ?? 0) + 1);
    this.counters.dropped_revoked += n;
    return n;
  }

  // Interleaved units (Kafka partitions) can fill the window with open ranges that never fill
  // up: close the largest one early rather than wait forever.
  private breakStall(): void {
    let largest: RangeWriter | undefined;
    for (const w of this.writers.values()) {
      if (w.plan.closed) return; // a closed range will commit and free slots
      if (!largest || w.plan.items > largest.plan.items) largest = w;
    }
    if (largest) this.planner.closeUnitNow(largest.plan.unitToken);
  }
}

export function runStage(opts: StageOptions): Promise<StageCounters> {
  return new Stage(opts).run();
}
