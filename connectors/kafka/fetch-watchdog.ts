/**
 * The safety net under the source's pause bookkeeping: a partition that should be fetched (not
 * paused for a full buffer, an endpoint outage or the end of the run), has records to read, and
 * got no batch for `stallMs` is stuck. It is reported in one line and recovered: resumed and,
 * once its position is known, sought to it again.
 *
 * An idle partition gets no batches at all (the client delivers none that are empty), so "has
 * records to read" is asked of the broker: the log end against the partition's position. The
 * question is asked only for partitions already quiet for `stallMs`.
 */
import type { Logger } from '../../src/util/log.js';
import { unitOf, type Part } from './partition.js';
import type { KafkaConsumerPort, PartitionOffsets } from './port.js';

export interface FetchWatchdogOptions {
  consumer: Pick<KafkaConsumerPort, 'offsets' | 'resume' | 'seek'>;
  topics: string[];
  stallMs: number;
  /** the partitions that should be fetching now (none while paused or rebalancing) */
  parts(): Part[];
  /** still assigned, as the same partition state, and still to be fetched */
  still(part: Part): boolean;
  onStuck(count: number): void;
  log(): Logger;
}

export class FetchWatchdog {
  private timer: NodeJS.Timeout | undefined;
  /** when fetching last went on: a partition paused until then was not expected to get batches */
  private since = Date.now();
  private busy = false;
  /** when each partition was last found stuck, so one stall is reported once per stallMs */
  private readonly reported = new WeakMap<Part, number>();

  constructor(private readonly opts: FetchWatchdogOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.check(), Math.max(1000, Math.floor(this.opts.stallMs / 3)));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  fetchingFrom(now: number): void {
    this.since = now;
  }

  forget(part: Part): void {
    this.reported.delete(part);
  }

  /** One round: the quiet partitions, then the broker's word on which of them have records to read. */
  async check(now = Date.now()): Promise<Part[]> {
    if (this.busy) return [];
    const quietFor = (p: Part) => now - Math.max(p.lastBatchAt, this.since, this.reported.get(p) ?? 0);
    const quiet = this.opts.parts().filter((p) => quietFor(p) >= this.opts.stallMs);
    if (quiet.length === 0) return [];
    this.busy = true;
    try {
      const offsets = await this.opts.consumer.offsets(this.opts.topics);
      const stuck = quiet.filter((p) => this.opts.still(p) && behind(p, offsets));
      if (stuck.length) this.recover(stuck, offsets, now);
      return stuck;
    } catch (err) {
      this.opts.log().debug(`fetch watchdog: could not read offsets: ${(err as Error).message}`);
      return [];
    } finally {
      this.busy = false;
    }
  }

  private recover(stuck: Part[], offsets: readonly PartitionOffsets[], now: number): void {
    const what = stuck.map((p) => `${p.unit} (at ${position(p, offsets)}, log end ${find(p, offsets)?.high})`).join(', ');
    this.opts.log().warn(`assigned here with records to read but not fetched for ${Math.round(this.opts.stallMs / 1000)} s: ${what}; resuming fetching`);
    this.opts.consumer.resume(stuck.map((p) => p.tp));
    // A known position is asked for again, in case the client lost its own.
    for (const p of stuck) if (p.covered) this.opts.consumer.seek(p.tp, p.expected);
    for (const p of stuck) this.reported.set(p, now);
    this.opts.onStuck(stuck.length);
  }
}

const find = (p: Part, offsets: readonly PartitionOffsets[]) => offsets.find((o) => unitOf(o) === p.unit);

/** The next offset this partition needs: its own position once read, else the group's. */
function position(p: Part, offsets: readonly PartitionOffsets[]): number {
  if (p.covered) return p.expected;
  const o = find(p, offsets);
  return o ? Math.max(o.committed, o.low) : 0;
}

function behind(p: Part, offsets: readonly PartitionOffsets[]): boolean {
  const o = find(p, offsets);
  return o !== undefined && o.high > position(p, offsets);
}
