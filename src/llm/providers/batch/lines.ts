/**
 * The JSONL lines of a batch, in the format the OpenAI Batch API, vLLM's `run-batch` and the
 * simulator share: one request line per call, `{custom_id, method, url, body}`, and one result
 * line per request, `{custom_id, response: {status_code, body}, error}`. A request's body is the
 * one the online provider would send (same sampling fields, same structured-output dialect).
 */
import type OpenAI from 'openai';
import type { EndpointConfig } from '../../../../schemas/config.js';
import { dialectFields, type Dialect } from '../../dialect.js';
import { chatBody, isRetryableStatus, toResponse } from '../../openai-provider.js';
import type { Redactor } from '../../../util/redact.js';
import { ProviderError, type ChatRequest, type ChatResponse } from '../../types.js';

export const CHAT_PATH = '/v1/chat/completions';

/**
 * The structured-output dialect of a batched endpoint. `auto` would probe the server with an
 * online call, which batch mode makes none of: it stands for `json_schema`, the dialect of the
 * OpenAI Batch API and of vLLM.
 */
export function batchDialect(endpoint: EndpointConfig): Dialect {
  return endpoint.response_format === 'auto' ? 'json_schema' : endpoint.response_format;
}

/** One request line (newline included) for `req` under `customId`. */
export function requestLine(customId: string, req: ChatRequest, endpoint: EndpointConfig): string {
  const dialect = batchDialect(endpoint);
  const format = req.json_schema ? dialectFields(dialect, req.json_schema) : {};
  const body = chatBody(req, endpoint.max_tokens_field, format);
  return `${JSON.stringify({ custom_id: customId, method: 'POST', url: CHAT_PATH, body })}\n`;
}

/** What one request of a finished batch came to: a reply, or a failure the retry layer judges. */
export type LineResult = { ok: true; response: ChatResponse } | { ok: false; error: ProviderError };

/** A result that can be kept in the journal and read back (failures keep only what retry needs). */
export type StoredResult = { ok: true; response: ChatResponse } | { ok: false; message: string; retryable: boolean; status?: number };

export function storeResult(r: LineResult): StoredResult {
  if (r.ok) return r;
  return { ok: false, message: r.error.message, retryable: r.error.retryable, ...(r.error.status !== undefined ? { status: r.error.status } : {}) };
}

interface OutputLine {
  custom_id?: unknown;
  response?: { status_code?: unknown; body?: unknown } | null;
  error?: { code?: unknown; message?: unknown } | null;
}

/**
 * The results of an output or error file by custom_id. A line that is not JSON or names no
 * custom_id is skipped: its request then has no result and is submitted again.
 */
export function parseResultFile(text: string, redactor: Redactor, endpoint: string): Map<string, LineResult> {
  const out = new Map<string, LineResult>();
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    let line: OutputLine;
    try {
      line = JSON.parse(raw) as OutputLine;
    } catch {
      continue;
    }
    if (typeof line.custom_id !== 'string') continue;
    out.set(line.custom_id, resultOf(line, redactor, endpoint));
  }
  return out;
}

function resultOf(line: OutputLine, redactor: Redactor, endpoint: string): LineResult {
  // vLLM's run-batch sets `error` on a failed line whatever its status: an error is never a reply.
  if (line.error && (!line.response || line.response.status_code === undefined || line.response.status_code === 200)) {
    // Error-file lines (an expired batch's `batch_expired`, a line the server could not run): submitted again.
    const code = typeof line.error.code === 'string' ? line.error.code : 'error';
    const message = typeof line.error.message === 'string' ? line.error.message : 'no message';
    return { ok: false, error: new ProviderError(redactor.text(`batch line failed (${code}): ${message}`), true) };
  }
  const status = typeof line.response?.status_code === 'number' ? line.response.status_code : 0;
  if (status !== 200) return { ok: false, error: lineFailure(status, line.response?.body, redactor) };
  try {
    return { ok: true, response: toResponse(line.response!.body as OpenAI.Chat.ChatCompletion, redactor, endpoint) };
  } catch (err) {
    return { ok: false, error: err instanceof ProviderError ? err : new ProviderError(redactor.text(String(err)), true) };
  }
}

/**
 * A request the server answered with an error status. A retryable one (429, 5xx) carries no
 * status: one line of a batch says nothing about the endpoint being down, so it spends the
 * call's retries rather than feeding the endpoint's breaker; other statuses are kept (a 404 is
 * an unknown model, which stops the run as it would online).
 */
function lineFailure(status: number, body: unknown, redactor: Redactor): ProviderError {
  const said = typeof body === 'object' && body !== null && typeof (body as { error?: { message?: unknown } }).error?.message === 'string' ? (body as { error: { message: string } }).error.message : JSON.stringify(body ?? null).slice(0, 300);
  const message = redactor.text(`batch line answered HTTP ${status}: ${said}`);
  return isRetryableStatus(status) || status === 0 ? new ProviderError(message, true) : new ProviderError(message, false, status);
}
