/**
 * Audit layers (paper App. L): one line per HTTP attempt, one per cache hit, written through the
 * audit log's redactor (src/llm/audit.ts). Field order and values are those the gateway always
 * wrote; `finish_reason` is added to lines that carry a reply, `sampling` to every attempt's line.
 */
import { hashMessages } from '../cache.js';
import type { AuditEntry, AuditLog, AuditSampling } from '../audit.js';
import type { AttemptLayer, CallInfo, CallLayer, Completion, ReplyCheck } from '../model.js';
import type { CallContext, ChatMessage, ChatRequest, EndpointConfig, ParticipantConfig, ProviderError } from '../types.js';

type BaseFields = Pick<AuditEntry, 'caller' | 'phase' | 'participant' | 'record_id' | 'sample_index' | 'model' | 'endpoint' | 'kind'>;

const FINE: ReplyCheck = { outcome: 'ok', error: null };

function baseFields(ctx: CallContext, seat: ParticipantConfig, kind: string): BaseFields {
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

function replyFields(c: Pick<Completion, 'content' | 'reasoning' | 'tokens_in' | 'tokens_out'>): Pick<AuditEntry, 'response' | 'reasoning' | 'usage'> {
  return { response: c.content, reasoning: c.reasoning ?? null, usage: { tokens_in: c.tokens_in, tokens_out: c.tokens_out } };
}

/** What an attempt was sent with: the sampling fields of the request and how JSON was asked for. */
export function samplingOf(req: ChatRequest, endpoint: Pick<EndpointConfig, 'response_format'>, chosen?: string): AuditSampling {
  return {
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    ...(req.top_p !== undefined ? { top_p: req.top_p } : {}),
    ...(req.max_tokens !== undefined ? { max_tokens: req.max_tokens } : {}),
    ...(req.seed !== undefined ? { seed: req.seed } : {}),
    ...(req.reasoning_effort !== undefined ? { reasoning_effort: req.reasoning_effort } : {}),
    // Free-text calls carry no schema and are never constrained, whatever the endpoint says.
    // `auto` is replaced by the dialect the probe chose once a reply says which.
    response_format: req.json_schema ? (chosen ?? endpoint.response_format) : 'none',
  };
}

/** Attempt layer; sits inside the usage layer (attempt number) and outside redaction (errors). */
export function auditAttempts(log: AuditLog, now: () => number, endpoint: Pick<EndpointConfig, 'response_format'>): AttemptLayer {
  // One hash per turn's messages, however many attempts it takes.
  const hashes = new WeakMap<ChatMessage[], string>();
  const hashOf = (m: ChatMessage[]) => hashes.get(m) ?? hashes.set(m, hashMessages(m)).get(m)!;
  return (next) => async (req, a) => {
    const call: CallInfo = a.call;
    const attempt = call.meter.attempts;
    const entered = now();
    let started: number | null = null;
    // latency_ms: from leaving our limiter to the reply (0 if never dispatched); queue_ms: the wait before.
    const timing = () => {
      const t = now();
      return { latency_ms: started === null ? 0 : Math.max(0, Math.round(t - started)), queue_ms: Math.max(0, Math.round((started ?? t) - entered)) };
    };
    const line = (fields: Partial<AuditEntry>, chosen?: string) =>
      log.write({
        ts: new Date().toISOString(),
        ...baseFields(call.ctx, call.seat, call.kind),
        turn: a.turn,
        prompt_hash: hashOf(req.messages),
        messages: req.messages,
        response: null,
        reasoning: null,
        usage: null,
        ...timing(),
        attempt,
        outcome: 'error',
        error: null,
        ...fields,
        sampling: samplingOf(req, endpoint, chosen),
      });
    const onStart = () => {
      started = now(); // attempt latency excludes time spent queued behind the limiter
      a.onStart?.();
    };
    try {
      const c = await next(req, { ...a, onStart });
      const check = a.check ? a.check(c) : FINE;
      await line({ ...replyFields(c), outcome: check.outcome, error: check.error, finish_reason: c.finish_reason }, c.response_format);
      return c;
    } catch (err) {
      const pe = err as ProviderError; // the redaction layer below turns every failure into one
      await line({ outcome: a.willRetry(pe) ? 'retryable_error' : 'error', error: pe.message, ...(pe.status !== undefined ? { http_status: pe.status } : {}) });
      throw err;
    }
  };
}

/** Call layer, outside the cache: a replayed call gets one `cache_hit` line (attempt 0, no turn). */
export function auditCacheHits(log: AuditLog): CallLayer {
  if (!log.enabled) return (next) => next;
  return (next) => async (call) => {
    const res = await next(call);
    if (!res.cached) return res;
    await log.write({
      ts: new Date().toISOString(),
      ...baseFields(call.ctx, call.seat, call.kind),
      prompt_hash: hashMessages(call.request.messages),
      messages: call.request.messages,
      ...replyFields({ content: res.raw, ...(res.reasoning !== undefined ? { reasoning: res.reasoning } : {}), tokens_in: res.usage.tokens_in, tokens_out: res.usage.tokens_out }),
      latency_ms: res.usage.latency_ms,
      attempt: 0,
      outcome: 'cache_hit',
      error: null,
      finish_reason: res.finish_reason ?? 'stop',
    });
    return res;
  };
}
