/**
 * Limit layer: every attempt waits for a slot of its endpoint's limiter (src/llm/limits.ts), so a
 * call waiting out a backoff holds no slot. The attempt's clock starts when the slot is granted.
 */
import type { Limiter } from '../limits.js';
import type { AttemptLayer } from '../model.js';

export function limitLayer(limiter: Limiter): AttemptLayer {
  return (next) => (req, a) =>
    limiter.run(() => {
      a.onStart?.();
      return next(req, a);
    }, a.signal);
}
