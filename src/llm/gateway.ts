/**
 * The model gateway: the only path from jury code to a model. A composition of small layers
 * (src/llm/layers/*) around each endpoint's provider:
 *
 *   call     ledger > observer > audit of cache hits > response cache > generateObject / generateText
 *   attempt  retry > health > usage > audit > observer > redaction > limits > provider.complete
 *
 * The health layer holds attempts to an endpoint that is down (src/llm/health.ts) until it is
 * back, and stops the run on a fault of the endpoint (src/llm/outage.ts), so an endpoint's fault
 * never fails a juror; `health` shows every endpoint.
 * Every logical call, ok or failed, lands in the ledger once; every HTTP attempt and every cache
 * hit gets an audit line. Secrets are redacted from replies, errors and the audit log.
 */
import { setMaxListeners } from 'node:events';
import type { ZodType } from 'zod';
import type { MaxTokensConfig, PriceConfig } from '../../schemas/config.js';
import { createAuditLog } from './audit.js';
import { cacheKey, createResponseCache } from './cache.js';
import { callCore } from './call.js';
import { contextWindows } from './context-window.js';
import { jsonSchemaOf } from './generate.js';
import { HealthRegistry, type HealthClock, type HealthView } from './health.js';
import { auditAttempts, auditCacheHits } from './layers/audit.js';
import { healthLayer } from './layers/health.js';
import { cacheIdentity, cacheLayer } from './layers/cache.js';
import { ledgerLayer } from './layers/ledger.js';
import { limitLayer } from './layers/limit.js';
import { observeAttempts, observeCalls } from './layers/observe.js';
import { redactLayer } from './layers/redact.js';
import { retryLayer } from './layers/retry.js';
import { countUsage } from './layers/usage.js';
import { Ledger } from './ledger.js';
import { createLimiter, type Limiter } from './limits.js';
import { providerAttempt, stackAttempt, stackCalls, type AttemptInfo, type AttemptLayer, type CallHandler, type EndpointHandle } from './model.js';
import type { GatewayObserver } from './observer.js';
import { createOpenAIProvider } from './openai-provider.js';
import { preflight } from './preflight.js';
import { createRedactor } from '../util/redact.js';
import type { SleepFn } from './retry.js';
import { budgetFor } from './tokens.js';
import type { CallContext, CallResult, ChatMessage, ChatRequest, EndpointConfig, ModelGateway, ParticipantConfig, Provider } from './types.js';

export interface GatewayOptions {
  /** Endpoint configs by name; `base_url` must already be resolved (simulator included). */
  endpoints: Record<string, EndpointConfig>;
  prices: Record<string, PriceConfig>;
  cache: { enabled: boolean; dir: string };
  auditLogPath: string | null;
  /** Defaults to the OpenAI-compatible HTTP provider; tests and the simulator inject their own. */
  providerFor?: (name: string, endpoint: EndpointConfig) => Provider;
  env?: NodeJS.ProcessEnv;
  /** Told of every HTTP attempt and every logical call (metrics); never changes what a call does. */
  observer?: GatewayObserver;
  /** Test seams: backoff randomness, backoff sleeping, and the clock used for latency. */
  random?: () => number;
  sleep?: SleepFn;
  now?: () => number;
  /** longest an endpoint may stay down before its waiting calls fail (EndpointOutageError); default 30 min */
  maxOutageMs?: number;
  /** test seam for the breakers' clock and timers */
  healthClock?: HealthClock;
  /** default max_tokens per kind of call (the config's `max_tokens`); unset kinds: DEFAULT_MAX_TOKENS */
  maxTokens?: MaxTokensConfig;
}

export const DEFAULT_MAX_OUTAGE_MS = 30 * 60_000;

