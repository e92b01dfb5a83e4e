/**
 * Limit layer: every attempt waits for a slot of its endpoint's limiter (src/llm/limits.ts), so a
 * call waiting out a backoff holds no slot. The attempt's clock starts when the slot is granted,
 * and the call's `onQueue` hook hears when the attempt enters and leaves our queue, so deadlines
 * (the Phase 1 ceiling) and latencies can leave out time spent waiting on ourselves.
 */
import type { Limiter } from '../limits.js';
import type { AttemptLayer } from '../model.js';

export function limitLayer(limiter: Limiter): AttemptLayer {
  return (next) => (req, a) => {
    const onQueue = a.call.onQueue;
    let waiting = true;
    const leave = () => {
      if (!waiting) return;
      waiting = false;
      onQueue?.(false);
    };
    onQueue?.(true);
    const run = limiter.run(() => {
      leave();
      a.onStart?.();
      return next(req, a);
    }, a.signal);
    // Given up while queued (aborted, limiter closed): the wait is over all the same.
    if (onQueue) run.catch(leave);
    return run;
  };
}
