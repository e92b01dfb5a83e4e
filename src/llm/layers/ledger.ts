/**
 * Ledger layer, outermost: every logical call that finishes lands in the ledger exactly once,
 * ok or failed, replayed or not (src/llm/ledger.ts aggregates tokens and dollars).
 */
import type { Ledger } from '../ledger.js';
import type { CallLayer, ModelCall } from '../model.js';
import { ModelCallError, type CallResult } from '../types.js';

export function ledgerLayer(ledger: Ledger): CallLayer {
  return (next) =>
    async <T>(call: ModelCall<T>): Promise<CallResult<T>> => {
      let res: CallResult<T>;
      try {
        res = await next(call);
      } catch (err) {
        if (err instanceof ModelCallError) ledger.record(err.usage, call.ctx.record_id, false);
        throw err;
      }
      ledger.record(res.usage, call.ctx.record_id, res.cached);
      return res;
    };
}
