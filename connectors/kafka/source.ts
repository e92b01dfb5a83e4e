/**
 * Kafka topics as a Source for the stage, in a consumer group.
 *
 * Flow: the client's fetch loop hands batches to `onBatch`, which queues messages in a bounded
 * buffer; the stage pulls them one by one, the partitions in turn (./buffer.ts), so every
 * assigned partition is read from the start. When the buffer is full, fetching is paused for
 * every assigned partition, and resumed once the buffer has drained to half, however it drained
 * (taken by the stage, or emptied by a revocation or a reset). Pause state is stated for the
 * whole assignment on every change and every assignment (`applyFetchState`): the client keeps
 * it per partition across assignments, so nothing is left to what it remembers. A watchdog
 * (./fetch-watchdog.ts) reports and resumes a partition that should be fetched and is not.
 *
 * Offsets: a partition's commit point is the first offset not yet in committed shards
 * (CoveredOffsets). It moves when the stage reports a range durable (`rangeDone`), when a
 * manifest left by an earlier owner is found, or over offsets that hold no visible message.
 * The stage then pulls `safeOffsets` and hands them to `acknowledge`, which commits them to
 * the group, so the group's offset is never ahead of the shards.
 *
 * Rebalances: a revoked partition's buffered messages are discarded and its uncommitted ranges
 * dropped from the stage (UnitControl.dropUnit); the new owner re-reads them from the
 * committed offset and rebuilds ranges of the same names. Before a range is written, the stage
 * asks for `clearance` (./clearance.ts), which waits out a rebalance in progress. A newly assigned
 * partition first lists the manifests at or after its committed offset: ranges an earlier
 * owner wrote but did not acknowledge are skipped message by message.
 */
import type { ObjectStore } from '../../src/pipeline/storage/object-store.js';
import { logger, type Logger } from '../../src/util/log.js';
import {
  DEFAULT_MAX_RAW_TEXT_BYTES,
  type Clearance,
  type RangeClaim,
  type RangeReport,
  type SafeOffset,
  type Source,
  type SourceItem,
  type SourceLag,
  type SourceProgress,
  type StreamingSource,
  type UnitControl,
} from '../../src/pipeline/source.js';
import { MessageBuffer, type Buffered } from './buffer.js';
import { FetchWatchdog } from './fetch-watchdog.js';
import { kafkaClearance, type PartitionOwner } from './clearance.js';
import { committedRangesFrom } from './manifests.js';
import { drainState, intake, newPart, startAt, unitOf, type Part } from './partition.js';
import type { InBatch, InMessage, KafkaConsumerPort, TopicPartition } from './port.js';
import { messageItem } from './records.js';

export interface KafkaSourceOptions {
  consumer: KafkaConsumerPort;
  topics: string[];
  /** the output store: manifests there tell what an earlier owner already committed */
  store: ObjectStore;
  maxBufferedMessages: number;
  maxBufferedBytes: number;
  /** close an idle, caught-up partition's open range after this long; 0 = never */
  flushIdleMs: number;
  maxMessageBytes: number;
  /** end the stream once every assigned partition is caught up and quiet for `quietMs` */
  untilCaughtUp?: boolean;
  quietMs?: number;
  /** longest wait for a rebalance to settle before a write is refused */
  rebalanceWaitMs?: number;
  /** longest `close` waits for the client to leave the group (default 30 s) */
  stopTimeoutMs?: number;
  maxRawTextBytes?: number;
  signal?: AbortSignal;
  /** where the source's own events go (assignments, revocations, deferred commits) */
  log?: Logger;
  /**
   * A range found committed by an earlier owner: its parts are published (moved out of
   * `_staging/`) if that owner stopped between its manifest and its publish. Given by the
   * composition layer, which owns the commit protocol.
   */
  publishCommitted?: (manifestKey: string) => Promise<void>;
  /** an assigned partition with records to read and no fetch for this long is reported and resumed */
  fetchStallMs?: number;
}

export interface KafkaSourceStats {
  pauses: number;
  paused: boolean;
  /** holds by the stage (endpoint outages), and whether one is on */
  holds: number;
  held: boolean;
  buffered: number;
  bufferedBytes: number;
  maxBuffered: number;
  maxBufferedBytes: number;
  skippedCommitted: number;
  offsetCommits: number;
  revocations: number;
  resets: number;
  /** partitions the fetch watchdog found stuck and resumed */
  stalls: number;
}

const defaultLog = logger('kafka');