export interface Gateway extends ModelGateway {
  readonly ledger: Ledger;
  /** up / down / probing of every endpoint called so far */
  readonly health: HealthView;
  /** The run is stopping: calls waiting for a down endpoint fail now with EndpointOutageError. */
  stopWaiting(): void;
  /** One tiny real call per distinct (endpoint, model) of `seats` (./preflight.ts); throws the first fault. */
  preflight(seats: readonly ParticipantConfig[], signal?: AbortSignal): Promise<void>;
  /** Aborts calls still queued or in flight, then closes connection pools and the audit log. */
  close(): Promise<void>;
}

interface Endpoint extends EndpointHandle {
  provider: Provider;
  limiter: Limiter;
}

export function createGateway(opts: GatewayOptions): Gateway {
  const env = opts.env ?? process.env;
  const endpointKeys = Object.values(opts.endpoints).map((e) => (e.api_key_env ? env[e.api_key_env] : undefined));
  const redactor = createRedactor(env, endpointKeys);
  const ledger = new Ledger(opts.prices);
  const audit = createAuditLog(opts.auditLogPath, redactor);
  const now = opts.now ?? (() => performance.now());
  // close() aborts whatever is still queued or in flight, so no caller waits forever.
  const shutdown = new AbortController();
  // Every in-flight call listens on it (and stops listening when done), so many listeners are normal.
  setMaxListeners(0, shutdown.signal);
  const observer = opts.observer ?? {};
  const health = new HealthRegistry(opts.maxOutageMs ?? DEFAULT_MAX_OUTAGE_MS, opts.healthClock);
  const attemptLayers = (limiter: Limiter, config: EndpointConfig): AttemptLayer[] => [
    countUsage,
    ...(audit.enabled ? [auditAttempts(audit, now, config)] : []),
    observeAttempts(observer, now),
    redactLayer(redactor),
    limitLayer(limiter),
  ];
  const endpoints = endpointRegistry(opts, env, (name, config, provider, limiter) => {
    const policy = { maxRetries: config.max_retries, baseMs: config.backoff_base_ms, maxMs: config.backoff_max_ms };
    const retry = retryLayer(policy, { ...(opts.random ? { random: opts.random } : {}), ...(opts.sleep ? { sleep: opts.sleep } : {}) });
    // Endpoint configs built in code (tests, benchmarks) may leave the breaker out.
    const b = config.breaker ?? { failures: 5, probe_interval_ms: 1000, probe_max_interval_ms: 15_000 };
    const probeTimeoutMs = Math.min(config.timeout_ms, 10_000);
    const probe = provider.probe ? () => provider.probe!(AbortSignal.timeout(probeTimeoutMs)) : undefined;
    const breaker = health.breaker(name, { failures: b.failures, probeIntervalMs: b.probe_interval_ms, probeMaxIntervalMs: b.probe_max_interval_ms, ...(probe ? { probe } : {}) });
    const scene = { endpoint: name, config, keySet: Boolean(config.api_key_env && env[config.api_key_env]) };
    const identity = cacheIdentity({ name, config });
    const keyOf = (req: ChatRequest, a: AttemptInfo) => cacheKey({ base_url: identity, request: req, sample_index: a.call.ctx.sample_index, kind: a.call.kind });
    const turn = retry(stackAttempt(providerAttempt(provider, keyOf), [healthLayer(breaker, scene), ...attemptLayers(limiter, config)]));
    return { name, config, provider, limiter, turn, window: contextWindows(name, config, provider) };
  });
  // A batched endpoint's calls pay the batch rate (a cache hit replays the usage first recorded).
  const costOf = (m: string, i: number, o: number, endpoint?: string) => ledger.costOf(m, i, o, endpoint !== undefined && endpoints.get(endpoint).provider.batched === true);
  const handle = stackCalls(callCore({ shutdown: shutdown.signal, costOf, redact: redactor.text, now }), [
    ledgerLayer(ledger),
    observeCalls(observer),
    auditCacheHits(audit),
    cacheLayer(createResponseCache(opts.cache)),
  ]);
  let closed = false;
  const call = frontDoor(handle, endpoints.get, () => closed, opts.maxTokens ?? {});
  return {
    ledger,
    health: health.view,
    stopWaiting: () => health.stopWaiting(),
    // A batched endpoint is not asked online: its first batch is its check.
    preflight: (seats, signal) => preflight(seats.filter((s) => !endpoints.get(s.endpoint).provider.batched), endpoints.get, requestFor, signal ? AbortSignal.any([signal, shutdown.signal]) : shutdown.signal),
    structured: (c) => call(c, `structured:${c.schemaName}`, c.schema, c.schemaName),
    text: (c) => call(c, 'text'),
    async close() {
      if (closed) return;
      closed = true;
      shutdown.abort(new Error('gateway closed'));
      health.close();
      const all = endpoints.built();
      await Promise.all(all.map((e) => e.limiter.close()));
      await Promise.all(all.map((e) => e.provider.close?.()));
      await audit.close();
    },
  };
}

