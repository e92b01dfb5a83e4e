/**
 * The stage: pull → intake (map + validate) → steps (segment → judge → derive → taxonomy) →
 * range writer + commit. The executor is this file; what happens to a record is the step list
 * (./steps/index.ts) and how a range becomes durable is ./range-writer.ts.
 *
 * Up to `concurrency` records run their steps at once and finish in any order. Each record
 * holds a window slot from the moment it is pulled until its range is committed, which bounds
 * memory and turns a slow jury or sink into slower reading. Every record pulled leaves as shard
 * rows or as a dead letter with its reason; nothing is dropped silently.
 */
import PQueue from 'p-queue';
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
import { Window } from './window.js';

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
  /** stop pulling new records; what is in flight still finishes and is committed */
  signal?: AbortSignal;
  /**
   * Holds intake while it says so (./intake-gate.ts `endpointGate`: an endpoint is down). A
   * record whose steps throw EndpointOutageError stops the stage: it is not committed, nor is
   * its range; ranges whose records are all judged still are; then run() rejects with it.
   */
  gate?: IntakeGate;
  log?: (line: string) => void;
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
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
  /** times intake paused because an endpoint was down, their total time (the current one included), and whether it is paused now */
  pauses: number;
  paused_ms: number;
  paused: boolean;
}