export class KafkaSource implements Source, StreamingSource, PartitionOwner {
  readonly name: string;
  /** the stage's hooks: clearance before a range is written, outcome after, safe offsets */
  readonly streaming: StreamingSource = this;
  private readonly parts = new Map<string, Part>();
  private readonly buffer: MessageBuffer<Part>;
  /** the buffer filled up: fetching stays paused until it has drained to half */
  private paused = false;
  /** the stage holds intake (an endpoint is down): fetching stays paused whatever the buffer */
  private held = false;
  private rebalancing = false;
  private assignedOnce = false;
  private settled: Array<() => void> = [];
  private waiter: (() => void) | null = null;
  private crash: Error | null = null;
  private ended = false;
  private closed = false;
  private ctl: UnitControl | undefined;
  /** the partition state each refused range was decided against */
  private readonly refusedAgainst = new Map<string, Part | undefined>();
  private commitChain: Promise<void> = Promise.resolve();
  private lastActivity = Date.now();
  private lastCaughtUpCheck = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly watchdog: FetchWatchdog;
  private items = 0;
  private bytesRead = 0;
  private iterating = false;
  readonly stats: KafkaSourceStats = { pauses: 0, paused: false, holds: 0, held: false, buffered: 0, bufferedBytes: 0, maxBuffered: 0, maxBufferedBytes: 0, skippedCommitted: 0, offsetCommits: 0, revocations: 0, resets: 0, stalls: 0 };

  constructor(private readonly opts: KafkaSourceOptions) {
    this.name = `kafka:${opts.topics.join(',')}`;
    this.buffer = new MessageBuffer({ messages: opts.maxBufferedMessages, bytes: opts.maxBufferedBytes });
    opts.signal?.addEventListener('abort', () => this.wake(), { once: true });
    this.watchdog = new FetchWatchdog({
      consumer: opts.consumer,
      topics: opts.topics,
      stallMs: opts.fetchStallMs ?? 30_000,
      parts: () => (this.fetching && !this.rebalancing && this.assignedOnce ? [...this.parts.values()] : []),
      still: (part) => this.parts.get(part.unit) === part && this.fetching && !this.rebalancing,
      onStuck: (n) => (this.stats.stalls += n),
      log: () => this.log,
    });
  }

  private get log(): Logger {
    return this.opts.log ?? defaultLog;
  }

  /** Joins the group and starts fetching. */
  async start(): Promise<void> {
    await this.opts.consumer.start({
      onBatch: (b) => this.onBatch(b),
      onRebalancing: () => {
        this.rebalancing = true;
      },
      onAssigned: (tps) => this.onAssigned(tps),
      onCrash: (err) => {
        this.crash = new Error(`Kafka consumer stopped: ${err.message}`);
        this.wake();
      },
    });
    if (this.opts.flushIdleMs > 0) {
      this.timer = setInterval(() => this.flushIdle(), Math.max(50, Math.floor(this.opts.flushIdleMs / 2)));
      this.timer.unref();
    }
    this.watchdog.start();
  }

  /** How the stage lets the source close or drop a partition's ranges. */
  attach(ctl: UnitControl): void {
    this.ctl = ctl;
  }

  // ---- fetch side --------------------------------------------------------------------------

  private async onBatch(b: InBatch): Promise<void> {
    const part = this.parts.get(unitOf(b));
    if (!part || this.ended) return;
    if (!part.covered) {
      // Ranges committed at or after the start by an earlier owner count as done.
      const found = await committedRangesFrom(this.opts.store, part.unit, b.fetchedOffset);
      if (this.parts.get(part.unit) !== part) return; // revoked meanwhile: not ours to read
      if (!part.covered) startAt(part, b.fetchedOffset, found);
      if (found.length) {
        this.log.info(`${part.unit}: ${found.length} range(s) from ${b.fetchedOffset} already committed by an earlier owner; skipping them`, { unit: part.unit });
        await this.publishFound(part, found);
      }
    }
    const { fresh, committed } = intake(part, b);
    this.stats.skippedCommitted += committed;
    for (const m of fresh) this.buffer.push(part, m);
    part.buffered += fresh.length;
    this.lastActivity = Date.now();
    this.noteBuffer();
    if (!this.paused && this.buffer.full) {
      this.paused = true;
      this.stats.pauses++;
      this.applyFetchState();
    }
    if (part.covered!.next > part.committed) void this.commitOffsets();
    this.wake();
  }

  /**
   * Ranges an earlier owner committed: published here in case it stopped between its manifest
   * and its publish, before our offsets move past them (they would stay staged for good).
   */
  private async publishFound(part: Part, found: ReadonlyArray<{ key: string }>): Promise<void> {
    const publish = this.opts.publishCommitted;
    if (!publish) return;
    for (const r of found) {
      await publish(r.key).catch((err: Error) => this.log.error(`${part.unit}: could not publish the parts of committed range ${r.key}: ${err.message}; the next run's start or \`shards verify\` publishes them`, { unit: part.unit }));
    }
  }

