/**
 * Adds up the time a call's attempts wait for a slot in our own limiter, from the limit layer's
 * `onQueue(true/false)` news (src/llm/layers/limit.ts). Latencies and the Phase 1 ceiling leave
 * this time out: it is ours, not the endpoint's.
 */
export interface QueueClock {
  /** pass as the call's onQueue hook */
  onQueue(waiting: boolean): void;
  /** ms waited so far, the current wait included */
  ms(): number;
}

export function queueClock(now: () => number = Date.now, forward?: (waiting: boolean) => void): QueueClock {
  let total = 0;
  let since: number | null = null;
  return {
    onQueue(waiting) {
      if (waiting && since === null) since = now();
      else if (!waiting && since !== null) {
        total += now() - since;
        since = null;
      }
      forward?.(waiting);
    },
    ms: () => total + (since === null ? 0 : now() - since),
  };
}
