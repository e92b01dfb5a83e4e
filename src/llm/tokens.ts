/**
 * Token budgets and context windows.
 *
 * - Every call is sent with a max_tokens: the seat's own, else the config's `max_tokens.<phase>`,
 *   else DEFAULT_MAX_TOKENS for its kind of call. A server left to its own default may generate
 *   until its context is full, long after we stopped waiting for the reply.
 * - A prompt whose estimated size plus max_tokens exceeds the model's context window fails before
 *   it is sent (PromptTooLargeError), with the sizes in the message. The window comes from the
 *   endpoint's `context_window`, else from what the server's GET /models says about the model.
 */
import { DEFAULT_MAX_TOKENS, type MaxTokensConfig } from '../../schemas/config.js';
import type { Phase } from '../../schemas/usage.js';
import type { ChatMessage, EndpointConfig, ParticipantConfig, WindowSource } from './types.js';
import { ReasoningJuryError } from '../util/errors.js';

export { DEFAULT_MAX_TOKENS };

/**
 * The max_tokens a seat's call of `phase` is sent with: the seat's own, else the configured or
 * built-in default for the phase. Kind `local` gets no default: its engine bounds a reply by the
 * context it has and sizes its grammar from an explicit budget only.
 */
export function budgetFor(seat: Pick<ParticipantConfig, 'max_tokens'>, phase: Phase, endpoint: Pick<EndpointConfig, 'kind'>, defaults: MaxTokensConfig = {}): number | undefined {
  if (seat.max_tokens !== undefined) return seat.max_tokens;
  if (endpoint.kind === 'local') return undefined;
  return defaults[phase] ?? DEFAULT_MAX_TOKENS[phase];
}

/**
 * Characters per token of the estimate. ceil(chars / 4) is the usual rule of thumb for English
 * with BPE tokenizers (the simulator counts the same way); text dense in digits and symbols takes
 * more tokens, so the estimate errs towards letting a prompt through: the server is the last word.
 */
export const CHARS_PER_TOKEN_ESTIMATE = 4;
/** role markers and separators a chat template adds around each message */
export const TOKENS_PER_MESSAGE_ESTIMATE = 4;

export function estimatePromptTokens(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages) n += Math.ceil(m.content.length / CHARS_PER_TOKEN_ESTIMATE) + TOKENS_PER_MESSAGE_ESTIMATE;
  return n;
}

/** A prompt that cannot fit the model's context window with its max_tokens; nothing was sent. */
export class PromptTooLargeError extends ReasoningJuryError {
  override get kind() {
    return 'internal' as const;
  }
  constructor(
    message: string,
    readonly promptTokens: number,
    readonly maxTokens: number,
    readonly contextWindow: number,
  ) {
    super(message);
    this.name = 'PromptTooLargeError';
  }
}

/** Throws PromptTooLargeError when prompt + max_tokens cannot fit `window`; `who` prefixes the message. */
export function checkFit(messages: readonly ChatMessage[], maxTokens: number | undefined, window: WindowSource | undefined, who = ''): void {
  if (!window) return;
  const prompt = estimatePromptTokens(messages);
  const budget = maxTokens ?? 0;
  if (prompt + budget <= window.tokens) return;
  throw new PromptTooLargeError(
    `${who}prompt does not fit the context window: ~${prompt} prompt tokens (estimate, ${CHARS_PER_TOKEN_ESTIMATE} chars/token) + max_tokens ${budget} = ${prompt + budget} > ${window.tokens} tokens (${window.from}); not sent`,
    prompt,
    budget,
    window.tokens,
  );
}

/**
 * The budget a cut reply is asked again with: `retry` capped by the room the prompt leaves in the
 * window; undefined when none is configured or it would be no larger than `used`.
 */
export function largerBudget(used: number | undefined, retry: number | undefined, messages: readonly ChatMessage[], window: WindowSource | undefined): number | undefined {
  if (retry === undefined || used === undefined) return undefined;
  const room = roomFor(messages, window);
  const budget = room === undefined ? retry : Math.min(retry, room);
  return budget > used ? budget : undefined;
}

/** Tokens left for a reply to `messages` in `window`; undefined when the window is unknown. */
export function roomFor(messages: readonly ChatMessage[], window: WindowSource | undefined): number | undefined {
  return window ? window.tokens - estimatePromptTokens(messages) : undefined;
}

// What OpenAI-compatible servers say about a model's context in GET /models, most specific first:
// vLLM / SGLang `max_model_len`, OpenRouter `context_length`, LM Studio `max_context_length`,
// llama.cpp server `meta.n_ctx` (the running context) before `meta.n_ctx_train` (the trained one).
const WINDOW_FIELDS: ReadonlyArray<[string, (e: Record<string, unknown>) => unknown]> = [
  ['max_model_len', (e) => e.max_model_len],
  ['context_length', (e) => e.context_length],
  ['max_context_length', (e) => e.max_context_length],
  ['meta.n_ctx', (e) => (e.meta as Record<string, unknown> | undefined)?.n_ctx],
  ['meta.n_ctx_train', (e) => (e.meta as Record<string, unknown> | undefined)?.n_ctx_train],
];

/**
 * The context window a GET /models body gives for `model`: its entry by id, else the only entry
 * (single-model servers such as llama.cpp answer to any model name). Undefined when it says nothing.
 */
export function windowFromModels(body: unknown, model: string): WindowSource | undefined {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return undefined;
  const entries = data.filter((e): e is Record<string, unknown> => e !== null && typeof e === 'object');
  const entry = entries.find((e) => e.id === model) ?? (entries.length === 1 ? entries[0] : undefined);
  if (!entry) return undefined;
  for (const [name, read] of WINDOW_FIELDS) {
    const v = read(entry);
    if (typeof v === 'number' && Number.isInteger(v) && v > 0) return { tokens: v, from: `GET /models ${name}` };
  }
  return undefined;
}
