/**
 * A scripted OpenAI-compatible server for tests: POST /v1/chat/completions answers with the
 * next scripted reply. It records every request (headers, body, arrival time) and the maximum
 * number of requests in flight at once.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** raw body; when absent a chat.completion is built from content/reasoning */
  body?: unknown;
  content?: string;
  reasoning_content?: string;
  reasoning?: string;
  tokens_in?: number;
  tokens_out?: number;
  /** choices[0].finish_reason as the server sends it (default "stop") */
  finish_reason?: string | null;
  /** wait before answering */
  delayMs?: number;
  /** never answer (until the client gives up or the server closes) */
  hang?: boolean;
  /** send headers, then stall the body */
  stallBody?: boolean;
}

export interface RecordedRequest {
  n: number;
  at: number;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** client-side port: tells which pooled connection carried the request */
  remotePort: number;
}

export interface ScriptedServer {
  /** base URL including /v1, as EndpointConfig.base_url */
  url: string;
  /** chat completions only */
  requests: RecordedRequest[];
  /** GET /v1/models requests seen */
  modelListings: number;
  maxInFlight: number;
  close(): Promise<void>;
}

export type Script = Reply[] | ((req: RecordedRequest) => Reply);

export function ok(content: string, extra: Partial<Reply> = {}): Reply {
  return { content, tokens_in: 100, tokens_out: 20, ...extra };
}

export function completion(r: Reply, model: string): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: r.content ?? '' };
  if (r.reasoning_content !== undefined) message.reasoning_content = r.reasoning_content;
  if (r.reasoning !== undefined) message.reasoning = r.reasoning;
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message, finish_reason: r.finish_reason === undefined ? 'stop' : r.finish_reason }],
    usage: { prompt_tokens: r.tokens_in ?? 0, completion_tokens: r.tokens_out ?? 0, total_tokens: (r.tokens_in ?? 0) + (r.tokens_out ?? 0) },
  };
}

export interface ScriptedOptions {
  /** body of GET /v1/models (200); absent: 404, like a server without the listing */
  models?: unknown;
}

export async function startScriptedServer(script: Script, opts: ScriptedOptions = {}): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  let inFlight = 0;
  const state = { maxInFlight: 0, modelListings: 0 };
  const t0 = performance.now();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET' && req.url?.replace(/\/+$/, '').endsWith('/models')) {
        state.modelListings++;
        if (opts.models === undefined) res.writeHead(404).end();
        else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(opts.models));
        return;
      }
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404).end();
        return;
      }
      inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, inFlight);
      let done = false;
      const finish = () => {
        if (!done) {
          done = true;
          inFlight--;
        }
      };
      res.on('close', finish);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      const rec: RecordedRequest = { n: requests.length + 1, at: performance.now() - t0, headers: req.headers, body, remotePort: req.socket.remotePort ?? 0 };
      requests.push(rec);
      const reply: Reply = Array.isArray(script) ? (script[rec.n - 1] ?? { status: 500, body: { error: { message: `script exhausted at request ${rec.n}` } } }) : script(rec);
      const send = () => answer(res, reply, String(body.model ?? 'model'));
      if (reply.hang) return;
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get maxInFlight() {
      return state.maxInFlight;
    },
    get modelListings() {
      return state.modelListings;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function answer(res: ServerResponse, r: Reply, model: string): void {
  if (res.destroyed) return;
  const status = r.status ?? 200;
  const payload = r.body !== undefined ? (typeof r.body === 'string' ? r.body : JSON.stringify(r.body)) : JSON.stringify(completion(r, model));
  res.writeHead(status, { 'content-type': 'application/json', ...(r.headers ?? {}) });
  if (r.stallBody) {
    res.write(payload.slice(0, 10));
    return;
  }
  res.end(payload);
}
