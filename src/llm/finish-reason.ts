/**
 * Why a model stopped producing its reply, in one small vocabulary whatever the server says.
 * Only `length` changes what the gateway does (a reply cut at max_tokens is never accepted: it is
 * asked again with a larger budget or fails, src/llm/generate.ts); the others are recorded for the
 * audit log and callers.
 */
export type FinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls' | 'error' | 'other';

export const FINISH_REASONS: readonly FinishReason[] = ['stop', 'length', 'content_filter', 'tool_calls', 'error', 'other'];

// What OpenAI-compatible servers put in choices[0].finish_reason, beyond our own names.
const ALIASES: Record<string, FinishReason> = {
  function_call: 'tool_calls',
  max_tokens: 'length',
  end_turn: 'stop',
  stop_sequence: 'stop',
  eos: 'stop',
};

export function isFinishReason(value: unknown): value is FinishReason {
  return typeof value === 'string' && (FINISH_REASONS as readonly string[]).includes(value);
}

/** Maps a server's finish_reason; a missing or unknown one is `other`. */
export function toFinishReason(raw: unknown): FinishReason {
  if (typeof raw !== 'string') return 'other';
  const r = raw.toLowerCase();
  if (isFinishReason(r)) return r;
  return Object.hasOwn(ALIASES, r) ? ALIASES[r]! : 'other';
}
