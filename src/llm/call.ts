/**
 * The innermost call handler: binds a logical call that missed the cache to its endpoint (one
 * meter, one clock, the caller's signal linked to the gateway's shutdown) and runs generateObject
 * or generateText over it. Failures become ModelCallErrors whose message says who failed and is
 * redacted; their usage covers every attempt so the ledger still counts them.
 */
import { generateObject, generateText, type CallModel } from './generate.js';
import { newMeter, usageOf, type CostFn } from './layers/usage.js';
import { queueClock } from './queue-clock.js';
import type { CallHandler, CallInfo, Completion, ModelCall } from './model.js';
import { ModelCallError, NoObjectGeneratedError, type CallResult } from './types.js';

export interface CoreDeps {
  /** aborted by Gateway.close(): nothing queued or in flight outlives the gateway */
  shutdown: AbortSignal;
  costOf: CostFn;
  redact: (s: string) => string;
  now: () => number;
}

export function callCore(deps: CoreDeps): CallHandler {
  const onShutdown = shutdownFanout(deps.shutdown);
  return async <T>(call: ModelCall<T>): Promise<CallResult<T>> => {
    const link = onShutdown(call.signal);
    try {
      const model = bindCall(call, link.signal, deps);
      if (call.schema) return await generateObject(model, { request: call.request, schema: call.schema, schemaName: call.schemaName ?? 'object' });
      return (await generateText(model, call.request)) as CallResult<T>;
    } finally {
      link.release();
    }
  };
}

function bindCall(call: ModelCall<unknown>, signal: AbortSignal, deps: CoreDeps): CallModel {
  const t0 = deps.now();
  const queue = queueClock(deps.now, call.onQueue);
  const info: CallInfo = { ctx: call.ctx, seat: call.seat, kind: call.kind, meter: newMeter(), onQueue: queue.onQueue };
  // A call's latency is the time the endpoint (and backoff) took, not the wait in our own limiter.
  const usage = (outcome: 'ok' | 'error') => usageOf(info, deps.costOf, deps.now() - t0 - queue.ms(), outcome);
  return {
    turn: (req, turn, check) => call.endpoint.turn(req, { call: info, turn, signal, ...(check ? { check } : {}) }),
    usage,
    fail(reason: string, reply?: Completion): ModelCallError {
      const u = usage('error');
      const { ctx, seat } = call;
      const message = deps.redact(`${ctx.participant} (${seat.model}@${seat.endpoint}, ${ctx.phase}) failed after ${u.attempts} attempt(s): ${reason}`);
      if (!reply) return new ModelCallError(message, u);
      return new NoObjectGeneratedError(message, u, { text: reply.content, finishReason: reply.finish_reason, reason: deps.redact(reason) });
    },
  };
}

/**
 * linkSignals(signal, shutdown) for every call, without a listener per call on the shutdown
 * signal: removing one from a signal that holds a listener for each call in flight scans them
 * all. One listener aborts the calls still in flight, in the order they started.
 */
function shutdownFanout(shutdown: AbortSignal): (signal: AbortSignal | undefined) => { signal: AbortSignal; release: () => void } {
  const live = new Set<AbortController>();
  shutdown.addEventListener('abort', () => {
    for (const ctl of live) ctl.abort(shutdown.reason);
    live.clear();
  }, { once: true });
  return (signal) => {
    const ctl = new AbortController();
    const onAbort = () => ctl.abort(signal!.reason);
    if (signal?.aborted) ctl.abort(signal.reason);
    else if (shutdown.aborted) ctl.abort(shutdown.reason);
    else {
      signal?.addEventListener('abort', onAbort, { once: true });
      live.add(ctl);
    }
    return {
      signal: ctl.signal,
      release: () => {
        signal?.removeEventListener('abort', onAbort);
        live.delete(ctl);
      },
    };
  };
}

/** One signal that aborts when either input does; listeners are removed by release(). */
export function linkSignals(a: AbortSignal | undefined, b: AbortSignal): { signal: AbortSignal; release: () => void } {
  const ctl = new AbortController();
  const sources = a ? [a, b] : [b];
  const onAbort = (ev: Event) => ctl.abort((ev.target as AbortSignal).reason);
  for (const s of sources) {
    if (s.aborted) {
      ctl.abort(s.reason);
      break;
    }
    s.addEventListener('abort', onAbort, { once: true });
  }
  return { signal: ctl.signal, release: () => sources.forEach((s) => s.removeEventListener('abort', onAbort)) };
}
