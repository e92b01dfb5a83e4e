/**
 * Scripted OpenAI-compatible servers, one per structured-output dialect. Each takes only the
 * request shapes its real counterpart takes and answers the others the way that server does:
 *
 *   openai            json_schema and plain json_object; 400 {"error": {param, code}} for the rest
 *   llama-cpp-python  {type: json_object[, schema]}; json_schema is a 500 carrying pydantic's
 *                     literal_error (its error handler wraps request validation); unknown fields ignored
 *   llama.cpp         {type: json_object[, schema]}; another type is a 500 with a plain-text body
 *   vllm-guided       an older vLLM: top-level guided_json; 400 {"object": "error", …} with pydantic's
 *                     literal_error / extra_forbidden (no `error` key: the client drops that body)
 *   json-mode         plain json_object only; FastAPI's 422 {"detail": [{type, loc, msg}]}
 *   plain             no response_format or guided_json at all; 400 "Unsupported parameter"
 *
 * An accepted request is answered by the juror simulator (the only simulated part: the model).
 * A request the simulator has no task for (the dialect probe) gets what a constrained decoder
 * would give: the smallest instance of the schema it was sent, `{}` in JSON mode, else prose.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Provider } from '../../../src/llm/types.js';
import { ProviderError } from '../../../src/llm/types.js';

export const SERVER_KINDS = ['openai', 'llama-cpp-python', 'llama.cpp', 'vllm-guided', 'json-mode', 'plain'] as const;
export type ServerKind = (typeof SERVER_KINDS)[number];

type Body = Record<string, unknown>;
interface Rejection {
  status: number;
  text: string;
  contentType?: string;
}
/** What a server made of a request it accepts: the schema it will follow, or JSON mode. */
interface Accepted {
  schema?: Record<string, unknown>;
  jsonMode: boolean;
}

export interface DialectRequest {
  body: Body;
  /** HTTP status it was answered with */
  status: number;
}

export interface DialectServer {
  url: string;
  requests: DialectRequest[];
  close(): Promise<void>;
}

const pyLiteral = (loc: string[], input: string, expected: string) =>
  `{'type': 'literal_error', 'loc': (${loc.map((l) => `'${l}'`).join(', ')}), 'msg': "Input should be ${expected}", 'input': '${input}', 'ctx': {'expected': "${expected}"}}`;
const pyExtra = (loc: string[]) => `{'type': 'extra_forbidden', 'loc': (${loc.map((l) => `'${l}'`).join(', ')}), 'msg': 'Extra inputs are not permitted', 'input': {}}`;
const json = (status: number, body: unknown): Rejection => ({ status, text: JSON.stringify(body) });

function formatOf(body: Body): Body | undefined {
  const f = body.response_format;
  return f && typeof f === 'object' ? (f as Body) : undefined;
}

function openai(body: Body): Accepted | Rejection {
  const err = (message: string, param: string | null, code: string | null) => json(400, { error: { message, type: 'invalid_request_error', param, code } });
  if ('guided_json' in body) return err('Unrecognized request argument supplied: guided_json', null, null);
  const f = formatOf(body);
  if (!f) return { jsonMode: false };
  if (f.type === 'json_schema') {
    const js = f.json_schema as Body | undefined;
    if (!js || typeof js.schema !== 'object') return err("Missing required parameter: 'response_format.json_schema'.", 'response_format.json_schema', 'missing_required_parameter');
    return { schema: js.schema as Record<string, unknown>, jsonMode: true };
  }
  if (f.type === 'json_object') {
    const extra = Object.keys(f).find((k) => k !== 'type');
    return extra ? err(`Unknown parameter: 'response_format.${extra}'.`, `response_format.${extra}`, 'unknown_parameter') : { jsonMode: true };
  }
  if (f.type === 'text') return { jsonMode: false };
  return err(`Invalid value: '${String(f.type)}'. Supported values are: 'json_object', 'json_schema', and 'text'.`, 'response_format.type', 'invalid_value');
}

function jsonObjectWithSchema(f: Body): Accepted {
  return f.schema && typeof f.schema === 'object' ? { schema: f.schema as Record<string, unknown>, jsonMode: true } : { jsonMode: true };
}

function llamaCppPython(body: Body): Accepted | Rejection {
  const f = formatOf(body);
  if (!f || f.type === 'text') return { jsonMode: false };
  if (f.type === 'json_object') return jsonObjectWithSchema(f);
  const message = `[${pyLiteral(['body', 'response_format', 'type'], String(f.type), "'text' or 'json_object'")}]`;
  return json(500, { error: { message, type: 'internal_server_error', param: null, code: null } });
}

function llamaCpp(body: Body): Accepted | Rejection {
  const f = formatOf(body);
  if (!f || f.type === 'text') return { jsonMode: false };
  if (f.type === 'json_object') return jsonObjectWithSchema(f);
  return { status: 500, contentType: 'text/plain', text: `response_format type must be one of "text" or "json_object", but got: ${String(f.type)}` };
}

