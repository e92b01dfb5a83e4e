/**
 * The model gateway: the only path from jury code to a model.
 *
 *   cache lookup -> (endpoint limiter -> provider.complete, with retries) -> extract/repair/
 *   validate -> one corrective re-ask if invalid -> result (cached, ledgered, audited)
 *
 * Every logical call, ok or failed, lands in the ledger once; every HTTP attempt and every cache
 * hit gets an audit line. Secrets are redacted from replies, errors and the audit log.
 */
import { setMaxListeners } from 'node:events';
import { z, type ZodType } from 'zod';
import type { PriceConfig } from '../../schemas/config.js';
import type { CallUsage } from '../../schemas/usage.js';
import { createAuditLog, type AuditEntry, type AuditLog } from './audit.js';
import { cacheKey, createResponseCache, hashMessages, type ResponseCache } from './cache.js';
import { parseStructured } from './json.js';
import { Ledger } from './ledger.js';
import { createLimiter, type Limiter } from './limits.js';
import { createOpenAIProvider } from './openai-provider.js';
import { createRedactor, type Redactor } from './redact.js';
import { abortReason, willRetry, withRetry, type RetryPolicy, type SleepFn } from './retry.js';
import {
  ModelCallError,
  ProviderError,
  type CallContext,
  type CallResult,
  type ChatMessage,
  type ChatRequest,
  type ChatResponse,
  type EndpointConfig,
  type ModelGateway,
  type ParticipantConfig,
  type Provider,
  type StructuredCall,
  type TextCall,
} from './types.js';

export interface GatewayOptions {
  /** Endpoint configs by name; `base_url` must already be resolved (simulator included). */
  endpoints: Record<string, EndpointConfig>;
  prices: Record<string, PriceConfig>;
  cache: { enabled: boolean; dir: string };
  auditLogPath: string | null;
  /** Defaults to the OpenAI-compatible HTTP provider; tests and the simulator inject their own. */
  providerFor?: (name: string, endpoint: EndpointConfig) => Provider;
  env?: NodeJS.ProcessEnv;
  /** Test seams: backoff randomness, backoff sleeping, and the clock used for latency. */
  random?: () => number;
  sleep?: SleepFn;
  now?: () => number;
}

export interface Gateway extends ModelGateway {
  readonly ledger: Ledger;
  /** Aborts calls still queued or in flight, then closes connection pools and the audit log. */
  close(): Promise<void>;
}

interface EndpointRuntime {
  name: string;
  config: EndpointConfig;
  provider: Provider;
  limiter: Limiter;
  policy: RetryPolicy;
}

/** Counters for one logical call, across retries and the re-ask. */
interface CallState {
  attempts: number;
  tokens_in: number;
  tokens_out: number;
}

type Validate = (content: string) => string | null;

const REASK_INSTRUCTION = 'Reply again with only the corrected JSON object: no prose, no markdown fences.';

