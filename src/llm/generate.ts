/**
 * Generation over a model bound to one logical call:
 *
 *   generateObject: messages + zod schema -> validated object. JSON is extracted (fences, prose,
 *     <think> tags), repaired with jsonrepair as a last resort and validated; an invalid reply
 *     gets exactly one corrective re-ask. Without a valid object it throws
 *     NoObjectGeneratedError (text, finish reason, usage).
 *   generateText: one turn, the reply as it is.
 *
 * Either way a reply cut at max_tokens (finish_reason `length`) is never repaired or accepted:
 * the turn is asked again once with the seat's larger `truncation_retry_max_tokens` when it has
 * one (and the context window leaves room), else the call fails as `truncated at max_tokens (N)`.
 */
import { z, type ZodType } from 'zod';
import { parseStructured } from './json.js';
import { isEndpointOutage } from './outage.js';
import type { Completion, ModelCall, ReplyCheck, TurnKind } from './model.js';
import { truncatedAt, type CallResult, type ChatMessage, type ChatRequest, type ModelCallError } from './types.js';
import type { CallUsage } from '../../schemas/usage.js';

const REASK_INSTRUCTION = 'Reply again with only the corrected JSON object: no prose, no markdown fences.';

/** A model bound to one logical call: its turns share one meter, one signal and one clock. */
export interface CallModel {
  /** one turn, retries included; `check` judges each reply for the audit line */
  turn(req: ChatRequest, turn: TurnKind, check?: (c: Completion) => ReplyCheck): Promise<Completion>;
  /** the budget a turn of `req` cut at its max_tokens is asked again with; undefined: none */
  largerBudget(req: ChatRequest): number | undefined;
  /** the call's usage so far (all attempts) */
  usage(outcome: 'ok' | 'error'): CallUsage;
  /** the error ending the call: ModelCallError, or NoObjectGeneratedError when `reply` is given */
  fail(reason: string, reply?: Completion): ModelCallError;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string; truncated: boolean };

export interface ObjectRequest<T> {
  request: ChatRequest;
  schema: ZodType<T>;
  schemaName: string;
}

/** A reply as the call's value: validated against its schema, or the text itself. */
export function parseReply<T>(call: Pick<ModelCall<T>, 'schema'>, content: string): Parsed<T> {
  if (!call.schema) return { ok: true, value: content as T };
  const r = parseStructured(content, call.schema);
  return r.ok ? { ok: true, value: r.value } : { ok: false, error: r.error, truncated: false };
}

type Judge<T> = (c: Completion, req: ChatRequest) => Parsed<T>;

export async function generateText(model: CallModel, request: ChatRequest): Promise<CallResult<string>> {
  const judge: Judge<string> = (c, req) => (c.finish_reason === 'length' ? cut(req) : { ok: true, value: c.content });
  const { c, parsed, req } = await budgetedTurn(model, request, 'initial', judge);
  if (!parsed.ok) throw model.fail(truncatedAt(req.max_tokens), c);
  return resultOf(model, parsed.value, c);
}

export async function generateObject<T>(model: CallModel, opts: ObjectRequest<T>): Promise<CallResult<T>> {
  const judge = replyJudge(opts.schema);
  const first = await budgetedTurn(model, opts.request, 'initial', judge);
  if (first.parsed.ok) return resultOf(model, first.parsed.value, first.c);
  if (first.parsed.truncated) throw model.fail(truncatedAt(first.req.max_tokens), first.c);
  // Exactly one corrective turn: show the model its reply and what was wrong with it.
  const messages: ChatMessage[] = [
    ...first.req.messages,
    { role: 'assistant', content: first.c.content },
    { role: 'user', content: `Your previous reply could not be used: it is not valid JSON for ${opts.schemaName}.\n${first.parsed.error}\n${REASK_INSTRUCTION}` },
  ];
  const second = await objectTurn(model, { ...first.req, messages }, 'reask', judge);
  if (second.parsed.ok) return resultOf(model, second.parsed.value, second.c);
  throw model.fail(second.parsed.truncated ? truncatedAt(second.req.max_tokens) : `invalid JSON after one re-ask: ${second.parsed.error}`, second.c);
}

interface Turned<T> {
  c: Completion;
  parsed: Parsed<T>;
  /** the request the reply answers (its max_tokens is the budget that cut it, if it was cut) */
  req: ChatRequest;
}

/** A turn, and once more with a larger budget when its reply was cut and one is configured. */
async function budgetedTurn<T>(model: CallModel, req: ChatRequest, turn: TurnKind, judge: Judge<T>): Promise<Turned<T>> {
  const larger = model.largerBudget(req);
  const first = await objectTurn(model, req, turn, judge, larger !== undefined);
  if (first.parsed.ok || !first.parsed.truncated || larger === undefined) return first;
  return objectTurn(model, { ...req, max_tokens: larger }, 'larger_budget', judge);
}

async function objectTurn<T>(model: CallModel, req: ChatRequest, turn: TurnKind, judge: Judge<T>, retryCut = false): Promise<Turned<T>> {
  let c: Completion;
  try {
    c = await model.turn(req, turn, (reply) => checkOf(judge(reply, req), turn, retryCut));
  } catch (err) {
    // An endpoint's fault (down too long, a refused key) is no answer about this record: it stays unjudged.
    if (isEndpointOutage(err)) throw err;
    throw model.fail(messageOf(err));
  }
  return { c, parsed: judge(c, req), req };
}

function cut(req: ChatRequest): Parsed<never> {
  return { ok: false, error: truncatedAt(req.max_tokens), truncated: true };
}

/** Parses each reply once: the audit line's check and the caller share the result. */
function replyJudge<T>(schema: ZodType<T>): Judge<T> {
  let last: Completion | null = null;
  let parsed: Parsed<T> = { ok: false, error: '', truncated: false };
  return (c, req) => {
    if (c === last) return parsed;
    last = c;
    // A cut reply is not repaired: jsonrepair would close it and silently drop what was cut.
    parsed = c.finish_reason === 'length' ? cut(req) : parseReply({ schema }, c.content);
    return parsed;
  };
}

function checkOf(p: Parsed<unknown>, turn: TurnKind, retryCut: boolean): ReplyCheck {
  if (p.ok) return { outcome: 'ok', error: null };
  if (p.truncated) return { outcome: retryCut ? 'truncated' : 'error', error: p.error };
  return { outcome: turn === 'reask' ? 'invalid_json' : 'reask', error: p.error };
}

function resultOf<T>(model: CallModel, value: T, c: Completion): CallResult<T> {
  return {
    value,
    raw: c.content,
    ...(c.reasoning !== undefined ? { reasoning: c.reasoning } : {}),
    usage: model.usage('ok'),
    cached: false,
    finish_reason: c.finish_reason,
  };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// z.toJSONSchema walks the whole schema; jury calls reuse a handful of schemas, so once each.
const jsonSchemas = new WeakMap<ZodType, Record<string, unknown> | null>();

/** The JSON Schema a model should follow for `schema`; undefined when zod cannot express it. */
export function jsonSchemaOf(schema: ZodType): Record<string, unknown> | undefined {
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