function vllmGuided(body: Body): Accepted | Rejection {
  const err = (detail: string) => json(400, { object: 'error', message: `[${detail}]`, type: 'BadRequestError', param: null, code: 400 });
  const f = formatOf(body);
  if (f && f.type !== 'text' && f.type !== 'json_object') return err(pyLiteral(['body', 'response_format', 'type'], String(f.type), "'text' or 'json_object'"));
  if (f && 'schema' in f) return err(pyExtra(['body', 'response_format', 'schema']));
  if (body.guided_json && typeof body.guided_json === 'object') return { schema: body.guided_json as Record<string, unknown>, jsonMode: true };
  return { jsonMode: f?.type === 'json_object' };
}

function jsonMode(body: Body): Accepted | Rejection {
  const detail = (d: Body) => json(422, { detail: [d] });
  if ('guided_json' in body) return detail({ type: 'extra_forbidden', loc: ['body', 'guided_json'], msg: 'Extra inputs are not permitted', input: {} });
  const f = formatOf(body);
  if (!f || f.type === 'text') return { jsonMode: false };
  if (f.type !== 'json_object') return detail({ type: 'literal_error', loc: ['body', 'response_format', 'type'], msg: "Input should be 'text' or 'json_object'", input: f.type });
  const extra = Object.keys(f).find((k) => k !== 'type');
  if (extra) return detail({ type: 'extra_forbidden', loc: ['body', 'response_format', extra], msg: 'Extra inputs are not permitted', input: {} });
  return { jsonMode: true };
}

function plain(body: Body): Accepted | Rejection {
  const err = (message: string, param: string) => json(400, { error: { message, type: 'invalid_request_error', param, code: 'unsupported_parameter' } });
  if ('response_format' in body) return err("Unsupported parameter: 'response_format' is not supported by this server.", 'response_format');
  if ('guided_json' in body) return err("Unsupported parameter: 'guided_json' is not supported by this server.", 'guided_json');
  return { jsonMode: false };
}

const CHECKS: Record<ServerKind, (b: Body) => Accepted | Rejection> = {
  openai,
  'llama-cpp-python': llamaCppPython,
  'llama.cpp': llamaCpp,
  'vllm-guided': vllmGuided,
  'json-mode': jsonMode,
  plain,
};

/** The smallest value a decoder constrained to `schema` could produce. */
export function minimalInstance(schema: Record<string, unknown>): unknown {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'object') {
    const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
    const out: Record<string, unknown> = {};
    for (const k of (schema.required ?? []) as string[]) out[k] = props[k] ? minimalInstance(props[k]) : null;
    return out;
  }
  if (type === 'array') return [];
  if (type === 'boolean') return true;
  if (type === 'integer' || type === 'number') return 0;
  if (type === 'string') return Array.isArray(schema.enum) ? schema.enum[0] : '';
  return null;
}

async function modelReply(model: Provider, body: Body, accepted: Accepted): Promise<{ content: string; tokens_in: number; tokens_out: number }> {
  const messages = body.messages as Array<{ role: 'system' | 'user' | 'assistant'; content: string }>;
  try {
    const r = await model.complete({ model: String(body.model), messages, ...(typeof body.max_tokens === 'number' ? { max_tokens: body.max_tokens } : {}), ...(typeof body.seed === 'number' ? { seed: body.seed } : {}), ...(typeof body.temperature === 'number' ? { temperature: body.temperature } : {}) }, new AbortController().signal);
    return { content: r.content, tokens_in: r.tokens_in, tokens_out: r.tokens_out };
  } catch (err) {
    // Not a jury prompt (the dialect probe): answer as a decoder under these constraints would.
    if (!(err instanceof ProviderError) || err.status !== 400) throw err;
    const content = accepted.schema ? JSON.stringify(minimalInstance(accepted.schema)) : accepted.jsonMode ? '{}' : 'Sure, here you go.';
    return { content, tokens_in: 10, tokens_out: 5 };
  }
}

export async function startDialectServer(kind: ServerKind, model: Provider): Promise<DialectServer> {
  const requests: DialectRequest[] = [];
  const send = (res: ServerResponse, status: number, text: string, contentType = 'application/json') => {
    res.writeHead(status, { 'content-type': contentType }).end(text);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) return send(res, 404, '{"error":{"message":"not found"}}');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Body;
      const rec: DialectRequest = { body, status: 0 };
      requests.push(rec);
      const verdict = CHECKS[kind](body);
      if ('status' in verdict) {
        rec.status = verdict.status;
        return send(res, verdict.status, verdict.text, verdict.contentType);
      }
      modelReply(model, body, verdict).then(
        (r) => {
          rec.status = 200;
          const choice = { index: 0, message: { role: 'assistant', content: r.content }, finish_reason: 'stop' };
          send(res, 200, JSON.stringify({ id: 'chatcmpl-d', object: 'chat.completion', created: 1_700_000_000, model: body.model, choices: [choice], usage: { prompt_tokens: r.tokens_in, completion_tokens: r.tokens_out, total_tokens: r.tokens_in + r.tokens_out } }));
        },
        (err: unknown) => {
          rec.status = 500;
          send(res, 500, JSON.stringify({ error: { message: String(err), type: 'server_error' } }));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