export function createGateway(opts: GatewayOptions): Gateway {
  const env = opts.env ?? process.env;
  const endpointKeys = Object.values(opts.endpoints).map((e) => (e.api_key_env ? env[e.api_key_env] : undefined));
  const redactor: Redactor = createRedactor(env, endpointKeys);
  const ledger = new Ledger(opts.prices);
  const cache: ResponseCache = createResponseCache(opts.cache);
  const audit: AuditLog = createAuditLog(opts.auditLogPath, redactor);
  const now = opts.now ?? (() => performance.now());
  const providerFor = opts.providerFor ?? ((name: string, endpoint: EndpointConfig) => createOpenAIProvider(name, endpoint, { env }));
  const runtimes = new Map<string, EndpointRuntime>();
  // close() aborts whatever is still queued or in flight, so no caller waits forever.
  const shutdown = new AbortController();
  // Every in-flight call listens on it (and stops listening when done), so many listeners are normal.
  setMaxListeners(0, shutdown.signal);
  let closed = false;

  // Built lazily: an endpoint nobody calls needs no pool and no valid base_url.
  function runtimeFor(name: string): EndpointRuntime {
    let rt = runtimes.get(name);
    if (rt) return rt;
    const config = Object.hasOwn(opts.endpoints, name) ? opts.endpoints[name] : undefined;
    if (!config) throw new Error(`unknown endpoint "${name}" (known: ${Object.keys(opts.endpoints).join(', ') || 'none'})`);
    rt = {
      name,
      config,
      provider: providerFor(name, config),
      limiter: createLimiter(config),
      policy: { maxRetries: config.max_retries, baseMs: config.backoff_base_ms, maxMs: config.backoff_max_ms },
    };
    runtimes.set(name, rt);
    return rt;
  }

  function requestFor(seat: ParticipantConfig, messages: ChatMessage[]): ChatRequest {
    return {
      model: seat.model,
      messages,
      temperature: seat.temperature,
      ...(seat.top_p !== undefined ? { top_p: seat.top_p } : {}),
      ...(seat.max_tokens !== undefined ? { max_tokens: seat.max_tokens } : {}),
      ...(seat.seed !== undefined ? { seed: seat.seed } : {}),
      ...(seat.reasoning_effort !== undefined ? { reasoning_effort: seat.reasoning_effort } : {}),
      ...(seat.extra_body !== undefined ? { extra_body: seat.extra_body } : {}),
    };
  }

  function usageOf(ctx: CallContext, seat: ParticipantConfig, st: CallState, latency: number, outcome: 'ok' | 'error'): CallUsage {
    return {
      phase: ctx.phase,
      participant: ctx.participant,
      model: seat.model,
      endpoint: seat.endpoint,
      tokens_in: st.tokens_in,
      tokens_out: st.tokens_out,
      cost_usd: ledger.costOf(seat.model, st.tokens_in, st.tokens_out),
      latency_ms: Math.max(0, Math.round(latency)),
      // The schema wants >= 1; a call aborted before its first attempt still counts as one try.
      attempts: Math.max(1, st.attempts),
      outcome,
    };
  }

  function baseAudit(ctx: CallContext, seat: ParticipantConfig, kind: string): Omit<AuditEntry, 'ts' | 'prompt_hash' | 'messages' | 'response' | 'reasoning' | 'usage' | 'latency_ms' | 'attempt' | 'outcome' | 'error'> {
    return {
      caller: ctx.caller,
      phase: ctx.phase,
      participant: ctx.participant,
      record_id: ctx.record_id,
      ...(ctx.sample_index !== undefined ? { sample_index: ctx.sample_index } : {}),
      model: seat.model,
      endpoint: seat.endpoint,
      kind,
    };
  }

  /** One turn (initial or re-ask): attempts with retries; returns the reply and its validation error. */
  async function runTurn(
    rt: EndpointRuntime,
    ctx: CallContext,
    seat: ParticipantConfig,
    kind: string,
    turn: 'initial' | 'reask',
    req: ChatRequest,
    st: CallState,
    validate: Validate | null,
    signal: AbortSignal,
  ): Promise<{ resp: ChatResponse; error: string | null }> {
    const promptHash = audit.enabled ? hashMessages(req.messages) : '';
    return withRetry(
      async (retry) => {
        st.attempts += 1;
        const attempt = st.attempts;
        let t0 = now();
        const line = (fields: Partial<AuditEntry>) =>
          audit.write({
            ts: new Date().toISOString(),
            ...baseAudit(ctx, seat, kind),
            turn,
            prompt_hash: promptHash,
            messages: req.messages,
            response: null,
            reasoning: null,
            usage: null,
            latency_ms: Math.max(0, Math.round(now() - t0)),
            attempt,
            outcome: 'error',
            error: null,
            ...fields,
          });
        try {
          const raw = await rt.limiter.run(() => {
            t0 = now(); // attempt latency excludes time spent queued behind the limiter
            return rt.provider.complete(req, signal);
          }, signal);
          const resp: ChatResponse = {
            ...raw,
            content: redactor.text(raw.content),
            ...(raw.reasoning !== undefined ? { reasoning: redactor.text(raw.reasoning) } : {}),
          };
          st.tokens_in += resp.tokens_in;
          st.tokens_out += resp.tokens_out;
          const error = validate ? validate(resp.content) : null;
          await line({
            response: resp.content,
            reasoning: resp.reasoning ?? null,
            usage: { tokens_in: resp.tokens_in, tokens_out: resp.tokens_out },
            outcome: error === null ? 'ok' : turn === 'initial' ? 'reask' : 'invalid_json',
            error,
          });
          return { resp, error };
        } catch (err) {
          const pe = asProviderError(err, signal, redactor);
          await line({
            outcome: willRetry(pe, retry, rt.policy, signal) ? 'retryable_error' : 'error',
            error: pe.message,
            ...(pe.status !== undefined ? { http_status: pe.status } : {}),
          });
          throw pe;
        }
      },
      rt.policy,
      { signal, ...(opts.random ? { random: opts.random } : {}), ...(opts.sleep ? { sleep: opts.sleep } : {}) },
    );
  }

  /** Shared body of structured() and text(): `parse` turns a reply into a value or an error string. */
  async function call<T>(
    ctx: CallContext,
    seat: ParticipantConfig,
    messages: ChatMessage[],
    kind: string,
    parse: ((content: string) => { ok: true; value: T } | { ok: false; error: string }) | null,
    callerSignal: AbortSignal | undefined,
    jsonSchema?: Record<string, unknown>,
  ): Promise<CallResult<T>> {
    if (closed) throw new Error('gateway is closed');
    const rt = runtimeFor(seat.endpoint);
    const req = requestFor(seat, messages);
    // Canonical JSON + sha256 of the prompt is a large share of per-call CPU: only when caching.
    const key = cache.enabled ? cacheKey({ base_url: cacheIdentity(rt), request: req, sample_index: ctx.sample_index, kind }) : '';
    // Added after the key: the schema already shapes `kind`, and old cache entries stay valid.
    if (jsonSchema) req.json_schema = jsonSchema;
    const asValue = (content: string) => (parse ? parse(content) : { ok: true as const, value: content as T });

    const hit = await cache.get(key);
    if (hit) {
      const parsed = asValue(hit.raw);
      // An entry that no longer validates (schema changed) is treated as a miss.
      if (parsed.ok) {
        const usage: CallUsage = { ...hit.usage, phase: ctx.phase, participant: ctx.participant, endpoint: seat.endpoint };
        await audit.write({
          ts: new Date().toISOString(),
          ...baseAudit(ctx, seat, kind),
          prompt_hash: hashMessages(messages),
          messages,
          response: hit.raw,
          reasoning: hit.reasoning ?? null,
          usage: { tokens_in: usage.tokens_in, tokens_out: usage.tokens_out },
          latency_ms: usage.latency_ms,
          attempt: 0,
          outcome: 'cache_hit',
          error: null,
        });
        ledger.record(usage, ctx.record_id, true);
        return { value: parsed.value, raw: hit.raw, ...(hit.reasoning !== undefined ? { reasoning: hit.reasoning } : {}), usage, cached: true };
      }
    }

    const link = linkSignals(callerSignal, shutdown.signal);
    const signal = link.signal;
    const st: CallState = { attempts: 0, tokens_in: 0, tokens_out: 0 };
    const t0 = now();
    let value: T | undefined;
    const validate: Validate | null = parse
      ? (content) => {
          const r = parse(content);
          if (r.ok) value = r.value;
          return r.ok ? null : r.error;
        }
      : null;
    const fail = (message: string): never => {
      const usage = usageOf(ctx, seat, st, now() - t0, 'error');
      ledger.record(usage, ctx.record_id, false);
      throw new ModelCallError(redactor.text(`${ctx.participant} (${seat.model}@${seat.endpoint}, ${ctx.phase}) failed after ${usage.attempts} attempt(s): ${message}`), usage);
    };

    let final: ChatResponse;
    try {
      let turn = await runTurn(rt, ctx, seat, kind, 'initial', req, st, validate, signal);
      if (turn.error !== null) {
        // Exactly one corrective turn: show the model its reply and what was wrong with it.
        const reask: ChatMessage[] = [
          ...messages,
          { role: 'assistant', content: turn.resp.content },
          { role: 'user', content: `Your previous reply could not be used: it is not valid JSON for ${kind.replace(/^structured:/, '')}.\n${turn.error}\n${REASK_INSTRUCTION}` },
        ];
        turn = await runTurn(rt, ctx, seat, kind, 'reask', { ...req, messages: reask }, st, validate, signal);
        if (turn.error !== null) return fail(`invalid JSON after one re-ask: ${turn.error}`);
      }
      final = turn.resp;
    } catch (err) {
      if (err instanceof ModelCallError) throw err;
      return fail(err instanceof Error ? err.message : String(err));
    } finally {
      link.release();
    }

    const usage = usageOf(ctx, seat, st, now() - t0, 'ok');
    const result: CallResult<T> = {
      value: parse ? (value as T) : (final.content as T),
      raw: final.content,
      ...(final.reasoning !== undefined ? { reasoning: final.reasoning } : {}),
      usage,
      cached: false,
    };
    // A cache write failure costs a future re-call, not this result.
    await cache.put(key, { raw: final.content, ...(final.reasoning !== undefined ? { reasoning: final.reasoning } : {}), usage }).catch(() => undefined);
    ledger.record(usage, ctx.record_id, false);
    return result;
  }

  return {
    ledger,
    structured<T>(c: StructuredCall<T>): Promise<CallResult<T>> {
      return call<T>(c.ctx, c.seat, c.messages, `structured:${c.schemaName}`, (content) => parseStructured(content, c.schema), c.signal, jsonSchemaOf(c.schema));
    },
    text(c: TextCall): Promise<CallResult<string>> {
      return call<string>(c.ctx, c.seat, c.messages, 'text', null, c.signal);
    },
    async close() {
      if (closed) return;
      closed = true;
      shutdown.abort(new Error('gateway closed'));
      const rts = [...runtimes.values()];
      await Promise.all(rts.map((rt) => rt.limiter.close()));
      await Promise.all(rts.map((rt) => rt.provider.close?.()));
      await audit.close();
    },
  };
}

