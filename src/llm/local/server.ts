/**
 * The local engine behind an OpenAI-compatible HTTP API on loopback, so any OpenAI client
 * (ours included) can use it:
 *   POST /v1/chat/completions   non-streaming; response_format json_schema / json_object become
 *                               a grammar; usage is counted by the engine's tokenizer
 *   GET  /v1/models, /health
 * One model: the request's `model` is echoed back, not used to pick anything.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { z } from 'zod';
import type { ChatMessage } from '../types.js';
import { LocalEngineError, type LocalEngine } from './engine.js';
import { HttpError, listenOpenAICompatible, readJsonBody, sendError, sendJson } from '../../util/openai-http.js';

export interface LocalServerOptions {
  engine: LocalEngine;
  host?: string;
  /** 0 = any free port */
  port?: number;
  /** the id /v1/models lists */
  modelId: string;
  /** applied to requests that bring no response_format of their own */
  defaultJsonSchema?: Record<string, unknown>;
  /** when set, requests must carry `Authorization: Bearer <apiKey>` */
  apiKey?: string;
}

export interface RunningLocalServer {
  /** base URL for an OpenAI client, ending in /v1 */
  url: string;
  port: number;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const ANY_OBJECT = { type: 'object', additionalProperties: true };

const Part = z.object({ type: z.string(), text: z.string().optional() }).loose();
const Message = z.object({ role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']), content: z.union([z.string(), z.array(Part), z.null()]) }).loose();
const ResponseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }).loose(),
  z.object({ type: z.literal('json_object') }).loose(),
  z.object({ type: z.literal('json_schema'), json_schema: z.object({ name: z.string().optional(), schema: z.record(z.string(), z.unknown()) }).loose() }).loose(),
]);
const Body = z
  .object({
    model: z.string().min(1),
    messages: z.array(Message).min(1),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().gt(0).max(1).nullish(),
    max_tokens: z.int().positive().nullish(),
    max_completion_tokens: z.int().positive().nullish(),
    seed: z.int().nullish(),
    stream: z.boolean().nullish(),
    n: z.int().nullish(),
    response_format: ResponseFormat.nullish(),
  })
  .loose();
type Body = z.infer<typeof Body>;

export async function startLocalServer(opts: LocalServerOptions): Promise<RunningLocalServer> {
  let served = 0;
  const inFlight = new Set<AbortController>();

  const chat = async (httpReq: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = parseBody(await readJson(httpReq));
    // The client going away stops generation at the next token.
    const ctl = new AbortController();
    inFlight.add(ctl);
    const onClose = () => {
      if (!res.writableFinished) ctl.abort(new Error('client disconnected'));
    };
    res.on('close', onClose);
    try {
      const maxTokens = body.max_completion_tokens ?? body.max_tokens;
      const jsonSchema = schemaOf(body.response_format, opts.defaultJsonSchema);
      const g = await opts.engine.generate({
        messages: toMessages(body.messages),
        ...(jsonSchema ? { jsonSchema } : {}),
        ...(body.temperature != null ? { temperature: body.temperature } : {}),
        ...(body.top_p != null ? { topP: body.top_p } : {}),
        ...(maxTokens != null ? { maxTokens } : {}),
        ...(body.seed != null ? { seed: body.seed } : {}),
        signal: ctl.signal,
      });
      served += 1;
      const message: Record<string, unknown> = { role: 'assistant', content: g.content, refusal: null };
      if (g.reasoning) message.reasoning_content = g.reasoning;
      sendJson(res, 200, {
        id: `chatcmpl-local-${Date.now().toString(36)}-${served}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        system_fingerprint: 'reasoning-jury-local',
        choices: [{ index: 0, message, logprobs: null, finish_reason: g.stop_reason === 'maxTokens' ? 'length' : 'stop' }],
        usage: { prompt_tokens: g.tokens_in, completion_tokens: g.tokens_out, total_tokens: g.tokens_in + g.tokens_out },
      });
    } catch (err) {
      if (err instanceof LocalEngineError) {
        if (err.code === 'aborted') return; // nobody is listening any more
        const status = err.code === 'context_overflow' || err.code === 'invalid_schema' ? 400 : err.code === 'closed' ? 503 : err.code === 'timeout' ? 504 : 500;
        throw new HttpError(status, err.code, err.message);
      }
      throw err;
    } finally {
      inFlight.delete(ctl);
      res.off('close', onClose);
    }
  };

  const server = createServer((httpReq, res) => {
    const path = (httpReq.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
    const route = async (): Promise<void> => {
      if (path === '/health' && httpReq.method === 'GET') return sendJson(res, 200, { status: 'ok', model: opts.modelId });
      if (opts.apiKey !== undefined && !authorized(httpReq.headers.authorization, opts.apiKey)) throw new HttpError(401, 'invalid_api_key', 'missing or wrong API key');
      if (path === '/v1/chat/completions') {
        if (httpReq.method !== 'POST') throw new HttpError(405, 'method_not_allowed', 'use POST');
        return chat(httpReq, res);
      }
      if (path === '/v1/models' && httpReq.method === 'GET') {
        return sendJson(res, 200, { object: 'list', data: [{ id: opts.modelId, object: 'model', created: 0, owned_by: 'local' }] });
      }
      throw new HttpError(404, 'not_found', `no route for ${httpReq.method} ${path}`);
    };
    route().catch((e: unknown) => {
      if (e instanceof HttpError) sendError(res, e.status, e.code, e.message);
      else sendError(res, 500, 'internal_error', `local server failed: ${(e as Error)?.message ?? String(e)}`);
    });
  });
  const listening = await listenOpenAICompatible(server, opts.port ?? 0, opts.host ?? '127.0.0.1');
  return {
    url: listening.url,
    port: listening.port,
    close: () => listening.close(() => {
      for (const c of inFlight) c.abort(new Error('server closing'));
    }),
  };
}

function parseBody(raw: unknown): Body {
  const r = Body.safeParse(raw);
  if (!r.success) throw new HttpError(400, 'invalid_request', `invalid chat completion request: ${z.prettifyError(r.error).replace(/\s+/g, ' ')}`);
  if (r.data.stream) throw new HttpError(400, 'unsupported', 'streaming is not supported; send stream: false');
  if (r.data.n != null && r.data.n !== 1) throw new HttpError(400, 'unsupported', 'one choice per request; n must be 1');
  return r.data;
}

function schemaOf(format: Body['response_format'], fallback: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!format) return fallback;
  if (format.type === 'json_schema') return format.json_schema.schema;
  if (format.type === 'json_object') return ANY_OBJECT;
  return undefined;
}

function toMessages(messages: Body['messages']): ChatMessage[] {
  return messages.map((m) => ({
    role: m.role === 'developer' ? 'system' : m.role === 'tool' ? 'user' : m.role,
    content: typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => p.text ?? '').join(''),
  }));
}

function authorized(header: string | undefined, key: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m) return false;
  const a = Buffer.from(m[1]!.trim());
  const b = Buffer.from(key);
  return a.length === b.length && timingSafeEqual(a, b);
}

const readJson = (req: IncomingMessage): Promise<unknown> => readJsonBody(req, MAX_BODY_BYTES);

