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
    const entered = now();
    let started: number | null = null;
    const onStart = () => {
      started = now();
      a.onStart?.();
    };
    const base = { endpoint: a.call.seat.endpoint, model: a.call.seat.model };
    // Never dispatched (given up in the queue): the whole time was queue, none was the endpoint's.
    const times = () => {
      const t = now();
      return { seconds: started === null ? 0 : Math.max(0, t - started) / 1000, queueSeconds: Math.max(0, (started ?? t) - entered) / 1000 };
    };
    try {
      const c = await next(req, { ...a, onStart });
      quietly(() => onAttempt({ ...base, ...times(), outcome: 'ok', retried: false }));
      return c;
    } catch (err) {
      quietly(() => onAttempt({ ...base, ...times(), outcome: 'error', errorKind: attemptErrorKind(err), retried: a.willRetry(err) }));
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
