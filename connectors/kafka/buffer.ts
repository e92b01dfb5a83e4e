/**
 * The bounded queue between the Kafka fetch loop and the stage. It only counts; the source
 * decides to pause fetching when it is `full` and to resume once it is `drained` (half).
 */
import type { InMessage } from './port.js';

export interface Buffered<P> {
  part: P;
  msg: InMessage;
  /** value + key + a fixed overhead: what the buffer is charged for */
  bytes: number;
}

export class MessageBuffer<P> {
  private queue: Array<Buffered<P> | undefined> = [];
  private head = 0;
  private totalBytes = 0;
  /** high-water marks, for stats and tests */
  maxSize = 0;
  maxBytes = 0;

  constructor(private readonly limits: { messages: number; bytes: number }) {}

  get size(): number {
    return this.queue.length - this.head;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  get full(): boolean {
    return this.size >= this.limits.messages || this.totalBytes >= this.limits.bytes;
  }

  get drained(): boolean {
    return this.size <= this.limits.messages / 2 && this.totalBytes <= this.limits.bytes / 2;
  }

  push(part: P, msg: InMessage): void {
    const bytes = (msg.value?.byteLength ?? 0) + (msg.key?.byteLength ?? 0) + 64;
    this.queue.push({ part, msg, bytes });
    this.totalBytes += bytes;
    this.maxSize = Math.max(this.maxSize, this.size);
    this.maxBytes = Math.max(this.maxBytes, this.totalBytes);
  }

  shift(): Buffered<P> | undefined {
    if (this.head >= this.queue.length) return undefined;
    const e = this.queue[this.head]!;
    this.queue[this.head++] = undefined; // let it go
    // Compact now and then so the array does not grow with everything ever queued.
    if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.totalBytes -= e.bytes;
    return e;
  }

  /** Drops every entry of `part`; returns how many. */
  removePart(part: P): number {
    const keep: Array<Buffered<P>> = [];
    let removed = 0;
    for (let i = this.head; i < this.queue.length; i++) {
      const e = this.queue[i]!;
      if (e.part === part) {
        this.totalBytes -= e.bytes;
        removed++;
      } else keep.push(e);
    }
    this.queue = keep;
    this.head = 0;
    return removed;
  }
}
