/**
 * A very small OpenAI Files + Batches server for the batch provider's unit tests: it stores
 * uploaded JSONL, answers each line with a chat completion whose content is `reply(body)`, and
 * finishes a batch at the `finishAfterPolls`-th status check. Scriptable: custom_ids whose first
 * line goes to the error file, batches that expire, and a `hold` switch that keeps batches in
 * progress. Not the simulator: the end-to-end tests use that.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BatchServerOptions {
  /** the reply content of one request body (default: a JSON echo of the last message) */
  reply?: (body: Record<string, unknown>) => string;
  /** status checks before a batch is over (default 1: the first check sees it finished) */
  finishAfterPolls?: number;
  /** requests whose first line fails (error file, code `server_error`), by their body */
  failOnce?: (body: Record<string, unknown>) => boolean;
  /** indexes (0-based, in creation order) of batches that expire: every line goes to the error file as `batch_expired` */
  expire?: Set<number>;
  /** creates whose reply is lost: the batch is created, the client gets a 502 (a proxy timing out) */
  loseCreateReplies?: number;
}

export interface StoredBatch {
  id: string;
  input_file_id: string;
  status: string;
  polls: number;
  custom_ids: string[];
  output_file_id?: string;
  error_file_id?: string;
}

export interface BatchServer {
  url: string;
  batches: StoredBatch[];
  /** chat completion requests answered online (must stay 0 in batch mode) */
  onlineCalls: number;
  /** while true, batches stay in progress */
  hold: boolean;
  close(): Promise<void>;
}

export async function startBatchServer(opts: BatchServerOptions = {}): Promise<BatchServer> {
  const files = new Map<string, string>();
  const seen = new Set<string>();
  let lostReplies = opts.loseCreateReplies ?? 0;
  const state: BatchServer = { url: '', batches: [], onlineCalls: 0, hold: false, close: async () => undefined };
  const reply = opts.reply ?? ((b) => JSON.stringify({ echo: (b.messages as Array<{ content: string }>).at(-1)?.content }));
  const finish = (b: StoredBatch) => {
    const index = state.batches.indexOf(b);
    const out: string[] = [];
    const errs: string[] = [];
    const lines = files.get(b.input_file_id)!.split('\n').filter((l) => l.trim() !== '');
    for (const raw of lines) {
      const line = JSON.parse(raw) as { custom_id: string; body: Record<string, unknown> };
      const first = !seen.has(line.custom_id);
      seen.add(line.custom_id);
      if (opts.expire?.has(index)) errs.push(JSON.stringify({ id: `r-${line.custom_id}`, custom_id: line.custom_id, response: null, error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' } }));
      else if (first && opts.failOnce?.(line.body)) errs.push(JSON.stringify({ id: `r-${line.custom_id}`, custom_id: line.custom_id, response: null, error: { code: 'server_error', message: 'line failed' } }));
      else out.push(JSON.stringify({ id: `r-${line.custom_id}`, custom_id: line.custom_id, response: { status_code: 200, request_id: 'q', body: completion(reply(line.body), String(line.body.model)) }, error: null }));
    }
    b.status = opts.expire?.has(index) ? 'expired' : 'completed';
    if (out.length > 0) files.set((b.output_file_id = `file-out-${b.id}`), `${out.join('\n')}\n`);
    if (errs.length > 0) files.set((b.error_file_id = `file-err-${b.id}`), `${errs.join('\n')}\n`);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://x');
    const body = await readBody(req);
    const send = (status: number, obj: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(obj));
    };
    if (req.method === 'POST' && url.pathname === '/v1/chat/completions') {
      state.onlineCalls += 1;
      return send(200, completion('{}', 'm'));
    }
    if (req.method === 'POST' && url.pathname === '/v1/files') {
      const form = await new Request('http://x/', { method: 'POST', headers: req.headers as Record<string, string>, body }).formData();
      const file = form.get('file') as File;
      const id = `file-${files.size + 1}`;
      files.set(id, await file.text());
      return send(200, { id, object: 'file', bytes: file.size, created_at: 0, filename: file.name, purpose: 'batch' });
    }
    const content = /^\/v1\/files\/([^/]+)\/content$/.exec(url.pathname);
    if (req.method === 'GET' && content) {
      const text = files.get(content[1]!);
      if (text === undefined) return send(404, { error: { message: 'no such file' } });
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      return void res.end(text);
    }
    if (req.method === 'POST' && url.pathname === '/v1/batches') {
      const p = JSON.parse(body.toString()) as { input_file_id: string };
      const ids = files.get(p.input_file_id)!.split('\n').filter((l) => l.trim() !== '').map((l) => (JSON.parse(l) as { custom_id: string }).custom_id);
      const b: StoredBatch = { id: `batch_${state.batches.length + 1}`, input_file_id: p.input_file_id, status: 'validating', polls: 0, custom_ids: ids };
      state.batches.push(b);
      if (lostReplies-- > 0) return send(502, { error: { message: 'upstream timed out', type: 'server_error' } });
      return send(200, view(b));
    }
    if (req.method === 'GET' && url.pathname === '/v1/batches') return send(200, { object: 'list', data: state.batches.map(view), has_more: false });
    const one = /^\/v1\/batches\/([^/]+)(\/cancel)?$/.exec(url.pathname);
    const b = one ? state.batches.find((x) => x.id === one[1]) : undefined;
    if (!b) return send(404, { error: { message: 'not found' } });
    if (one![2]) b.status = 'cancelled';
    else if (!state.hold && b.status !== 'completed' && b.status !== 'expired' && b.status !== 'cancelled' && ++b.polls >= (opts.finishAfterPolls ?? 1)) finish(b);
    else if (b.status === 'validating') b.status = 'in_progress';
    return send(200, view(b));
  };
  const server: Server = createServer((req, res) => void handle(req, res).catch((err: Error) => (res.writeHead(500), res.end(err.message))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}

function view(b: StoredBatch): Record<string, unknown> {
  const n = b.custom_ids.length;
  return { id: b.id, object: 'batch', endpoint: '/v1/chat/completions', input_file_id: b.input_file_id, completion_window: '24h', status: b.status, created_at: 0, output_file_id: b.output_file_id ?? null, error_file_id: b.error_file_id ?? null, request_counts: { total: n, completed: n, failed: 0 } };
}

function completion(content: string, model: string): Record<string, unknown> {
  return { id: 'c', object: 'chat.completion', created: 0, model, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