// z.toJSONSchema walks the whole schema; jury calls reuse a handful of schemas, so once each.
const jsonSchemas = new WeakMap<ZodType, Record<string, unknown> | null>();

/** The JSON Schema a model should follow for `schema`; undefined when zod cannot express it. */
function jsonSchemaOf(schema: ZodType): Record<string, unknown> | undefined {
  let js = jsonSchemas.get(schema);
  if (js === undefined) {
    try {
      js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    } catch {
      js = null; // e.g. a cycle zod cannot name: the provider then decodes unconstrained
    }
    jsonSchemas.set(schema, js);
  }
  return js ?? undefined;
}

function asProviderError(err: unknown, signal: AbortSignal, redactor: Redactor): ProviderError {
  if (err instanceof ProviderError) return err;
  if (signal.aborted) {
    const reason = abortReason(signal);
    return new ProviderError(redactor.text(`aborted by caller: ${reason.message}`), false);
  }
  // A provider that throws something else (a bug, a simulator quirk) gets one more chance.
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return new ProviderError(redactor.text(message), true);
}

/** One signal that aborts when either input does; listeners are removed by release(). */
function linkSignals(a: AbortSignal | undefined, b: AbortSignal): { signal: AbortSignal; release: () => void } {
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

/**
 * What identifies the server in the cache key. The in-process simulator listens on a fresh port
 * every run, so its URL would defeat replay; its profile is what determines its answers.
 */
function cacheIdentity(rt: EndpointRuntime): string {
  if (rt.config.kind === 'simulator') return `simulator:${rt.config.profile ?? 'builtin'}`;
  if (rt.config.kind === 'local') return `local:${rt.config.model_path ?? rt.name}`;
  return rt.config.base_url ?? `endpoint:${rt.name}`;
}
