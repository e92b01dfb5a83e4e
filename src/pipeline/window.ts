/**
 * A counting gate on records held between being pulled from the source and being committed.
 * The stage takes a slot before pulling the next record and frees the range's slots after its
 * commit, so a slow juror or a slow sink stops the reading instead of filling memory.
 */
export class Window {
  private held = 0;
  private closed = false;
  private waiters: Array<() => void> = [];

  constructor(readonly size: number) {
    if (!(size >= 1)) throw new Error('window size must be at least 1');
  }

  get inUse(): number {
    return this.held;
  }

  /** Takes a slot; false when the window was closed (the stage is stopping) instead. */
  async acquire(): Promise<boolean> {
    while (this.held >= this.size && !this.closed) await new Promise<void>((resolve) => this.waiters.push(resolve));
    if (this.closed) return false;
    this.held += 1;
    return true;
  }

  /** No more slots: wakes every waiter with false. */
  close(): void {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w();
  }

  release(n = 1): void {
    this.held = Math.max(0, this.held - n);
    const wake = this.waiters.splice(0, n);
    for (const w of wake) w();
  }
}
