/**
 * Health layer, just inside the retry layer: every attempt passes its endpoint's breaker
 * (src/llm/health.ts). While the endpoint is down the attempt waits here, outside the limiter,
 * and goes again once it is back, so an outage uses up neither the call's retries nor its
 * juror. A lone outage failure below the threshold is thrown to the retry loop as before.
 */
import type { EndpointBreaker } from '../health.js';
import type { AttemptLayer } from '../model.js';
import { outageKindOf } from '../outage.js';

export function healthLayer(breaker: EndpointBreaker): AttemptLayer {
  return (next) => async (req, a) => {
    // The audit line of an attempt the breaker will wait out says `retryable_error`.
    const willRetry = (err: unknown) => a.willRetry(err) || breaker.wouldAbsorb(outageKindOf(err));
    for (;;) {
      const ticket = await breaker.admit(a.signal);
      try {
        const c = await next(req, { ...a, willRetry });
        breaker.answered();
        return c;
      } catch (err) {
        const kind = outageKindOf(err);
        if (a.signal.aborted) {
          breaker.abandoned(ticket);
          throw err;
        }
        if (kind === null) {
          breaker.answered();
          throw err;
        }
        if (breaker.failed(ticket, kind, (err as Error).message, !a.willRetry(err)) === 'throw') throw err;
      }
    }
  };
}
