/**
 * Observer layers (src/llm/observer.ts): an attempt layer beside the audit layer, so it sees
 * every HTTP attempt with its latency (queue time excluded) and whether it will be retried, and
 * a call layer beside the ledger, so it sees every logical call's usage exactly once.
 */
import { attemptErrorKind, quietly, type GatewayObserver } from '../observer.js';
import type { AttemptLayer, CallLayer, ModelCall } from '../model.js';
import { ModelCallError, type CallResult } from '../types.js';

export function observeAttempts(observer: GatewayObserver, now: () => number): AttemptLayer {
  const onAttempt = observer.onAttempt?.bind(observer);
  if (!onAttempt) return (next) => next;
  return (next) => async (req, a) => {
    let t0 = now();
    const onStart = () => {
      t0 = now();
      a.onStart?.();
    };
    const base = { endpoint: a.call.seat.endpoint, model: a.call.seat.model };
    const seconds = () => Math.max(0, now() - t0) / 1000;
    try {
      const c = await next(req, { ...a, onStart });
      quietly(() => onAttempt({ ...base, seconds: seconds(), outcome: 'ok', retried: false }));
      return c;
    } catch (err) {
      quietly(() => onAttempt({ ...base, seconds: seconds(), outcome: 'error', errorKind: attemptErrorKind(err), retried: a.willRetry(err) }));
      throw err;
    }
  };
}

export function observeCalls(observer: GatewayObserver): CallLayer {
  const onCall = observer.onCall?.bind(observer);
  if (!onCall) return (next) => next;
  return (next) =>
    async <T>(call: ModelCall<T>): Promise<CallResult<T>> => {
      const base = { endpoint: call.seat.endpoint, model: call.seat.model };
      let res: CallResult<T>;
      try {
        res = await next(call);
      } catch (err) {
        if (err instanceof ModelCallError) quietly(() => onCall({ ...base, usage: err.usage, cached: false }));
        throw err;
      }
      quietly(() => onCall({ ...base, usage: res.usage, cached: res.cached }));
      return res;
    };
}
