/**
 * Provider over the official `openai` client, for any OpenAI-compatible server.
 *
 * - One client and one keep-alive connection pool per endpoint (paper App. L: separate pools avoid
 *   TLS-handshake races when jurors fan out in parallel).
 * - The client's own retries are off (maxRetries: 0): the gateway retries, so backoff, limits
 *   and the audit log see every attempt.
 * - The client's timeout bounds the whole attempt, body included, because the fetch it is given
 *   (./pooled-fetch.ts) resolves only after the reply's body is read.
 * - Structured calls send their schema in the endpoint's dialect (./dialect.ts); `auto` finds
 *   it with one probe per endpoint (./dialect-probe.ts).
 * - A reply rejecting a request field becomes a RejectedFieldError (./rejection.ts): not retried.
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { createDialectResolver, PROBE_MAX_TOKENS, PROBE_PROMPT } from './dialect-probe.js';
import { dialectFields } from './dialect.js';
import { toFinishReason } from './finish-reason.js';
import { connectionPool, pooledFetch, ReplyTooLargeError } from './pooled-fetch.js';
import { asContextOverflow, asRejection } from './rejection.js';
import { windowFromModels } from './tokens.js';
import { logger, type Logger } from '../util/log.js';
import { createRedactor, type Redactor } from '../util/redact.js';
import { ProviderError, type ChatRequest, type ChatResponse, type EndpointConfig, type Provider, type WindowSource } from './types.js';

const RETRYABLE_STATUS = new Set([408, 409, 429]);
const ENDPOINT_STATUS = new Set([401, 403, 404]);
const MAX_MESSAGE_CHARS = 500;
/** endpoints.*.max_reply_bytes when an endpoint config is built in code without it */
export const DEFAULT_MAX_REPLY_BYTES = 4 * 1024 * 1024;

export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUS.has(status) || status >= 500;
}

