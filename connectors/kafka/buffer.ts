/**
 * The bounded buffer between the Kafka fetch loop and the stage. It only counts; the source
 * decides to pause fetching when it is `full` and to resume once it is `drained` (half).
 *
 * One queue per partition, taken from in turn: a fetch hands over whole batches of every
 * partition one after another, and a single FIFO would give the stage one partition's whole
 * batch (hundreds of records) before the next partition's first record. Taking round-robin
 * interleaves the partitions from the start; within a partition, offset order is kept.
 */
import type { InMessage } from './port.js';

export interface Buffered<P> {
  part: P;
  msg: InMessage;
  /** value + key + a fixed overhead: what the buffer is charged for */
  bytes: number;
}

/** A FIFO that hands back its slots now and then instead of growing with everything queued. */
class Fifo<T> {
  private items: Array<T | undefined> = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined; // let it go
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

interface Slot<P> {
  part: P;
  queue: Fifo<Buffered<P>>;
}

export class MessageBuffer<P> {
  /** partitions with something queued, in the order they are served */
  private ring: Array<Slot<P>> = [];
  private readonly slots = new Map<P, Slot<P>>();
  private cursor = 0;
  private count = 0;
  private totalBytes = 0;
  /** high-water marks, for stats and tests */
  maxSize = 0;
  maxBytes = 0;

  constructor(private readonly limits: { messages: number; bytes: number }) {}

  get size(): number {
    return this.count;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  get full(): boolean {
    return this.count >= this.limits.messages || this.totalBytes >= this.limits.bytes;
  }

  get drained(): boolean {
    return this.count <= this.limits.messages / 2 && this.totalBytes <= this.limits.bytes / 2;
  }

  push(part: P, msg: InMessage): void {
    const bytes = (msg.value?.byteLength ?? 0) + (msg.key?.byteLength ?? 0) + 64;
    let slot = this.slots.get(part);
    if (!slot) {
      slot = { part, queue: new Fifo() };
      this.slots.set(part, slot);
      // Joins the turn just before the cursor: served after every partition already waiting.
      this.ring.splice(this.cursor, 0, slot);
      this.cursor = (this.cursor + 1) % this.ring.length;
    }
    slot.queue.push({ part, msg, bytes });
    this.count++;
    this.totalBytes += bytes;
    this.maxSize = Math.max(this.maxSize, this.count);
    this.maxBytes = Math.max(this.maxBytes, this.totalBytes);
  }

  /** The next message of the partition whose turn it is. */
  shift(): Buffered<P> | undefined {
    if (this.ring.length === 0) return undefined;
    if (this.cursor >= this.ring.length) this.cursor = 0;
    const slot = this.ring[this.cursor]!;
    const e = slot.queue.shift()!;
    if (slot.queue.length === 0) {
      this.ring.splice(this.cursor, 1); // the next one moves into the cursor
      this.slots.delete(slot.part);
    } else this.cursor = (this.cursor + 1) % this.ring.length;
    this.count--;
    this.totalBytes -= e.bytes;
    return e;
  }

  /** Drops every entry of `part`; returns how many. */
  removePart(part: P): number {
    const slot = this.slots.get(part);
    if (!slot) return 0;
    this.slots.delete(part);
    const at = this.ring.indexOf(slot);
    this.ring.splice(at, 1);
    if (at < this.cursor) this.cursor--;
    let removed = 0;
    for (let e = slot.queue.shift(); e; e = slot.queue.shift()) {
      this.totalBytes -= e.bytes;
      removed++;
    }
    this.count -= removed;
    return removed;
  }
}
