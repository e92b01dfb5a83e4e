import { z } from 'zod';
import { PROBE_PROMPT, type ChatMessage, type ChatRequest } from '../llm/types.js';
import { requestKey, type EngineResult, type SimEngine } from './engine.js';
import { HttpError } from '../util/openai-http.js';

/**
 * One chat completion body from the wire to the reply, shared by the online route and the
 * Batch API: a batch line must get the very bytes an online call of the same body gets.
 */

/** Fixed so identical requests give byte-identical bodies. */
export const CREATED = 1_735_689_600;

/** Tries a batch line gets before it is reported failed: a real batch retries faults internally. */
const BATCH_MAX_ATTEMPTS = 50;

const ContentPart = z.object({ type: z.string(), text: z.string().optional() }).loose();
const WireMessage = z
  .object({ role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']), content: z.union([z.string(), z.array(ContentPart), z.null()]) })
  .loose();
const WireRequest = z
  .object({
    model: z.string().min(1),
    messages: z.array(WireMessage).min(1),
    seed: z.int().nullish(),
    temperature: z.number().nullish(),
    top_p: z.number().nullish(),
    max_tokens: z.int().positive().nullish(),
    max_completion_tokens: z.int().positive().nullish(),
    reasoning_effort: z.string().nullish(),
    stream: z.boolean().nullish(),
    n: z.int().nullish(),
  })
  .loose();

/** The wire body as the ChatRequest the engine understands. */
export function toChatRequest(body: unknown): ChatRequest {
  const r = WireRequest.safeParse(body);
  if (!r.success) throw new HttpError(400, 'invalid_request', `invalid chat completion request: ${z.prettifyError(r.error).replace(/\s+/g, ' ')}`);
  const b = r.data;
  if (b.stream) throw new HttpError(400, 'unsupported', 'the simulator does not stream; send stream: false');
  if (b.n !== undefined && b.n !== null && b.n !== 1) throw new HttpError(400, 'unsupported', 'the simulator returns one choice; n must be 1');
  const messages: ChatMessage[] = b.messages.map((m) => ({
    role: m.role === 'developer' ? 'system' : m.role === 'tool' ? 'user' : m.role,
    content: typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => p.text ?? '').join(''),
  }));
  const req: ChatRequest = { model: b.model, messages };
  if (b.seed != null) req.seed = b.seed;
  if (b.temperature != null) req.temperature = b.temperature;
  if (b.top_p != null) req.top_p = b.top_p;
  const maxTokens = b.max_completion_tokens ?? b.max_tokens;
  if (maxTokens != null) req.max_tokens = maxTokens;
  if (b.reasoning_effort === 'low' || b.reasoning_effort === 'medium' || b.reasoning_effort === 'high') req.reasoning_effort = b.reasoning_effort;
  return req;
}

export type OkResult = Extract<EngineResult, { kind: 'ok' }>;

/** Derived from the request, so a fresh server replays byte-identical bodies. */
export function completionId(key: string, attempt: number): string {
  return `chatcmpl-sim-${key.slice(0, 20)}-${attempt}`;
}

export function completionBody(req: ChatRequest, r: OkResult, id: string): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: r.content, refusal: null };
  if (r.reasoning !== undefined) message.reasoning_content = r.reasoning;
  const usage: Record<string, unknown> = { prompt_tokens: r.tokens_in, completion_tokens: r.tokens_out, total_tokens: r.tokens_in + r.tokens_out };
  if (r.reasoning !== undefined) usage.completion_tokens_details = { reasoning_tokens: Math.ceil(r.reasoning.length / 4) };
  return {
    id,
    object: 'chat.completion',
    created: CREATED,
    model: req.model,
    system_fingerprint: 'reasoning-jury-sim',
    choices: [{ index: 0, message, logprobs: null, finish_reason: r.finish_reason }],
    usage,
  };
}

/** The client's own check (dialect probe, preflight): no task, no faults, the answer it asks for. */
export function isProbe(req: ChatRequest): boolean {
  return req.messages.length === 1 && req.messages[0]!.content === PROBE_PROMPT;
}

const PROBE_RESULT: OkResult = { kind: 'ok', task: 'probe', content: '{"ok": true}', tokens_in: 20, tokens_out: 4, latency_ms: 0, finish_reason: 'stop', format: 'json' };

export function probeBody(req: ChatRequest): Record<string, unknown> {
  return completionBody(req, PROBE_RESULT, 'chatcmpl-sim-probe');
}

export type SettledAnswer =
  | { kind: 'ok'; body: Record<string, unknown>; result: OkResult }
  | { kind: 'error'; status: number; code: string; message: string };

/**
 * What a chat body gets once every fault is retried away: the first attempt that is not a
 * fault, as an online client retrying on a fresh server would end with. Latency is ignored
 * (a batch's delay is the batch's). Errors (bad body, unknown model or task) stay errors.
 */
export function answerSettled(engine: SimEngine, body: unknown): SettledAnswer {
  let req: ChatRequest;
  try {
    req = toChatRequest(body);
  } catch (e) {
    if (e instanceof HttpError) return { kind: 'error', status: e.status, code: e.code, message: e.message };
    throw e;
  }
  if (!engine.modelProfile(req.model)) return { kind: 'error', status: 404, code: 'model_not_found', message: `The model "${req.model}" does not exist in the simulator profile.` };
  if (isProbe(req)) return { kind: 'ok', body: probeBody(req), result: PROBE_RESULT };
  const key = requestKey(req);
  for (let attempt = 1; attempt <= BATCH_MAX_ATTEMPTS; attempt++) {
    const r = engine.respond(req, attempt);
    if (r.kind === 'error') return { kind: 'error', status: r.status, code: r.code, message: r.message };
    if (r.kind === 'ok') return { kind: 'ok', body: completionBody(req, r, completionId(key, attempt)), result: r };
  }
  return { kind: 'error', status: 500, code: 'server_error', message: `simulated faults on all ${BATCH_MAX_ATTEMPTS} tries of this request` };
}
