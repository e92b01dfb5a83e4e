/**
 * The context window of each model an endpoint serves, for the fit check (./tokens.ts): the
 * endpoint's `context_window` when configured, else what the server's GET /models says, asked
 * once per model and shared by every call. A server that says nothing leaves calls unchecked; one
 * that cannot be reached is asked again after a while (the outage is the health layer's business).
 */
import { logger } from '../util/log.js';
import type { EndpointConfig, Provider, WindowSource } from './types.js';

const log = logger('llm');
/** how long an unanswered GET /models is not asked again */
const RETRY_AFTER_MS = 60_000;
const LOOKUP_TIMEOUT_MS = 10_000;

export type WindowLookup = (model: string, signal: AbortSignal) => Promise<WindowSource | undefined>;

export function contextWindows(name: string, config: EndpointConfig, provider: Provider, now: () => number = Date.now): WindowLookup {
  if (config.context_window !== undefined) {
    const fixed: WindowSource = { tokens: config.context_window, from: `endpoints.${name}.context_window` };
    return async () => fixed;
  }
  // Kind `local` checks its prompts with the model's own tokenizer; stand-ins may not tell at all.
  if (config.kind === 'local' || !provider.contextWindow) return async () => undefined;
  const known = new Map<string, Promise<WindowSource | undefined>>();
  const failedAt = new Map<string, number>();
  return async (model, signal) => {
    const failed = failedAt.get(model);
    if (failed !== undefined && now() - failed < RETRY_AFTER_MS) return undefined;
    let p = known.get(model);
    if (!p) {
      const timeout = AbortSignal.timeout(Math.min(config.timeout_ms, LOOKUP_TIMEOUT_MS));
      p = provider.contextWindow!(model, timeout).then(
        (w) => {
          if (w) log.info(`endpoint "${name}" model "${model}": context window ${w.tokens} tokens (${w.from})`);
          return w;
        },
        (err: unknown) => {
          known.delete(model);
          failedAt.set(model, now());
          log.debug(`endpoint "${name}" model "${model}": context window unknown for now (${err instanceof Error ? err.message : String(err)})`);
          return undefined;
        },
      );
      known.set(model, p);
    }
    // A caller that gives up does not wait for the lookup; the lookup itself goes on for the others.
    return await raceAbort(p, signal);
  };
}

function raceAbort<T>(p: Promise<T | undefined>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    void p.then((v) => {
      signal.removeEventListener('abort', onAbort);
      resolve(v);
    });
  });
}
