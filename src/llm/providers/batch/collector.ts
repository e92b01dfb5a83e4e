/**
 * A batch collector: request lines wait here until they make a batch. A batch is cut when it
 * holds `max_requests` lines, when the next line would push its file past `max_bytes`, or when
 * no line has joined it for `quiet_ms` (then whatever is there goes, so no call waits on a
 * batch nobody adds to). One collector per model of an endpoint: a batch names one model.
 */

export interface CollectorLimits {
  maxRequests: number;
  maxBytes: number;
  quietMs: number;
}

export interface PendingLine {
  key: string;
  line: string;
  bytes: number;
}

export class Collector {
  private lines: PendingLine[] = [];
  private bytes = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly limits: CollectorLimits,
    /** handed each batch as it is cut */
    private readonly cut: (lines: PendingLine[]) => void,
  ) {}

  get size(): number {
    return this.lines.length;
  }

  add(key: string, line: string): void {
    const bytes = Buffer.byteLength(line);
    if (this.lines.length > 0 && this.bytes + bytes > this.limits.maxBytes) this.flush();
    this.lines.push({ key, line, bytes });
    this.bytes += bytes;
    if (this.lines.length >= this.limits.maxRequests || this.bytes >= this.limits.maxBytes) this.flush();
    else this.arm();
  }

  /** Drops a line not cut yet (its only caller gave up); true when it was still here. */
  remove(key: string): boolean {
    const i = this.lines.findIndex((l) => l.key === key);
    if (i < 0) return false;
    this.bytes -= this.lines[i]!.bytes;
    this.lines.splice(i, 1);
    if (this.lines.length === 0) this.disarm();
    return true;
  }

  /** Cuts whatever is waiting now. */
  flush(): void {
    this.disarm();
    if (this.lines.length === 0) return;
    const lines = this.lines;
    this.lines = [];
    this.bytes = 0;
    this.cut(lines);
  }

  /** Forgets what is waiting, cutting nothing (the run is closing). */
  close(): PendingLine[] {
    this.disarm();
    const left = this.lines;
    this.lines = [];
    this.bytes = 0;
    return left;
  }

  private arm(): void {
    this.disarm();
    this.timer = setTimeout(() => this.flush(), this.limits.quietMs);
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
