/**
 * The contract between the gateway's layers. Two levels, each a function that layers wrap:
 *
 *   Attempt      one HTTP attempt:  retry > usage > audit > observe > redact > limit > provider
 *   CallHandler  one logical call:  ledger > observe > audit (cache hits) > cache > generate
 *
 * An attempt layer takes the next Attempt and returns one; the retry layer turns an Attempt into
 * a TurnModel (one turn, retries included), which generateObject / generateText drive.
 */
import type { ZodType } from 'zod';
import type { EndpointConfig } from '../../schemas/config.js';
import type { FinishReason } from './finish-reason.js';
import type { CallContext, CallResult, ChatRequest, ChatResponse, ParticipantConfig, Provider, WindowSource } from './types.js';

/** A provider's reply after normalisation: finish_reason is always known. */
export interface Completion {
  content: string;
  reasoning?: string;
  finish_reason: FinishReason;
  tokens_in: number;
  tokens_out: number;
  /** see ChatResponse.response_format */
  response_format?: string;
}

/** Counters of one logical call, across its retries and its re-ask. */
export interface CallMeter {
  attempts: number;
  tokens_in: number;
  tokens_out: number;
}

/** What every layer may know about the logical call an attempt belongs to. */
export interface CallInfo {
  ctx: CallContext;
  seat: ParticipantConfig;
  /** "text" or "structured:<schemaName>" */
  kind: string;
  meter: CallMeter;
  /** the caller's hook (StructuredCall.onQueue), called by the limit layer */
  onQueue?: (waiting: boolean) => void;
}

/** "initial"; "reask", the one corrective turn; "larger_budget", a cut turn asked again with more max_tokens */
export type TurnKind = 'initial' | 'reask' | 'larger_budget';

/** How a call judged a reply the moment it arrived (for the audit line). */
export interface ReplyCheck {
  outcome: 'ok' | 'reask' | 'invalid_json' | 'truncated' | 'error';
  error: string | null;
}

export interface TurnInfo {
  call: CallInfo;
  turn: TurnKind;
  signal: AbortSignal;
  /** absent means every reply is fine as it is */
  check?: (c: Completion) => ReplyCheck;
}

export interface AttemptInfo extends TurnInfo {
  /** whether this attempt failing with `err` will be retried (set by the retry layer) */
  willRetry(err: unknown): boolean;
  /** called by the limit layer when the attempt leaves the queue and really starts */
  onStart?: () => void;
}

export type Attempt = (req: ChatRequest, a: AttemptInfo) => Promise<Completion>;
export type AttemptLayer = (next: Attempt) => Attempt;
/** One turn: attempts with retries until a reply or a final error. */
export type TurnModel = (req: ChatRequest, t: TurnInfo) => Promise<Completion>;

/** One endpoint as the call layers see it. */
export interface EndpointHandle {
  name: string;
  config: EndpointConfig;
  turn: TurnModel;
  /** the context window of one of its models, when known (configured or told by the server) */
  window(model: string, signal: AbortSignal): Promise<WindowSource | undefined>;
}

/** One logical call as it travels through the call layers. */
export interface ModelCall<T> {
  ctx: CallContext;
  seat: ParticipantConfig;
  kind: string;
  /** fully built from the seat; json_schema included for structured calls */
  request: ChatRequest;
  /** structured calls only */
  schema?: ZodType<T>;
  schemaName?: string;
  signal?: AbortSignal;
  onQueue?: (waiting: boolean) => void;
  endpoint: EndpointHandle;
}

export type CallHandler = <T>(call: ModelCall<T>) => Promise<CallResult<T>>;
export type CallLayer = (next: CallHandler) => CallHandler;

/** The stable key of an attempt's request, for a batched provider (see CompletionContext). */
export type RequestKeyFn = (req: ChatRequest, a: AttemptInfo) => string;

/** The innermost attempt: ask the provider (a batched one with the request's key), and normalise what it said. */
export function providerAttempt(provider: Provider, keyOf?: RequestKeyFn): Attempt {
  if (provider.batched && keyOf) return async (req, a) => toCompletion(await provider.complete(req, a.signal, { key: keyOf(req, a) }));
  return async (req, a) => toCompletion(await provider.complete(req, a.signal));
}

export function toCompletion(r: ChatResponse): Completion {
  return {
    content: r.content,
    ...(r.reasoning !== undefined ? { reasoning: r.reasoning } : {}),
    finish_reason: r.finish_reason ?? 'stop',
    tokens_in: r.tokens_in,
    tokens_out: r.tokens_out,
    ...(r.response_format !== undefined ? { response_format: r.response_format } : {}),
  };
}

/** `layers` listed outermost first, as in the picture above. */
export function stackAttempt(inner: Attempt, layers: readonly AttemptLayer[]): Attempt {
  return layers.reduceRight((next, layer) => layer(next), inner);
}

export function stackCalls(inner: CallHandler, layers: readonly CallLayer[]): CallHandler {
  return layers.reduceRight((next, layer) => layer(next), inner);
}