/** `retry-after-ms` (ms), else `retry-after` as seconds or an HTTP-date. */
export function parseRetryAfter(headers: { get(name: string): string | null } | undefined, now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return n;
  }
  const ra = headers.get('retry-after');
  if (ra === null || ra.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Number(ra) * 1000;
  const at = Date.parse(ra);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface OpenAIProviderOptions {
  env?: NodeJS.ProcessEnv;
  /** where `response_format: auto` says which dialect it chose (default: the `llm` log) */
  log?: Logger;
}

/** Who sent the request whose error reply is being read (see SCOPE below). */
export interface RequestScope {
  endpoint: string;
  extraBody: Record<string, unknown> | undefined;
  errorBody?: string;
}

export function createOpenAIProvider(name: string, endpoint: EndpointConfig, opts: OpenAIProviderOptions = {}): Provider {
  if (!endpoint.base_url) throw new Error(`endpoint "${name}" has no base_url`);
  const env = opts.env ?? process.env;
  const apiKey = (endpoint.api_key_env ? env[endpoint.api_key_env] : undefined) || 'not-needed';
  // The key is redacted from every message we produce, whatever its variable is called.
  const redactor = createRedactor(env, [apiKey === 'not-needed' ? undefined : apiKey]);
  const pool = connectionPool(endpoint.max_concurrency);
  // Chat replies only: the model listing of a large router is bigger than any verdict, and read once.
  const fetch = pooledFetch(pool);
  const chatFetch = pooledFetch(pool, endpoint.max_reply_bytes ?? DEFAULT_MAX_REPLY_BYTES);
  const client = clientFor(endpoint, apiKey, chatFetch);

  /** One chat completion with `body`; every failure is a redacted ProviderError. */
  async function send(body: Record<string, unknown>, extraBody: Record<string, unknown> | undefined, signal: AbortSignal): Promise<ChatResponse> {
    if (signal.aborted) throw callerAbort(signal, redactor);
    const scope: RequestScope = { endpoint: name, extraBody };
    try {
      // The client's timeout bounds the whole attempt: pooledFetch resolves only once the
      // reply's body is read.
      const completion = await client.chat.completions.create(body as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, {
        signal,
        timeout: endpoint.timeout_ms,
        fetchOptions: { [SCOPE]: scope } as CallOptions['fetchOptions'],
      });
      return toResponse(completion, redactor, name);
    } catch (err) {
      throw sendFailure(err, signal, redactor, scope, endpoint.timeout_ms);
    }
  }

  /** GET {base_url}/models on the endpoint's own pool, with its headers and key. */
  const getModels = (signal: AbortSignal) => fetch(`${endpoint.base_url!.replace(/\/+$/, '')}/models`, { method: 'GET', headers: { ...endpoint.headers, authorization: `Bearer ${apiKey}` }, signal });

  // The probe sends no sampling knobs: some models refuse any temperature but their own.
  const dialects = createDialectResolver({
    endpoint: name,
    setting: endpoint.response_format,
    log: opts.log ?? logger('llm'),
    send: async (fields, model, signal) => (await send({ model, messages: [{ role: 'user', content: PROBE_PROMPT }], [endpoint.max_tokens_field]: PROBE_MAX_TOKENS, ...fields }, undefined, signal)).content,
  });

  return {
    name,
    async complete(req: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
      if (signal.aborted) throw callerAbort(signal, redactor);
      // Only structured calls carry a schema; free-text turns stay prose.
      const dialect = req.json_schema ? await dialects.dialect(req.model, signal) : undefined;
      const body = chatBody(req, endpoint.max_tokens_field, dialect && req.json_schema ? dialectFields(dialect, req.json_schema) : {});
      const res = await send(body, req.extra_body, signal);
      // The audit line says what the probe chose, not just `auto`.
      return dialect && endpoint.response_format === 'auto' ? { ...res, response_format: dialect } : res;
    },
    async probe(signal: AbortSignal): Promise<void> {
      // Any status below 500 (a 404 from a server without /models included) means it serves.
      let status: number;
      try {
        status = (await getModels(signal)).status; // read whole already: nothing to drain
      } catch (err) {
        const detail = err instanceof Error ? `${err.message}${(err as { code?: string }).code ? ` (${(err as { code?: string }).code})` : ''}` : String(err);
        throw new ProviderError(redactor.text(short(`probe GET /models: ${detail}`)), true, undefined, undefined, 'connection');
      }
      if (status >= 500) throw new ProviderError(`probe GET /models: HTTP ${status}`, true, status);
    },
    async contextWindow(model: string, signal: AbortSignal) {
      // A server without /models (or one that says nothing of context) leaves calls unchecked.
      return contextWindowOf(await getModels(signal), model);
    },
    async close() {
      dialects.close();
      pool.close();
    },
  };
}

/** The context window a GET /models reply gives for `model`; 5xx throws (asked again later). */
async function contextWindowOf(res: Response, model: string): Promise<WindowSource | undefined> {
  if (res.status >= 500) throw new ProviderError(`GET /models: HTTP ${res.status}`, true, res.status);
  if (res.status >= 300) return undefined;
  const body: unknown = await res.json().catch(() => null);
  return windowFromModels(body, model);
}

/** What a failed send throws: a redacted ProviderError (or the caller's own abort). */
function sendFailure(err: unknown, signal: AbortSignal, redactor: Redactor, scope: RequestScope, timeoutMs: number): Error {
  if (err instanceof ProviderError) return err;
  if (signal.aborted) return callerAbort(signal, redactor);
  if (err instanceof APIConnectionTimeoutError) return new ProviderError(`timeout: no complete response within ${timeoutMs} ms`, true, undefined, undefined, 'timeout');
  return toProviderError(err, redactor, scope);
}

/** The chat completion body: sampling knobs, the dialect's format fields, then extra_body last. */
export function chatBody(req: ChatRequest, maxTokensField: string, format: Record<string, unknown>): Record<string, unknown> {
  return {
    model: req.model,
    messages: req.messages.map((m) => ({ role: m.role, content: m.content })),
    temperature: req.temperature,
    top_p: req.top_p,
    [maxTokensField]: req.max_tokens,
    seed: req.seed,
    reasoning_effort: req.reasoning_effort,
    ...format,
    // Provider-specific knobs go last so they can override anything above.
    ...(req.extra_body ?? {}),
  };
}

export function clientFor(endpoint: EndpointConfig, apiKey: string, fetch: typeof globalThis.fetch): OpenAI {
  return new OpenAI({
    apiKey,
    baseURL: endpoint.base_url,
    // Nothing from the ambient OPENAI_* environment may ride along to a third-party endpoint.
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    // Library logs bypass our redactor; the audit log records every attempt instead.
    logLevel: 'off',
    maxRetries: 0,
    timeout: endpoint.timeout_ms,
    defaultHeaders: endpoint.headers,
    fetch: keepErrorBodies(fetch),
  });
}

function callerAbort(signal: AbortSignal, redactor: Redactor): ProviderError {
  const r: unknown = signal.reason;
  const why = r instanceof Error ? r.message : typeof r === 'string' ? r : 'aborted';
  return new ProviderError(redactor.text(`aborted by caller: ${why}`), false);
}

export function toResponse(completion: OpenAI.Chat.ChatCompletion, redactor: Redactor, endpoint: string): ChatResponse {
  // The client hands over the body as text when it is not JSON (an HTML page from a proxy or a
  // base_url that is not the API): say so rather than "no choices".
  if (typeof completion !== 'object' || completion === null) throw new ProviderError(redactor.text(short(`the server answered HTTP 200 with a body that is not JSON (${describeBody(completion)}): is endpoints.${endpoint}.base_url the API root (…/v1), not a web page or a proxy's login?`)), true, 200);
  const choice = completion.choices?.[0];
  // A 200 without choices is a broken gateway/proxy reply, worth another try.
  if (!choice) throw new ProviderError('the server answered HTTP 200 with JSON that has no choices (not a chat completion)', true, 200);
  const msg = choice.message as unknown as Record<string, unknown>;
  const content = typeof msg.content === 'string' ? msg.content : '';
  const reasoning = typeof msg.reasoning_content === 'string' ? msg.reasoning_content : typeof msg.reasoning === 'string' ? msg.reasoning : undefined;
  if (content === '' && typeof msg.refusal === 'string' && msg.refusal) {
    throw new ProviderError(redactor.text(`model refused: ${short(msg.refusal)}`), false, 200);
  }
  return {
    content,
    ...(reasoning ? { reasoning } : {}),
    finish_reason: toFinishReason(choice.finish_reason),
    tokens_in: nonNegInt(completion.usage?.prompt_tokens),
    tokens_out: nonNegInt(completion.usage?.completion_tokens),
  };
}

function describeBody(body: unknown): string {
  const text = typeof body === 'string' ? body.trim() : String(body);
  if (text === '') return 'empty';
  return `${/^<(!doctype|html)/i.test(text) ? 'HTML' : 'text'}, starting "${text.slice(0, 60)}"`;
}

function nonNegInt(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.round(n) : 0;
}

function short(s: string): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length <= MAX_MESSAGE_CHARS ? one : `${one.slice(0, MAX_MESSAGE_CHARS - 1)}…`;
}