  private onAssigned(tps: TopicPartition[]): void {
    const next = new Set(tps.map(unitOf));
    const revoked: TopicPartition[] = [];
    for (const part of [...this.parts.values()]) {
      if (next.has(part.unit)) continue;
      this.revoke(part, 'revoked');
      revoked.push(part.tp);
    }
    // The client keeps a revoked partition's pause: assigned again later, it would never be read.
    if (revoked.length) this.opts.consumer.resume(revoked);
    for (const tp of tps) if (!this.parts.has(unitOf(tp))) this.parts.set(unitOf(tp), newPart(tp));
    this.rebalancing = false;
    this.assignedOnce = true;
    this.resumeIfDrained();
    // Every partition of the new assignment gets its state stated, paused or not.
    this.applyFetchState();
    for (const s of this.settled.splice(0)) s();
    this.log.info(`assigned ${tps.length ? tps.map(unitOf).join(', ') : 'no partitions'}`);
    void this.commitOffsets();
    this.wake();
  }

  /** Forget a partition: its buffered messages go, its unwritten ranges are dropped. */
  private revoke(part: Part, why: 'revoked' | 'reset'): void {
    this.parts.delete(part.unit);
    if (part.buffered > 0) {
      this.buffer.removePart(part);
      part.buffered = 0;
      this.noteBuffer();
    }
    part.held.clear();
    const dropped = this.ctl?.dropUnit(part.unit) ?? 0;
    this.watchdog.forget(part);
    if (why === 'revoked') this.stats.revocations++;
    this.log.info(`${part.unit} ${why}: ${dropped} uncommitted record(s) dropped; they are re-read from offset ${part.covered?.next ?? '(committed)'}`, { unit: part.unit });
  }

  private assigned(): TopicPartition[] {
    return [...this.parts.values()].map((p) => p.tp);
  }

  private size(): number {
    return this.buffer.size;
  }

  private noteBuffer(): void {
    this.stats.buffered = this.buffer.size;
    this.stats.bufferedBytes = this.buffer.bytes;
    this.stats.maxBuffered = this.buffer.maxSize;
    this.stats.maxBufferedBytes = this.buffer.maxBytes;
  }

  /** Whether the assigned partitions should be fetched now. */
  private get fetching(): boolean {
    return !this.paused && !this.held && !this.ended;
  }

  /**
   * Pause or resume, as `fetching` says, stated for every assigned partition: the client
   * keeps pause state per partition, and a partition left to what it remembers can stay
   * paused with nothing left to resume it.
   */
  private applyFetchState(): void {
    const tps = this.assigned();
    this.stats.paused = this.paused;
    if (this.fetching) {
      this.watchdog.fetchingFrom(Date.now());
      this.opts.consumer.resume(tps);
    } else this.opts.consumer.pause(tps);
  }

  /** The buffer drained to half, by whatever path (taken, revoked, reset): fetching goes on. */
  private resumeIfDrained(): void {
    if (!this.paused || !this.buffer.drained) return;
    this.paused = false;
    this.applyFetchState();
  }

  /**
   * The stage stopped pulling (an endpoint is down) or goes on: every assigned partition is
   * paused meanwhile. The client keeps heartbeating while partitions are paused, so the group
   * keeps its assignment however long the outage lasts.
   */
  hold(held: boolean): void {
    if (held === this.held) return;
    this.held = held;
    this.stats.held = held;
    if (held) this.stats.holds++;
    this.applyFetchState();
    if (held) this.log.info(`partitions paused while the stage waits for an endpoint: ${this.assigned().map(unitOf).join(', ') || 'none assigned'}`);
    else if (this.paused || this.ended) this.log.info('the stage goes on: partitions resume once the buffer has drained');
    else this.log.info('the stage goes on: partitions resumed');
  }

  /** A partition caught up and quiet for flushIdleMs gets its partial range committed. */
  private flushIdle(): void {
    if (this.ended || this.rebalancing || !this.ctl) return;
    const now = Date.now();
    for (const part of this.parts.values()) {
      if (!part.dirty || part.buffered > 0 || now - part.lastBatchAt < this.opts.flushIdleMs) continue;
      if (part.highWatermark >= 0 && part.expected < part.highWatermark) continue;
      part.dirty = false;
      this.ctl.closeUnit(part.unit);
    }
  }

  // ---- stage side --------------------------------------------------------------------------

