import type { ZodType } from 'zod';
import type { EndpointConfig, ParticipantConfig } from '../../schemas/config.js';
import type { CallUsage, Phase } from '../../schemas/usage.js';
import type { FinishReason } from './finish-reason.js';
import { ReasoningJuryError } from '../util/errors.js';

export type { FinishReason };

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** What a provider is asked: one chat completion, already fully specified. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  seed?: number;
  reasoning_effort?: 'low' | 'medium' | 'high';
  extra_body?: Record<string, unknown>;
  /**
   * JSON Schema of the reply a structured call expects (from its zod schema). Providers that can
   * constrain decoding (the local engine) use it; HTTP providers ignore it. Not in the cache key.
   */
  json_schema?: Record<string, unknown>;
}

/** What a provider returns for one completion: the reply, why it ended, and its usage. */
export interface ChatResponse {
  content: string;
  /** Reasoning text when the endpoint returns it (reasoning_content / reasoning). */
  reasoning?: string;
  /** Why generation stopped; providers fill it, an absent one reads as `stop` (stand-ins in tests). */
  finish_reason?: FinishReason;
  tokens_in: number;
  tokens_out: number;
  /** the structured-output dialect the request went out with, when the provider chose it (`response_format: auto`) */
  response_format?: string;
}

/**
 * The one door to a model. Implementations: OpenAI-compatible HTTP, the local engine, the simulator.
 * `complete` throws ProviderError for failures; `retryable` and `retryAfterMs` steer the retry loop.
 */
export interface Provider {
  readonly name: string;
  /** `ctx` is given to providers that set `batched` (and only to them). */
  complete(req: ChatRequest, signal: AbortSignal, ctx?: CompletionContext): Promise<ChatResponse>;
  /**
   * Calls go out through a Batch API (./providers/batch/): each waits for its batch, is told its
   * request's stable key, pays the model's batch rate, and is left out of the preflight.
   */
  readonly batched?: boolean;
  /**
   * A cheap request that tells whether the server is serving at all (HTTP: GET /models);
   * resolves when it answers, throws ProviderError when it cannot be reached or answers 5xx.
   * The endpoint's breaker probes with it while the endpoint is down.
   */
  probe?(signal: AbortSignal): Promise<void>;
  /**
   * What the server says about `model`'s context window (HTTP: GET /models); undefined when it
   * says nothing; throws when it cannot be asked (it is asked again later).
   */
  contextWindow?(model: string, signal: AbortSignal): Promise<WindowSource | undefined>;
  close?(): Promise<void>;
}

/** What a batched provider is told of an attempt besides its request. */
export interface CompletionContext {
  /**
   * The request's stable key: the response cache's key of it (endpoint identity, model,
   * sampling, messages, sample_index, kind), so a re-run gives the same call the same key.
   */
  key: string;
}

/** A model's context window in tokens, and where the number came from (for messages). */
export interface WindowSource {
  tokens: number;
  /** e.g. "endpoints.vllm.context_window" or "GET /models max_model_len" */
  from: string;
}

/**
 * The tiny structured question every OpenAI-compatible endpoint may be asked besides the jury's
 * own prompts (the `response_format: auto` probe, the run's preflight); servers that script
 * replies (the simulator) answer it with `{"ok": true}`.
 */
export const PROBE_PROMPT = 'Answer with a JSON object whose only key "ok" is the boolean true.';

/** Failures that say the server could not be reached or did not answer, whatever was asked. */
export type ReachFailure = 'connection' | 'timeout';

export class ProviderError extends ReasoningJuryError {
  override get kind() {
    return 'internal' as const;
  }
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
    readonly retryAfterMs?: number,
    /** set when the server was not reached (refused, reset, DNS) or gave no answer in time */
    readonly reach?: ReachFailure,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** Who is calling and why: written to the audit log and the ledger. */
export interface CallContext {
  record_id: string;
  phase: Phase;
  /** juror id, "consolidator", "moderator", ... */
  participant: string;
  /** free text naming the code path, e.g. "jury.phase1" */
  caller: string;
  /** distinguishes repeated identical calls (e.g. deliberation turn number); part of the cache key. */
  sample_index?: number;
}

export interface StructuredCall<T> {
  ctx: CallContext;
  seat: ParticipantConfig;
  messages: ChatMessage[];
  schema: ZodType<T>;
  /** short name for error messages and the audit log, e.g. "JudgementOutput" */
  schemaName: string;
  signal?: AbortSignal;
  /**
   * Told `true` when an attempt of this call starts waiting for a slot in our own limiter and
   * `false` when it leaves (dispatched, or given up): deadlines that must not count our queue
   * (the Phase 1 ceiling) pause in between.
   */
  onQueue?: (waiting: boolean) => void;
}

export interface TextCall {
  ctx: CallContext;
  seat: ParticipantConfig;
  messages: ChatMessage[];
  signal?: AbortSignal;
  /** as StructuredCall.onQueue */
  onQueue?: (waiting: boolean) => void;
}

export interface CallResult<T> {
  value: T;
  raw: string;
  reasoning?: string;
  usage: CallUsage;
  /** true when served from the response cache (never part of a verdict, so replays stay identical). */
  cached: boolean;
  /** why the (last) reply ended; the gateway always fills it, cache hits of old entries say `stop`; never `length` */
  finish_reason?: FinishReason;
}

/** A failed logical call; usage covers all attempts so the ledger still counts them. */
export class ModelCallError extends ReasoningJuryError {
  override get kind() {
    return 'internal' as const;
  }
  constructor(
    message: string,
    readonly usage: CallUsage,
  ) {
    super(message);
    this.name = 'ModelCallError';
  }
}

/** The reason a call gives when its reply was cut at max_tokens: never repaired into a result. */
export const TRUNCATED_REASON = 'truncated at max_tokens';

/** TRUNCATED_REASON with the budget the cut reply had, e.g. `truncated at max_tokens (2048)`. */
export function truncatedAt(maxTokens: number | undefined): string {
  return `${TRUNCATED_REASON} (${maxTokens ?? "none sent: the server's own limit"})`;
}

/**
 * A call that got replies but no usable one: the last reply was truncated (structured or text),
 * or a structured reply still invalid after the one re-ask. Still a ModelCallError (usage covers every attempt), so callers
 * that only know ModelCallError keep working; `reason` is the message without who failed.
 */
export class NoObjectGeneratedError extends ModelCallError {
  readonly text: string;
  readonly finishReason: FinishReason;
  readonly reason: string;

  constructor(message: string, usage: CallUsage, details: { text: string; finishReason: FinishReason; reason: string }) {
    super(message, usage);
    this.name = 'NoObjectGeneratedError';
    this.text = details.text;
    this.finishReason = details.finishReason;
    this.reason = details.reason;
  }
}

/** What jury code sees of the model layer. */
export interface ModelGateway {
  structured<T>(call: StructuredCall<T>): Promise<CallResult<T>>;
  text(call: TextCall): Promise<CallResult<string>>;
}

export type { EndpointConfig, ParticipantConfig };