type Build = (name: string, config: EndpointConfig, provider: Provider, limiter: Limiter) => Endpoint;

/** Endpoints are built lazily: one nobody calls needs no pool and no valid base_url. */
function endpointRegistry(opts: GatewayOptions, env: NodeJS.ProcessEnv, build: Build): { get(name: string): Endpoint; built(): Endpoint[] } {
  const providerFor = opts.providerFor ?? ((name: string, endpoint: EndpointConfig) => createOpenAIProvider(name, endpoint, { env }));
  const made = new Map<string, Endpoint>();
  return {
    get(name) {
      let e = made.get(name);
      if (e) return e;
      const config = Object.hasOwn(opts.endpoints, name) ? opts.endpoints[name] : undefined;
      if (!config) throw new Error(`unknown endpoint "${name}" (known: ${Object.keys(opts.endpoints).join(', ') || 'none'})`);
      e = build(name, config, providerFor(name, config), createLimiter(config));
      made.set(name, e);
      return e;
    },
    built: () => [...made.values()],
  };
}

interface AnyCall {
  ctx: CallContext;
  seat: ParticipantConfig;
  messages: ChatMessage[];
  signal?: AbortSignal;
  onQueue?: (waiting: boolean) => void;
}

/** What structured() and text() share: checks, the request built from the seat, then the layers. */
function frontDoor(handle: CallHandler, endpoint: (name: string) => Endpoint, isClosed: () => boolean, maxTokens: MaxTokensConfig) {
  return async <T>(c: AnyCall, kind: string, schema?: ZodType<T>, schemaName?: string): Promise<CallResult<T>> => {
    if (isClosed()) throw new Error('gateway is closed');
    const ep = endpoint(c.seat.endpoint);
    const request = requestFor(c.seat, budgetFor(c.seat, c.ctx.phase, ep.config, maxTokens), c.messages, schema ? jsonSchemaOf(schema) : undefined);
    return handle<T>({
      ctx: c.ctx,
      seat: c.seat,
      kind,
      request,
      ...(schema ? { schema, schemaName: schemaName ?? kind } : {}),
      ...(c.signal ? { signal: c.signal } : {}),
      ...(c.onQueue ? { onQueue: c.onQueue } : {}),
      endpoint: ep,
    });
  };
}

function requestFor(seat: ParticipantConfig, maxTokens: number | undefined, messages: ChatMessage[], jsonSchema: Record<string, unknown> | undefined): ChatRequest {
  return {
    model: seat.model,
    messages,
    temperature: seat.temperature,
    ...(seat.top_p !== undefined ? { top_p: seat.top_p } : {}),
    ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
    ...(seat.seed !== undefined ? { seed: seat.seed } : {}),
    ...(seat.reasoning_effort !== undefined ? { reasoning_effort: seat.reasoning_effort } : {}),
    ...(seat.extra_body !== undefined ? { extra_body: seat.extra_body } : {}),
    // Not in the cache key (cacheKey reads the sampling fields only), so old entries stay valid.
    ...(jsonSchema ? { json_schema: jsonSchema } : {}),
  };
}
