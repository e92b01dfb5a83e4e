/**
 * A first-come, first-served turn on the one model: llama.cpp evaluates a context sequence one
 * request at a time, and running several at once on a small CPU only makes each slower.
 * A caller whose signal aborts while waiting leaves the line without ever running.
 */
export class TurnQueue {
  private busy = false;
  private readonly waiting: Array<{ start: () => void; cancel: (reason: unknown) => void }> = [];
  private closedReason: Error | null = null;
  private readonly idleWaiters: Array<() => void> = [];

  /** How many callers wait behind the running one. */
  get depth(): number {
    return this.waiting.length;
  }

  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  /** Rejects every waiter; the running turn finishes on its own (its signal stops it). */
  close(reason: Error): void {
    this.closedReason = reason;
    for (const w of this.waiting.splice(0)) w.cancel(reason);
  }

  /** Resolves once no turn is running (after close(), once the last one has finished). */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    if (this.closedReason) return Promise.reject(this.closedReason);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal!.reason);
      };
      const entry = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        cancel: (reason: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          reject(reason);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next.start(); // the turn passes straight on: busy stays true
    else {
      this.busy = false;
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }
}
