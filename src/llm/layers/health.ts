/**
 * Health layer, just inside the retry layer: every attempt passes its endpoint's breaker
 * (src/llm/health.ts) and is classified by whose fault its failure is (src/llm/outage.ts).
 *
 * While the endpoint is down the attempt waits here, outside the limiter, spending nothing; a
 * failure that belongs to the outage (a failed trial, an attempt sent before it went down) waits
 * and goes again. Every other failure spends from its call's retries, a reset included, so a
 * call always ends. A failure for the endpoint's reasons never becomes the record's: a refused
 * key or unknown model stops the run at once, and a call whose every attempt the endpoint failed
 * (resets, 5xx, timeouts while others were answered) stops it too, the record uncommitted.
 */
import type { EndpointBreaker } from '../health.js';
import type { AttemptLayer, AttemptInfo } from '../model.js';
import { hardFaultOf, outageKindOf } from '../outage.js';
import { hardFault, unansweredCall, type FaultScene } from '../fault-message.js';

export function healthLayer(breaker: EndpointBreaker, scene: Omit<FaultScene, 'seat' | 'said'>): AttemptLayer {
  const sceneOf = (a: AttemptInfo, err: unknown): FaultScene => ({ ...scene, seat: a.call.seat, said: (err as Error).message });
  return (next) => async (req, a) => {
    for (;;) {
      const ticket = await breaker.admit(a.signal);
      // The audit line of an attempt the outage will absorb says `retryable_error`.
      const willRetry = (err: unknown) => a.willRetry(err) || (outageKindOf(err) !== null && breaker.absorbs(ticket));
      try {
        const c = await next(req, { ...a, willRetry });
        breaker.answered();
        return c;
      } catch (err) {
        if (a.signal.aborted) {
          breaker.abandoned(ticket);
          throw err;
        }
        const hard = hardFaultOf(err);
        if (hard !== null) throw breaker.fault(hardFault(hard, sceneOf(a, err)));
        if (outageKindOf(err) === null) {
          breaker.answered();
          throw err;
        }
        // The preflight is the only call in flight: there is no streak to wait for. Once its
        // retries are spent it puts the endpoint down and waits, so a server still starting
        // (or away for less than --max-outage) is waited for as the jury's calls would be.
        const preflightOut = a.call.kind === 'preflight' && !a.willRetry(err);
        const absorbed = breaker.failed(ticket, (err as Error).message, preflightOut);
        // The run is already stopping because of this endpoint: say why, once.
        const stop = breaker.stopReason();
        if (stop) throw stop;
        if (absorbed) continue;
        if (preflightOut && breaker.absorbs()) continue;
        if (!a.willRetry(err)) throw unansweredCall(sceneOf(a, err), a.call.ctx.record_id, a.call.meter.attempts);
        throw err;
      }
    }
  };
}
