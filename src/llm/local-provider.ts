/**
 * Provider for `kind: local` endpoints: a GGUF model run in-process, no server, no network.
 * Same contract as the OpenAI-compatible provider, so jury code cannot tell them apart:
 *
 * - structured calls arrive with `json_schema`; decoding is constrained by a grammar built from
 *   it, and the gateway still validates the reply with zod;
 * - `seed`, `temperature`, `top_p` and `max_tokens` are honoured; the seat's `model` name only
 *   labels the ledger (the endpoint has exactly one model); `reasoning_effort` and `extra_body`
 *   mean nothing to llama.cpp and are ignored;
 * - usage comes from the engine's own tokenizer; the engine's stop reason becomes finish_reason
 *   (`maxTokens` is `length`, so a structured reply cut short fails as truncated);
 * - `timeout_ms` bounds the model's run, not the wait behind other jurors in its queue.
 */
import { resolveModelPath } from '../models/cache.js';
import { defaultThreads, LocalEngineError, type EngineOptions } from './local/engine.js';
import { acquireEngine, type EngineLease } from './local/registry.js';
import { ProviderError, type ChatRequest, type ChatResponse, type EndpointConfig, type FinishReason, type Provider } from './types.js';

export interface LocalProviderOptions {
  env?: NodeJS.ProcessEnv;
  /** test seam: how an engine is obtained */
  acquire?: (opts: EngineOptions) => Promise<EngineLease>;
}

export function createLocalProvider(name: string, endpoint: EndpointConfig, opts: LocalProviderOptions = {}): Provider {
  if (!endpoint.model_path) throw new Error(`endpoint "${name}" (kind: local) has no model_path`);
  const env = opts.env ?? process.env;
  const acquire = opts.acquire ?? acquireEngine;
  let lease: Promise<EngineLease> | undefined;
  let closed = false;

  // Loaded on the first call: an endpoint nobody calls costs no memory.
  function engine(): Promise<EngineLease> {
    if (lease) return lease;
    const p = (async () => {
      const modelPath = resolveModelPath(endpoint.model_path!);
      return acquire({ modelPath, threads: endpoint.threads ?? defaultThreads(env), ...(endpoint.context_size !== undefined ? { contextSize: endpoint.context_size } : {}) });
    })();
    lease = p;
    // A failed load is retried by the next call (the model may have been fetched meanwhile).
    p.catch(() => {
      if (lease === p) lease = undefined;
    });
    return p;
  }

  return {
    name,
    async complete(req: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
      if (closed) throw new ProviderError(`local endpoint "${name}" is closed`, false);
      if (signal.aborted) throw new ProviderError(`aborted by caller: ${reasonText(signal.reason)}`, false);
      let held: EngineLease;
      try {
        held = await engine();
      } catch (err) {
        throw new ProviderError(`local endpoint "${name}": ${(err as Error).message}`, false);
      }
      try {
        const g = await held.engine.generate({
          messages: req.messages,
          ...(req.json_schema ? { jsonSchema: req.json_schema } : {}),
          ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
          ...(req.top_p !== undefined ? { topP: req.top_p } : {}),
          ...(req.max_tokens !== undefined ? { maxTokens: req.max_tokens } : {}),
          ...(req.seed !== undefined ? { seed: req.seed } : {}),
          signal,
          timeoutMs: endpoint.timeout_ms,
        });
        return { content: g.content, ...(g.reasoning ? { reasoning: g.reasoning } : {}), finish_reason: finishOf(g.stop_reason), tokens_in: g.tokens_in, tokens_out: g.tokens_out };
      } catch (err) {
        if (err instanceof LocalEngineError) throw new ProviderError(err.message, err.retryable, err.code === 'context_overflow' ? 400 : undefined);
        throw new ProviderError(`local engine: ${(err as Error)?.message ?? String(err)}`, true);
      }
    },
    async close() {
      closed = true;
      const l = lease;
      lease = undefined;
      if (l) await l.then((x) => x.release()).catch(() => undefined);
    },
  };
}

function reasonText(r: unknown): string {
  return r instanceof Error ? r.message : typeof r === 'string' ? r : 'aborted';
}

/** node-llama-cpp's stop reasons in the provider contract's words. */
export function finishOf(stopReason: string): FinishReason {
  if (stopReason === 'maxTokens') return 'length';
  if (stopReason === 'functionCalls') return 'tool_calls';
  if (stopReason === 'abort') return 'other';
  return 'stop'; // eogToken, stopGenerationTrigger, customStopTrigger
}
