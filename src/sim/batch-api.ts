import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { fileObject, FileStore, instanceTag } from './batch-files.js';
import { CHAT_ENDPOINT, parseBatchInput } from './batch-input.js';
import { BatchJobs, type BatchJobStats } from './batch-jobs.js';
import type { BatchBehaviour } from './batch-profile.js';
import type { SimEngine } from './engine.js';
import { HttpError, readBodyBytes, readJsonBody, sendJson } from '../util/openai-http.js';

/**
 * The OpenAI Files + Batches API on the simulator's server, so batch mode is tested through
 * the real `openai` client: POST/GET/DELETE /v1/files[/{id}[/content]], POST/GET /v1/batches,
 * GET /v1/batches/{id}, POST /v1/batches/{id}/cancel. Routes and wire checks live here; the
 * batches' life in batch-jobs.ts.
 */

/** Room for the multipart framing and the purpose field around a file of max_bytes. */
const UPLOAD_OVERHEAD = 1024 * 1024;
const JSON_BODY_BYTES = 1024 * 1024;
const PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'];

const CreateBatch = z
  .object({
    input_file_id: z.string().min(1),
    endpoint: z.string(),
    completion_window: z.string(),
    metadata: z
      .record(z.string().max(64), z.string().max(512))
      .refine((m) => Object.keys(m).length <= 16, 'metadata holds at most 16 keys')
      .nullish(),
  })
  .loose();

export interface BatchApiStats extends BatchJobStats {
  /** files clients uploaded (batch outputs not counted) */
  files: { uploaded: number; bytes: number };
}

export interface BatchApi {
  /** Serves `path` when it is a Files or Batches route and says so; false leaves it to the caller. */
  handle(httpReq: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
  stats(): BatchApiStats;
  /** Stops pending batches; what they hold stays readable. */
  close(): void;
}

export function createBatchApi(engine: SimEngine, behaviour: BatchBehaviour): BatchApi {
  const tag = instanceTag();
  const files = new FileStore(tag);
  const jobs = new BatchJobs(engine, files, behaviour, tag);
  const ctx: Ctx = { files, jobs, behaviour };
  return {
    handle: async (httpReq, res, path) => {
      if (path === '/v1/files' || path.startsWith('/v1/files/')) await filesRoute(ctx, httpReq, res, path);
      else if (path === '/v1/batches' || path.startsWith('/v1/batches/')) await batchesRoute(ctx, httpReq, res, path);
      else return false;
      return true;
    },
    stats: () => ({ files: { uploaded: files.uploaded, bytes: files.uploadedBytes }, ...jobs.stats() }),
    close: () => jobs.close(),
  };
}

interface Ctx {
  files: FileStore;
  jobs: BatchJobs;
  behaviour: BatchBehaviour;
}

function methodNotAllowed(httpReq: IncomingMessage, path: string): never {
  throw new HttpError(405, 'method_not_allowed', `${httpReq.method} is not served on ${path}`);
}

async function filesRoute(ctx: Ctx, httpReq: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  if (path === '/v1/files') {
    if (httpReq.method === 'POST') return upload(ctx, httpReq, res);
    if (httpReq.method === 'GET') return sendJson(res, 200, { object: 'list', data: ctx.files.all().reverse().map(fileObject), has_more: false });
    methodNotAllowed(httpReq, path);
  }
  const m = /^\/v1\/files\/([^/]+)(\/content)?$/.exec(path);
  if (!m) throw new HttpError(404, 'not_found', `no route for ${httpReq.method} ${path}`);
  const id = decodeURIComponent(m[1]!);
  const file = ctx.files.get(id);
  if (!file) throw new HttpError(404, 'file_not_found', `No such File object: ${id}`);
  if (m[2] && httpReq.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(file.bytes.length) });
    res.end(file.bytes);
    return;
  }
  if (!m[2] && httpReq.method === 'GET') return sendJson(res, 200, fileObject(file));
  if (!m[2] && httpReq.method === 'DELETE') {
    ctx.files.delete(id);
    return sendJson(res, 200, { id, object: 'file', deleted: true });
  }
  methodNotAllowed(httpReq, path);
}

