/**
 * Rejected request fields: a server that answers "this field of your request is invalid" will
 * answer the same to every retry, whatever its status code (llama-cpp-python reports request
 * validation as HTTP 500). Such a failure is a RejectedFieldError: never retried, never counted
 * as an outage, and its message names the field and the setting that sends it.
 *
 * Recognised shapes (what real servers send):
 *   OpenAI           400 {"error": {"param": "response_format.type", "code": "invalid_value"|"unknown_parameter"|…}}
 *   pydantic/FastAPI 4xx/500 "… 'type': 'literal_error', 'loc': ('body', 'response_format', 'type') …"
 *                    (Python repr or JSON: "loc": ["body", "max_tokens"]); extra_forbidden alike
 *   plain phrases    "Unsupported parameter: 'max_tokens'", "Unknown parameter: 'x'",
 *                    "Unrecognized request argument supplied: guided_json"
 *   llama.cpp        "response_format type must be one of "text" or "json_object", but got: …"
 */
import { ProviderError } from './types.js';

/** Fields whose value the endpoint's `response_format` setting decides. */
const FORMAT_FIELDS = new Set(['response_format', 'guided_json', 'guided_grammar', 'json_schema', 'grammar']);
/** Fields a seat's own setting of the same name sends. */
const SEAT_FIELDS = new Set(['max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'seed', 'reasoning_effort']);
/** Names a free-text error message may mention as the field it rejects (llama.cpp style). */
const KNOWN_FIELDS = [...FORMAT_FIELDS, ...SEAT_FIELDS];

export class RejectedFieldError extends ProviderError {
  constructor(
    message: string,
    status: number,
    /** the request field the server rejected, dotted (`response_format.type`) */
    readonly field: string,
    /** the config setting that sends it, e.g. `endpoints.local.response_format` */
    readonly setting: string,
    /** what the server said, shortened and redacted */
    readonly said: string = '',
  ) {
    super(message, false, status);
    this.name = 'RejectedFieldError';
  }
}

export interface ErrorReply {
  status: number;
  /** the error body as the server sent it, when known */
  body?: string;
  /** the client's message (`400 …`) */
  message: string;
  /** OpenAI's `error.param` */
  param?: string | null;
}

/** The request field an error reply says is invalid, or null when it says nothing of the kind. */
export function rejectedField(r: ErrorReply): string | null {
  if (r.status === 408 || r.status === 409 || r.status === 429 || r.status < 400) return null;
  const text = `${r.body ?? ''}\n${r.message}`;
  // OpenAI names the field in `param`; only 4xx: a 5xx with a param is still the server's fault.
  if (r.status < 500 && typeof r.param === 'string' && /^[A-Za-z_][\w.[\]]*$/.test(r.param)) return r.param;
  return pydanticLoc(text) ?? namedParameter(text) ?? knownFieldPhrase(text);
}

/** `'loc': ('body', 'response_format', 'type')` or `"loc": ["body", "response_format", "type"]`. */
function pydanticLoc(text: string): string | null {
  const m = /["']loc["']\s*:\s*[([]\s*["']body["']\s*((?:,\s*(?:["'][^"']*["']|\d+)\s*)*)[)\]]/.exec(text);
  if (!m) return null;
  const parts = [...m[1]!.matchAll(/["']([^"']*)["']|(\d+)/g)].map((p) => p[1] ?? p[2]!);
  return parts.length > 0 ? parts.join('.') : null;
}

function namedParameter(text: string): string | null {
  const m = /\b(?:unsupported|unknown|unrecognized|unrecognised|invalid)\s+(?:request\s+)?(?:parameter|argument|field)s?(?:\s+supplied)?\s*[:=]?\s*[`'"]?([A-Za-z_][\w.[\]]*)/i.exec(text);
  return m ? m[1]! : null;
}

function knownFieldPhrase(text: string): string | null {
  for (const f of KNOWN_FIELDS) {
    const re = new RegExp(`\\b${f}\\b[^\\n.]{0,80}?\\b(must be one of|must be|is not supported|not supported|unsupported|is invalid|invalid|can be specified|not allowed|not permitted)`, 'i');
    if (re.test(text)) return f;
  }
  return null;
}

/** The config setting that sends `field`: where the user should look to make the server accept it. */
export function settingFor(endpoint: string, field: string, extraBody: Record<string, unknown> | undefined): string {
  const top = field.split(/[.[]/)[0]!;
  if (extraBody && Object.hasOwn(extraBody, top)) return `the seat's extra_body.${top}`;
  if (FORMAT_FIELDS.has(top)) return `endpoints.${endpoint}.response_format`;
  // The budget is always sent (a default per kind of call): what can change is the field's name.
  if (top === 'max_tokens' || top === 'max_completion_tokens') return `endpoints.${endpoint}.max_tokens_field`;
  if (SEAT_FIELDS.has(top)) return `the seat's ${top}`;
  return `the seat's extra_body (or drop the field "${top}")`;
}

/** The reply as a RejectedFieldError (message redacted) when it rejects a request field, else undefined. */
export function asRejection(reply: ErrorReply, endpoint: string, extraBody: Record<string, unknown> | undefined, serverSays: string, redact: (s: string) => string = (s) => s): RejectedFieldError | undefined {
  const field = rejectedField(reply);
  if (field === null) return undefined;
  const setting = settingFor(endpoint, field, extraBody);
  const hint = settingHint(field, setting);
  const said = redact(serverSays);
  const message = `HTTP ${reply.status}: the server rejected request field "${field}" (not retried); change ${setting}${hint}. Server said: ${said}`;
  return new RejectedFieldError(redact(message), reply.status, field, setting, said);
}

/** What to set `setting` to, when only some values can help. */
function settingHint(field: string, setting: string): string {
  if (!setting.startsWith('endpoints.')) return '';
  const top = field.split(/[.[]/)[0]!;
  if (top === 'max_tokens') return ' to max_completion_tokens';
  if (top === 'max_completion_tokens') return ' to max_tokens';
  return ' (`auto` picks a dialect this server accepts)';
}

// vLLM, OpenAI, llama.cpp, SGLang, TGI and OpenRouter phrasings of "the prompt does not fit".
const CONTEXT_OVERFLOW = /context[_ ]length[_ ]exceeded|maximum context length|exceeds? (?:the )?(?:model'?s? )?(?:maximum |available )?context|context (?:window|size) (?:of|is) exceeded|prompt is too long|input (?:is )?too long|too many (?:input )?tokens|longer than the model's context/i;

/**
 * A 4xx saying this request's prompt (plus its max_tokens) is longer than the model's context:
 * the record's own failure, not a field to drop. Undefined when the reply says nothing of it.
 */
export function asContextOverflow(reply: ErrorReply, endpoint: string, serverSays: string, redact: (s: string) => string = (s) => s): ProviderError | undefined {
  if (reply.status < 400 || reply.status >= 500 || reply.status === 429) return undefined;
  if (!CONTEXT_OVERFLOW.test(`${reply.body ?? ''}\n${reply.message}`)) return undefined;
  const message = `HTTP ${reply.status}: the prompt is too long for the model's context window (not retried): this record's prompt plus max_tokens does not fit; lower max_tokens, use a model with a longer context, or set endpoints.${endpoint}.context_window so such calls fail before they are sent. Server said: ${serverSays}`;
  return new ProviderError(redact(message), false, reply.status);
}

/** Whether the endpoint's `response_format` setting is what sends `field`. */
export function isFormatField(field: string): boolean {
  return FORMAT_FIELDS.has(field.split(/[.[]/)[0]!);
}

export function isRejectedField(err: unknown): err is RejectedFieldError {
  return err instanceof RejectedFieldError;
}