export function newCounters(): StageCounters {
  return { read: 0, skipped_committed: 0, in_flight: 0, judged: 0, clean: 0, degraded: 0, no_verdict: 0, dead_letters: 0, ranges_committed: 0, records_committed: 0, ranges_not_written: 0, records_not_written: 0, dropped_revoked: 0, tokens_in: 0, tokens_out: 0, cost_usd: 0, pauses: 0, paused_ms: 0, paused: false };
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
  c.tokens_in += row.tokens_in;
  c.tokens_out += row.tokens_out;
  c.cost_usd += row.cost_usd;
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

const stderrLine = (line: string) => process.stderr.write(line.endsWith('\n') ? line : `${line}\n`);

class Stage {
  readonly counters = newCounters();
  private readonly window: Window;
  private readonly judges: PQueue;
  private readonly writers = new Map<number, RangeWriter>();
  private readonly planner: RangePlanner;
  private readonly commitDeps: RangeCommitDeps;
  /** bumped when a unit is dropped: a record pulled before that must not start a range */
  private readonly generations = new Map<string, number>();
  private commitChain: Promise<void> = Promise.resolve();
  private fatal: unknown = null;
  /** an endpoint stayed down too long: stop pulling, commit only ranges already all judged */
  private halted: Error | null = null;
  /** settles when the stage halts: the pull loop must not wait for slots the halted records hold */
  private readonly haltedNow: Promise<void>;
  private onHalt: () => void = () => {};
  private pause: PauseTracker | null = null;

  constructor(private readonly opts: StageOptions) {
    this.window = new Window(opts.window ?? 2 * opts.range.maxRecords + opts.concurrency);
    this.judges = new PQueue({ concurrency: opts.concurrency });
    this.planner = new RangePlanner(opts.range, opts.committed, (r) => this.onClosed(r));
    const settings = { max_records: opts.range.maxRecords, max_chars: opts.range.maxChars, formats: [...opts.committer.formats] };
    this.commitDeps = { committer: opts.committer, source: opts.source, sinks: opts.sinks ?? [], settings, log: opts.log ?? stderrLine };
    this.haltedNow = new Promise<void>((resolve) => (this.onHalt = resolve));
  }

  async run(): Promise<StageCounters> {
    this.opts.source.streaming?.attach(this.control());
    this.startPauses();
    try {
      await this.pullAll();
      this.planner.closeAll();
      await this.judges.onIdle();
      // Every range is closed; the complete ones are committing: wait for the last commits.
      await this.commitChain;
    } finally {
      this.pause?.stop();
    }
    if (this.fatal) throw this.fatal;
    if (this.halted) throw this.halted;
    return this.counters;
  }

  private stopping(): boolean {
    return Boolean(this.opts.signal?.aborted || this.fatal || this.halted);
  }

  private async pullAll(): Promise<void> {
    const items = this.opts.source[Symbol.asyncIterator]();
    let ended = false;
    try {
      while (!this.stopping()) {
        // While an endpoint is down nothing is pulled: records wait in the source.
        while (this.pause?.held && !this.stopping()) await this.pause.whenOpen();
        if (this.stopping()) break;
        const next = await items.next();
        if (next.done) {
          ended = true;
          break;
        }
        await this.admit(next.value);
        // Keep the judging queue short: records wait in the source, not in memory.
        if (this.judges.size > 0) await Promise.race([this.judges.onSizeLessThan(1), this.haltedNow]);
      }
    } finally {
      if (!ended) await items.return?.();
    }
  }

  private startPauses(): void {
    const gate = this.opts.gate;
    if (!gate) return;
    const log = this.opts.log ?? stderrLine;
    this.pause = new PauseTracker(gate, this.counters, {
      hold: (held) => {
        this.opts.source.streaming?.hold?.(held);
        // Already stopping when the outage began: nothing will wait for it to end.
        if (held && this.opts.signal?.aborted) queueMicrotask(() => gate.stopWaiting?.());
      },
      log,
      progress: () => this.opts.onProgress?.(this.counters),
    });
    // Stopping during an outage: the records waiting for it give up now (uncommitted) instead
    // of at the maximum outage.
    this.opts.signal?.addEventListener('abort', () => {
      this.pause?.wake();
      if (this.pause?.held) gate.stopWaiting?.();
    }, { once: true });
  }

  /** A record met an endpoint down beyond the limit: it stays unjudged, and the stage stops. */
  private halt(err: Error): void {
    this.halted ??= err;
    this.judges.clear(); // records not started yet would only meet the same outage
    this.pause?.wake();
    this.onHalt();
  }

  private async admit(item: SourceItem): Promise<void> {
    const token = unitToken(item.position);
    const generation = this.generations.get(token) ?? 0;
    const { env, chars } = intake(item, this.opts.intake);
    if (this.window.inUse >= this.window.size) this.breakStall();
    // Take the slot before assigning, and assign and buffer with no await in between.
    await Promise.race([this.window.acquire(), this.haltedNow]);
    // Halted while waiting for a slot: the record stays in the source for the next run.
    if (this.halted) return;
    if ((this.generations.get(token) ?? 0) !== generation) {
      this.window.release(1);
      this.counters.dropped_revoked += 1;
      return;
    }
    const assigned = this.planner.assign(item.position.unit, token, item.position.offset, chars);
    if (assigned.skip) {
      this.window.release(1);
      this.counters.skipped_committed += 1;
      return;
    }
    this.counters.read += 1;
    const writer = this.writerFor(assigned.range, item.position.source);
    if (env.dead) return this.finish(writer, env);
    this.counters.in_flight += 1;
    void this.judges.add(async () => {
      let out: Envelope;
      try {
        out = await runSteps(this.opts.steps, env);
      } catch (err) {
        this.counters.in_flight -= 1;
        // Never finished: its range never completes, so neither it nor its range is committed.
        if (isEndpointOutage(err)) return this.halt(err);
        this.fatal ??= err;
        return;
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
    if (w.state === 'dropped') {
      this.window.release(1);
      return;
    }
    const complete = w.add(env);
    this.opts.onProgress?.(this.counters);
    if (complete) this.scheduleCommit(w);
  }

  // Commits run one at a time, in the order ranges complete.
  private scheduleCommit(w: RangeWriter): void {
    this.commitChain = this.commitChain
      .then(() => (this.fatal ? undefined : this.commit(w)))
      .catch((err) => {
        this.fatal ??= err;
      });
  }

  private async commit(w: RangeWriter): Promise<void> {
    if (w.state === 'dropped') return;
    const outcome = await commitRange(w, this.commitDeps);
    this.writers.delete(w.plan.id);
    countRange(this.counters, outcome, w.plan.items);
    this.window.release(w.plan.items);
    this.opts.onProgress?.(this.counters);
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