/** The multipart body's fields, parsed by the runtime's own (undici) FormData reader. */
async function readForm(httpReq: IncomingMessage, maxBytes: number): Promise<FormData> {
  const type = httpReq.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(type)) throw new HttpError(400, 'invalid_request', 'upload a file as multipart/form-data with the fields "purpose" and "file"');
  const raw = await readBodyBytes(httpReq, maxBytes);
  try {
    return await new Request('http://sim.invalid/v1/files', { method: 'POST', headers: { 'content-type': type }, body: new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength) }).formData();
  } catch (e) {
    throw new HttpError(400, 'invalid_request', `the multipart body cannot be read: ${(e as Error).message}`);
  }
}

/** POST /v1/files: a `batch` file is checked whole, so a bad line is a 400 here, not a failed batch later. */
async function upload(ctx: Ctx, httpReq: IncomingMessage, res: ServerResponse): Promise<void> {
  const form = await readForm(httpReq, ctx.behaviour.max_bytes + UPLOAD_OVERHEAD);
  const purpose = form.get('purpose');
  if (typeof purpose !== 'string' || !PURPOSES.includes(purpose)) throw new HttpError(400, 'invalid_purpose', `purpose must be one of ${PURPOSES.join(', ')} (got ${JSON.stringify(purpose)})`);
  const file = form.get('file');
  if (file === null || typeof file === 'string') throw new HttpError(400, 'missing_file', 'the multipart body has no "file" part holding a file');
  const bytes = Buffer.from(await file.arrayBuffer());
  if (purpose === 'batch') {
    const { problems } = parseBatchInput(bytes, ctx.behaviour);
    if (problems.length > 0) {
      const shown = problems.slice(0, 3).map((p) => p.message);
      const more = problems.length > 3 ? `; and ${problems.length - 3} more` : '';
      throw new HttpError(400, problems[0]!.code, `invalid batch input file ${file.name}: ${shown.join('; ')}${more}`);
    }
  }
  sendJson(res, 200, fileObject(ctx.files.upload(bytes, file.name || 'upload.jsonl', purpose)));
}

async function batchesRoute(ctx: Ctx, httpReq: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  if (path === '/v1/batches') {
    if (httpReq.method === 'POST') return sendJson(res, 200, ctx.jobs.create(await createParams(httpReq)));
    if (httpReq.method === 'GET') {
      const q = new URL(httpReq.url ?? '/', 'http://sim.invalid').searchParams;
      return sendJson(res, 200, ctx.jobs.list(pageLimit(q.get('limit')), q.get('after') ?? undefined));
    }
    methodNotAllowed(httpReq, path);
  }
  const m = /^\/v1\/batches\/([^/]+)(\/cancel)?$/.exec(path);
  if (!m) throw new HttpError(404, 'not_found', `no route for ${httpReq.method} ${path}`);
  const id = decodeURIComponent(m[1]!);
  if (m[2] && httpReq.method === 'POST') return sendJson(res, 200, ctx.jobs.cancel(id));
  if (!m[2] && httpReq.method === 'GET') return sendJson(res, 200, ctx.jobs.get(id));
  methodNotAllowed(httpReq, path);
}

function pageLimit(raw: string | null): number {
  if (raw === null) return 20;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new HttpError(400, 'invalid_request', `limit must be an integer from 1 to 100 (got "${raw}")`);
  return n;
}

async function createParams(httpReq: IncomingMessage): Promise<z.infer<typeof CreateBatch>> {
  const r = CreateBatch.safeParse(await readJsonBody(httpReq, JSON_BODY_BYTES));
  if (!r.success) throw new HttpError(400, 'invalid_request', `invalid batch request: ${z.prettifyError(r.error).replace(/\s+/g, ' ')}`);
  if (r.data.endpoint !== CHAT_ENDPOINT) throw new HttpError(400, 'unsupported_endpoint', `the simulator batches ${CHAT_ENDPOINT} only (got "${r.data.endpoint}")`);
  if (r.data.completion_window !== '24h') throw new HttpError(400, 'invalid_completion_window', `completion_window must be "24h" (got "${r.data.completion_window}")`);
  return r.data;
}
