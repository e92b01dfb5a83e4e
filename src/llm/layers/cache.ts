/**
 * Cache layer: a logical call whose key was answered before is replayed from disk exactly as
 * first recorded (text, reasoning, usage, latency), which makes re-runs byte-identical. Only
 * successful calls are stored; a write failure costs a future re-call, not this result.
 * Key and entry format are those of src/llm/cache.ts (CACHE_FORMAT 1), unchanged.
 *
 * Calls now always carry a max_tokens (src/llm/tokens.ts). An entry written for the same call
 * without one (before budgets were sent by default) still replays when its reply ended on its own
 * within the budget: the budget would not have cut it, so the reply is the one this call gets.
 */
import { cacheKey, type CacheEntry, type ResponseCache } from '../cache.js';
import { parseReply } from '../generate.js';
import type { CallLayer, EndpointHandle, ModelCall } from '../model.js';
import type { CallResult } from '../types.js';

export function cacheLayer(cache: ResponseCache): CallLayer {
  if (!cache.enabled) return (next) => next;
  return (next) =>
    async <T>(call: ModelCall<T>): Promise<CallResult<T>> => {
      const keyOf = (request: ModelCall<T>['request']) => cacheKey({ base_url: cacheIdentity(call.endpoint), request, sample_index: call.ctx.sample_index, kind: call.kind });
      const key = keyOf(call.request);
      const hit = (await cache.get(key)) ?? (await unbudgeted(cache, call.request, keyOf));
      if (hit) {
        const parsed = parseReply(call, hit.raw);
        // An entry that no longer validates (schema changed) is treated as a miss.
        if (parsed.ok) {
          return {
            value: parsed.value,
            raw: hit.raw,
            ...(hit.reasoning !== undefined ? { reasoning: hit.reasoning } : {}),
            usage: { ...hit.usage, phase: call.ctx.phase, participant: call.ctx.participant, endpoint: call.seat.endpoint },
            cached: true,
            finish_reason: hit.finish_reason ?? 'stop',
          };
        }
      }
      const res = await next(call);
      const entry = { raw: res.raw, ...(res.reasoning !== undefined ? { reasoning: res.reasoning } : {}), usage: res.usage, finish_reason: res.finish_reason ?? 'stop' };
      await cache.put(key, entry).catch(() => undefined);
      return res;
    };
}

/** The entry of the same request sent without max_tokens, if its reply fits the budget uncut. */
async function unbudgeted(cache: ResponseCache, request: ModelCall<unknown>['request'], keyOf: (r: ModelCall<unknown>['request']) => string): Promise<CacheEntry | null> {
  const budget = request.max_tokens;
  if (budget === undefined) return null;
  const { max_tokens: _budget, ...without } = request;
  const hit = await cache.get(keyOf(without));
  if (!hit || (hit.finish_reason ?? 'stop') !== 'stop' || hit.usage.tokens_out > budget) return null;
  return hit;
}

/**
 * What identifies the server in the cache key. The in-process simulator listens on a fresh port
 * every run, so its URL would defeat replay; its profile is what determines its answers.
 */
export function cacheIdentity(endpoint: Pick<EndpointHandle, 'name' | 'config'>): string {
  const c = endpoint.config;
  if (c.kind === 'simulator') return `simulator:${c.profile ?? 'builtin'}`;
  if (c.kind === 'local') return `local:${c.model_path ?? endpoint.name}`;
  return c.base_url ?? `endpoint:${endpoint.name}`;
}