  [Symbol.asyncIterator](): AsyncIterator<SourceItem> {
    if (this.iterating) throw new Error(`${this.name}: a source can be iterated only once`);
    this.iterating = true;
    return { next: () => this.next(), return: async () => this.end() };
  }

  private async next(): Promise<IteratorResult<SourceItem>> {
    for (;;) {
      if (this.crash) throw this.crash;
      if (this.closed || this.opts.signal?.aborted) return this.end();
      const e = this.take();
      if (e) return { done: false, value: this.toItem(e) };
      if (this.opts.untilCaughtUp && (await this.caughtUp())) return this.end();
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        setTimeout(resolve, 200).unref();
      });
      this.waiter = null;
    }
  }

  private wake(): void {
    this.waiter?.();
  }

  private take(): Buffered<Part> | undefined {
    for (let e = this.buffer.shift(); e; e = this.buffer.shift()) {
      e.part.buffered--;
      this.resumeIfDrained();
      if (this.parts.get(e.part.unit) !== e.part) continue; // revoked while queued
      this.noteBuffer();
      return e;
    }
    this.noteBuffer();
    return undefined;
  }

  private toItem(e: Buffered<Part>): SourceItem {
    const { part, msg } = e;
    this.items++;
    this.bytesRead += msg.value?.byteLength ?? 0;
    part.dirty = true;
    // Kept for the dead-letter topic until the range commits. A copy: the client's buffers are
    // views into whole fetch responses, which one held view would keep alive.
    part.held.set(msg.offset, { ...msg, key: msg.key && Buffer.from(msg.key), value: msg.value && Buffer.from(msg.value) });
    return messageItem(part.tp, msg, { maxMessageBytes: this.opts.maxMessageBytes, maxRawTextBytes: this.opts.maxRawTextBytes ?? DEFAULT_MAX_RAW_TEXT_BYTES });
  }

  /** Stops handing out messages; fetching is paused so nothing piles up while the stage drains. */
  private end(): IteratorResult<SourceItem> {
    if (!this.ended) {
      this.ended = true;
      clearInterval(this.timer);
      this.watchdog.stop();
      this.applyFetchState();
    }
    return { done: true, value: undefined };
  }

  /**
   * True once the whole group is drained: our partitions read up to their log end, and every
   * other partition of the topics committed up to its log end by its owner. Waiting for the
   * others keeps an instance from leaving while a rebalance could still hand it unread data;
   * our own partial ranges are flushed meanwhile so the others can see us finish too.
   */
  private async caughtUp(): Promise<boolean> {
    const quiet = this.opts.quietMs ?? 1000;
    if (!this.assignedOnce || this.rebalancing || this.size() > 0 || Date.now() - this.lastActivity < quiet) return false;
    if (Date.now() - this.lastCaughtUpCheck < quiet) return false;
    this.lastCaughtUpCheck = Date.now();
    const state = drainState(this.parts, await this.opts.consumer.offsets(this.opts.topics));
    if (state === 'reading') return false;
    if (state === 'others') {
      for (const part of this.parts.values()) {
        if (!part.dirty) continue;
        part.dirty = false;
        this.ctl?.closeUnit(part.unit);
      }
      return false;
    }
    return !this.rebalancing && this.size() === 0;
  }

  // ---- commit side -------------------------------------------------------------------------

  /** Asked before a range is written: false once the partition is no longer ours. */
  async mayWrite(unit: string): Promise<boolean> {
    if (this.rebalancing) {
      await new Promise<void>((resolve) => {
        this.settled.push(resolve);
        setTimeout(resolve, this.opts.rebalanceWaitMs ?? 60_000).unref();
      });
    }
    return !this.rebalancing && this.parts.has(unit) && !this.crash;
  }

  /** Lowest offset a manifest overlapping a new range of `unit` could start at. */
  floor(unit: string): number {
    return this.parts.get(unit)?.covered?.next ?? 0;
  }

  async clearance(claim: RangeClaim): Promise<Clearance> {
    const c = await kafkaClearance(this.opts.store, this, claim);
    // Remember which assignment of the partition refused it: only that one is re-read.
    if (!c.write) this.refusedAgainst.set(`${claim.unit}:${claim.firstOffset}-${claim.lastOffset}`, this.parts.get(claim.unit));
    return c;
  }

  /** The stage's word on a range: durable (or found committed), or left unwritten. */
  rangeDone(range: RangeReport): void {
    const key = `${range.unit}:${range.firstOffset}-${range.lastOffset}`;
    const refusedAgainst = this.refusedAgainst.get(key);
    this.refusedAgainst.delete(key);
    const part = this.parts.get(range.unit);
    if (!part?.covered) return;
    if (range.outcome === 'skipped' || range.outcome === 'conflicted') {
      // Not written, yet the partition is still ours (the same assignment, not a later one):
      // read it again from its commit point.
      if (refusedAgainst === part) this.reset(part);
      return;
    }
    part.covered.add(range.firstOffset, range.lastOffset);
    for (const off of part.held.keys()) if (off >= range.firstOffset && off <= range.lastOffset) part.held.delete(off);
  }

  /** Each partition whose commit point moved past what the group has: safe to commit now. */
  safeOffsets(): SafeOffset[] {
    return [...this.parts.values()].filter((p) => p.covered && p.covered.next > p.committed).map((p) => ({ unit: p.unit, next: p.covered!.next }));
  }

  /**
   * Another writer committed a range overlapping ours (a race with a former owner): drop what
   * we hold for the partition and read it again from the commit point, skipping its ranges.
   */
  private reset(part: Part): void {
    const from = part.covered?.next ?? 0;
    this.stats.resets++;
    this.revoke(part, 'reset');
    this.parts.set(part.unit, newPart(part.tp));
    this.opts.consumer.seek(part.tp, from);
    // The reset may have emptied the buffer while fetching was paused for it.
    this.resumeIfDrained();
  }

  /** The original message behind a dead letter, while its range is being committed. */
  original(unit: string, offset: number): InMessage | undefined {
    return this.parts.get(unit)?.held.get(offset);
  }

  /** Commits the given commit points to the group; serialized, failures retried later. */
  acknowledge(offsets: SafeOffset[]): Promise<void> {
    this.commitChain = this.commitChain.then(async () => {
      if (this.rebalancing) return;
      // Decided when this commit's turn comes: a partition may have moved or been committed since.
      const due = offsets.flatMap((o) => {
        const p = this.parts.get(o.unit);
        return p && o.next > p.committed ? [{ p, offset: o.next }] : [];
      });
      if (due.length === 0) return;
      try {
        await this.opts.consumer.commit(due.map(({ p, offset }) => ({ ...p.tp, offset })));
        this.stats.offsetCommits++;
        for (const { p, offset } of due) p.committed = Math.max(p.committed, offset);
      } catch (err) {
        // Typically a rebalance: the offsets are committed again after the next assignment.
        this.log.warn(`offset commit deferred: ${(err as Error).message}`);
      }
    });
    return this.commitChain;
  }

  /** Commits every partition's commit point that moved (offsets over gaps, earlier owners' ranges). */
  private commitOffsets(): Promise<void> {
    return this.acknowledge(this.safeOffsets());
  }

  progress(): SourceProgress {
    return { items: this.items, bytesRead: this.bytesRead };
  }

  /** In the group with an assignment (possibly empty), and the consumer has not stopped. */
  connected(): boolean {
    return this.assignedOnce && !this.crash && !this.closed;
  }

  /**
   * Per assigned partition: log end offset minus the group's committed offset, i.e. what is not
   * yet in committed shards (the lag `kafka-consumer-groups` and KEDA see). The log end is the
   * one the last fetch reported, so while fetching is paused it is a lower bound; reading it so
   * costs no broker round trip and cannot hang a scrape during a broker outage.
   */
  lag(): SourceLag[] {
    const out: SourceLag[] = [];
    for (const p of this.parts.values()) {
      if (p.highWatermark < 0 || p.committed < 0) continue; // nothing fetched yet: unknown
      out.push({ unit: p.unit, lag: Math.max(0, p.highWatermark - p.committed) });
    }
    return out;
  }

  /** Commits what is due, leaves the group and disconnects. Call after the stage finished. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.end();
    for (let i = 0; i < 3 && [...this.parts.values()].some((p) => p.covered && p.covered.next > p.committed); i++) {
      if (this.rebalancing) await new Promise((r) => setTimeout(r, 500));
      await this.commitOffsets();
    }
    // The client may never finish leaving (kafkajs can wait for ever on a request the broker
    // drops while the member leaves: a run stopped by SIGTERM as the group churned hung so).
    // Offsets are committed above and the group drops the member after its session timeout,
    // so a bounded wait loses nothing and the process ends.
    const boundMs = this.opts.stopTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const left = await Promise.race([
      this.opts.consumer.stop().then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), boundMs);
      }),
    ]);
    clearTimeout(timer);
    if (!left) this.log.warn(`the Kafka consumer did not finish leaving the group within ${Math.round(boundMs / 1000)} s; going on without it (offsets are committed; the group drops this member after its session timeout)`);
  }
}
