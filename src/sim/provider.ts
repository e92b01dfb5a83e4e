import { ProviderError, type ChatRequest, type ChatResponse, type Provider } from '../llm/types.js';
import { defaultProfile } from './default-profile.js';
import { requestKey, SimEngine } from './engine.js';
import type { GoldIndex } from './gold.js';
import type { SimProfile } from './profile.js';
import { SimRuntime, type SimStatsSnapshot } from './runtime.js';
import type { SimTask } from './tasks.js';

/**
 * The simulator as an in-process Provider: the same engine without HTTP, for CPU benchmarks
 * and unit tests of the jury. Faults become the ProviderErrors an HTTP provider would raise:
 * 429 (retryable, with retryAfterMs), 500 (retryable), 404/400 (not retryable).
 *
 * latency 'instant' (default): replies at once, and a simulated timeout fails at once with a
 * retryable ProviderError instead of stalling a benchmark. 'simulated': sleeps the drawn
 * latency and hangs on timeouts until the caller's signal aborts (or hang_ms, then 504).
 * A caller abort is a non-retryable "aborted by caller" error, as in openai-provider.ts.
 */

export interface SimProviderOptions {
  profile?: SimProfile;
  gold?: GoldIndex;
  latency?: 'instant' | 'simulated';
  name?: string;
  tasks?: readonly SimTask[];
}

export interface SimProvider extends Provider {
  readonly engine: SimEngine;
  stats(): SimStatsSnapshot;
}

function abortError(signal: AbortSignal): ProviderError {
  const why = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? 'aborted');
  // Same as the HTTP provider: the caller gave up, so retrying is not our call.
  return new ProviderError(`aborted by caller: ${why}`, false);
}

/** Resolves after `ms`, or never when ms is undefined; rejects when `signal` aborts. No timer survives. */
function wait(ms: number | undefined, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortError(signal));
    const onAbort = (): void => {
      if (timer) clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer =
      ms === undefined
        ? undefined
        : setTimeout(() => {
            signal.removeEventListener('abort', onAbort);
            resolve();
          }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export function createSimProvider(opts: SimProviderOptions = {}): SimProvider {
  const engine = new SimEngine({ profile: opts.profile ?? defaultProfile(), ...(opts.gold ? { gold: opts.gold } : {}), ...(opts.tasks ? { tasks: opts.tasks } : {}) });
  const runtime = new SimRuntime();
  const simulated = opts.latency === 'simulated';

  async function complete(req: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
    if (signal.aborted) throw abortError(signal);
    const model = engine.modelProfile(req.model);
    if (!model) {
      runtime.record(req.model, 'unknown_model');
      throw new ProviderError(`404: the model "${req.model}" does not exist in the simulator profile`, false, 404);
    }
    if (!runtime.tryAcquire(req.model, model.max_concurrency)) {
      runtime.record(req.model, 'rate_limited');
      throw new ProviderError(`429: more than ${model.max_concurrency} requests in flight for ${req.model}`, true, 429, model.retry_after_ms);
    }
    try {
      const r = engine.respond(req, runtime.nextAttempt(requestKey(req)));
      if (r.kind === 'error') {
        runtime.record(req.model, 'bad_request');
        throw new ProviderError(`${r.status}: ${r.message}`, false, r.status);
      }
      if (r.kind === 'fault') {
        if (r.status === 429) {
          runtime.record(req.model, 'fault_429', { task: r.task });
          throw new ProviderError('429: simulated rate limit', true, 429, r.retryAfterMs);
        }
        if (r.status === 500) {
          runtime.record(req.model, 'fault_500', { task: r.task });
          throw new ProviderError('500: simulated internal server error', true, 500);
        }
        runtime.record(req.model, 'timeout', { task: r.task });
        if (!simulated) throw new ProviderError('timeout: simulated hang (instant mode fails at once)', true);
        await wait(r.hangMs, signal);
        throw new ProviderError('504: simulated upstream timeout', true, 504);
      }
      if (simulated && r.latency_ms > 0) {
        try {
          await wait(r.latency_ms, signal);
        } catch (e) {
          runtime.record(req.model, 'aborted', { task: r.task });
          throw e;
        }
      }
      runtime.record(req.model, 'ok', { task: r.task, format: r.format });
      return { content: r.content, ...(r.reasoning !== undefined ? { reasoning: r.reasoning } : {}), finish_reason: r.finish_reason, tokens_in: r.tokens_in, tokens_out: r.tokens_out };
    } finally {
      runtime.release(req.model);
    }
  }

  return { name: opts.name ?? 'simulator', engine, complete, stats: () => runtime.stats() };
}