/**
 * The request's scope rides in its fetch options under this key (the client passes its
 * `fetchOptions` through to `fetch` untouched), so keepErrorBodies can hand the error body to
 * toProviderError: the client keeps only a JSON body's `error` member, and FastAPI-style servers
 * put the detail elsewhere. An option, not an AsyncLocalStorage: async context tracking adds a
 * hook to every promise of the process (whole-run benchmark, docs/benchmarks.md).
 */
const SCOPE = Symbol('reasoning-jury request scope');
type CallOptions = NonNullable<Parameters<OpenAI['chat']['completions']['create']>[1]>;

function keepErrorBodies(fetch: typeof globalThis.fetch): typeof globalThis.fetch {
  return (async (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) => {
    const scope = (init as { [SCOPE]?: RequestScope } | undefined)?.[SCOPE];
    const res = await fetch(input, init);
    if (res.status < 400 || !scope) return res;
    const text = await res.text();
    scope.errorBody = text;
    return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
  }) as typeof globalThis.fetch;
}

/** Maps anything the client throws to a ProviderError with a redacted, bounded message. */
export function toProviderError(err: unknown, redactor: Redactor, scope?: RequestScope): ProviderError {
  if (err instanceof APIUserAbortError) return new ProviderError('aborted', false);
  if (err instanceof APIConnectionError) {
    const cause = (err as { cause?: unknown }).cause;
    // The server answered, at length: this call's reply, not the endpoint, is at fault.
    if (cause instanceof ReplyTooLargeError) return new ProviderError(`${cause.message} (endpoints.${scope?.endpoint ?? '?'}.max_reply_bytes); not retried`, false, 200);
    const detail = cause instanceof Error ? `${cause.message}${cause.cause instanceof Error ? ` (${cause.cause.message})` : ''}` : '';
    return new ProviderError(redactor.text(short(`connection error: ${err.message}${detail ? ` ${detail}` : ''}`)), true, undefined, undefined, 'connection');
  }
  if (err instanceof APIError && typeof err.status === 'number') {
    const status = err.status;
    // A field the server will not take fails the same way every time: no retry, and say which setting sends it.
    const reply = { status, message: err.message, ...(scope?.errorBody !== undefined ? { body: scope.errorBody } : {}), param: typeof err.param === 'string' ? err.param : null };
    // The client's message when it kept one (`error.message`), else the body as sent.
    const said = err.error !== undefined || scope?.errorBody === undefined ? err.message.replace(/^\d{3} /, '') : scope.errorBody;
    // 401/403/404 are the endpoint's faults (./outage.ts), whatever field the body mentions.
    const rejected = scope && !ENDPOINT_STATUS.has(status) ? (asContextOverflow(reply, scope.endpoint, short(said), redactor.text) ?? asRejection(reply, scope.endpoint, scope.extraBody, short(said), redactor.text)) : undefined;
    if (rejected) return rejected;
    return new ProviderError(redactor.text(short(`HTTP ${err.message}`)), isRetryableStatus(status), status, isRetryableStatus(status) ? parseRetryAfter(err.headers) : undefined);
  }
  // A body labelled JSON that does not parse: a flaky proxy more often than a permanent condition.
  if (err instanceof SyntaxError) return new ProviderError(redactor.text(short(`the server's reply is not valid JSON though labelled so: ${err.message}`)), true);
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return new ProviderError(redactor.text(short(`unexpected error: ${message}`)), true);
}
