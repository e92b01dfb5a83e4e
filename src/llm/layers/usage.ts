/**
 * Usage layer: counts the attempts and tokens of a logical call into its meter, whatever happens
 * to the reply afterwards (an invalid reply still cost its tokens). It wraps the audit layer, so
 * an audit line reads its attempt number from the meter.
 */
import type { CallUsage } from '../../../schemas/usage.js';
import type { AttemptLayer, CallInfo, CallMeter } from '../model.js';

export const countUsage: AttemptLayer = (next) => async (req, a) => {
  const meter = a.call.meter;
  meter.attempts += 1;
  const c = await next(req, a);
  meter.tokens_in += c.tokens_in;
  meter.tokens_out += c.tokens_out;
  return c;
};

export function newMeter(): CallMeter {
  return { attempts: 0, tokens_in: 0, tokens_out: 0 };
}

/** Dollars of one call, or null when the model has no price (unknown, not free); `endpoint` decides online or batch rates. */
export type CostFn = (model: string, tokensIn: number, tokensOut: number, endpoint?: string) => number | null;

/** The CallUsage of a logical call from its meter; `latencyMs` covers all of its attempts. */
export function usageOf(call: CallInfo, costOf: CostFn, latencyMs: number, outcome: 'ok' | 'error'): CallUsage {
  const { ctx, seat, meter } = call;
  return {
    phase: ctx.phase,
    participant: ctx.participant,
    model: seat.model,
    endpoint: seat.endpoint,
    tokens_in: meter.tokens_in,
    tokens_out: meter.tokens_out,
    cost_usd: costOf(seat.model, meter.tokens_in, meter.tokens_out, seat.endpoint),
    latency_ms: Math.max(0, Math.round(latencyMs)),
    // The schema wants >= 1; a call aborted before its first attempt still counts as one try.
    attempts: Math.max(1, meter.attempts),
    outcome,
  };
}
