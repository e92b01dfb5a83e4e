import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { ChatRequest } from '../llm/types.js';
import { createBatchApi, type BatchApi, type BatchApiStats } from './batch-api.js';
import { defaultBatchBehaviour } from './batch-profile.js';
import { completionBody, completionId, CREATED, isProbe, probeBody, toChatRequest } from './chat-reply.js';
import { defaultProfile } from './default-profile.js';
import { requestKey, SimEngine, type EngineResult } from './engine.js';
import type { GoldIndex } from './gold.js';
import { listedModels, type SimProfile } from './profile.js';
import { SimRuntime, type Outcome, type SimStatsSnapshot } from './runtime.js';
import type { SimTask } from './tasks.js';
import { HttpError, listenOpenAICompatible, readJsonBody, sendError, sendJson } from '../util/openai-http.js';

/**
 * The simulator as an OpenAI-compatible HTTP server on loopback, so tests and the demo go
 * through the real `openai` client, real sockets, real 429/500 handling and real timeouts.
 * It serves the OpenAI Files + Batches API too (batch-api.ts), answering batch lines through
 * the same path as online calls.
 */

export interface SimulatorOptions {
  /** the built-in profile when absent */
  profile?: SimProfile;
  gold?: GoldIndex;
  host?: string;
  /** 0 = any free port */
  port?: number;
  tasks?: readonly SimTask[];
}

export interface RunningSimulator {
  /** base URL for the openai client, ending in /v1 */
  url: string;
  port: number;
  engine: SimEngine;
  /** online chat completions (the Batch API's lines are not in it) */
  stats(): SimStatsSnapshot;
  /** the Batch API's accounting, and the online chat calls beside it; also GET /sim/stats */
  batchStats(): SimBatchStats;
  /** stops listening, drops held requests and open sockets, clears every timer */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;

function retryHeaders(ms: number): Record<string, string> {
  // retry-after is whole seconds by the HTTP spec; retry-after-ms (read by the openai client) is exact.
  return { 'retry-after': String(Math.ceil(ms / 1000)), 'retry-after-ms': String(ms) };
}

/** Replies held on a timer (latency) or hanging (timeout), so close() can drop them all. */
class HeldReplies {
  /** cancel functions of replies waiting on a timer or hanging */
  private readonly pending = new Set<() => void>();
  constructor(private readonly runtime: SimRuntime) {}

  /**
   * Hold `res` for `ms` (undefined = until the client leaves), then run `fire`. The slot is
   * released exactly once: when fired, when the client disconnects, or at cancelAll().
   */
  hold(res: ServerResponse, model: string, ms: number | undefined, fire: () => void, onAbort: () => void): void {
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      if (timer) clearTimeout(timer);
      this.pending.delete(cancel);
      this.runtime.release(model);
      return true;
    };
    const cancel = (): void => {
      if (settle()) onAbort();
    };
    const timer = ms === undefined ? undefined : setTimeout(() => settle() && fire(), ms);
    this.pending.add(cancel);
    res.on('close', () => {
      if (!res.writableFinished) cancel();
    });
  }

  cancelAll(): void {
    for (const cancel of [...this.pending]) cancel();
  }
}

/** What a chat request needs from the server around the engine. */
interface ChatDeps {
  engine: SimEngine;
  runtime: SimRuntime;
  held: HeldReplies;
  batch: BatchApi;
  online: SimBatchStats['online'];
}

/** The body as a ChatRequest; an unreadable one is a 400 (counted for the model it names). */
async function readChatRequest(httpReq: IncomingMessage, runtime: SimRuntime): Promise<ChatRequest> {
  const body = await readJsonBody(httpReq, MAX_BODY_BYTES);
  try {
    return toChatRequest(body);
  } catch (e) {
    const model = typeof (body as { model?: unknown })?.model === 'string' ? (body as { model: string }).model : '(none)';
    runtime.record(model, 'bad_request');
    throw e;
  }
}

/** Sends the engine's answer: an error, a fault, or (after its latency) the completion. */
function reply(d: ChatDeps, res: ServerResponse, req: ChatRequest, r: EngineResult, attempt: number, key: string): void {
  const { runtime } = d;
  const headers = { 'x-sim-attempt': String(attempt), ...(r.kind !== 'error' ? { 'x-sim-task': r.task } : {}) };
  const finish = (outcome: Outcome, extra: Parameters<SimRuntime['record']>[2] = {}): void => {
    runtime.release(req.model);
    runtime.record(req.model, outcome, extra);
  };
  if (r.kind === 'error') {
    finish('bad_request');
    return sendError(res, r.status, r.code, r.message, headers);
  }
  if (r.kind === 'fault' && r.status === 429) {
    finish('fault_429', { task: r.task });
    return sendError(res, 429, 'rate_limit_exceeded', 'simulated rate limit', { ...headers, ...retryHeaders(r.retryAfterMs ?? 0) });
  }
  if (r.kind === 'fault' && r.status === 500) {
    finish('fault_500', { task: r.task });
    return sendError(res, 500, 'internal_error', 'simulated internal server error', headers);
  }
  if (r.kind === 'fault') {
    runtime.record(req.model, 'timeout', { task: r.task });
    // Released in hold(); the 504 only comes if the client is more patient than hang_ms.
    return d.held.hold(res, req.model, r.hangMs, () => sendError(res, 504, 'upstream_timeout', 'simulated upstream timeout', headers), () => undefined);
  }
  const id = completionId(key, attempt);
  const send = (): void => {
    runtime.record(req.model, 'ok', { task: r.task, format: r.format });
    sendJson(res, 200, completionBody(req, r, id), headers);
  };
  if (r.latency_ms <= 0) {
    runtime.release(req.model);
    return send();
  }
  d.held.hold(res, req.model, r.latency_ms, send, () => runtime.record(req.model, 'aborted', { task: r.task }));
}

/** POST /v1/chat/completions: unknown models are a 404, a full model a 429, the rest the engine's. */
async function chat(d: ChatDeps, httpReq: IncomingMessage, res: ServerResponse): Promise<void> {
  const { engine, runtime } = d;
  const req = await readChatRequest(httpReq, runtime).catch((e: unknown) => {
    d.online.chat_calls++;
    throw e;
  });
  if (isProbe(req)) d.online.probe_calls++;
  else d.online.chat_calls++;
  const model = engine.modelProfile(req.model);
  if (!model) {
    runtime.record(req.model, 'unknown_model');
    return sendError(res, 404, 'model_not_found', `The model "${req.model}" does not exist in the simulator profile.`);
  }
  if (isProbe(req)) return sendJson(res, 200, probeBody(req));
  if (!runtime.tryAcquire(req.model, model.max_concurrency)) {
    runtime.record(req.model, 'rate_limited');
    return sendError(res, 429, 'rate_limit_exceeded', `simulator: more than ${model.max_concurrency} requests in flight for ${req.model}`, retryHeaders(model.retry_after_ms));
  }
  // Hashed once: the prompt is most of the request, and the key serves the attempt count and the reply id.
  const key = requestKey(req);
  const attempt = runtime.nextAttempt(key);
  let r: EngineResult;
  try {
    r = engine.respond(req, attempt);
  } catch (e) {
    runtime.release(req.model); // a simulator bug must not eat a concurrency slot
    throw e;
  }
  reply(d, res, req, r, attempt, key);
}

function modelEntry(id: string): unknown {
  return { id, object: 'model', created: CREATED, owned_by: 'reasoning-jury-sim' };
}

/** Chat completions, the model listing, the Files and Batches API and GET /sim/stats; anything else is a 404 (or 405). */
async function route(d: ChatDeps, httpReq: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (httpReq.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
  if (path === '/v1/chat/completions') {
    if (httpReq.method !== 'POST') throw new HttpError(405, 'method_not_allowed', 'use POST');
    return chat(d, httpReq, res);
  }
  if (await d.batch.handle(httpReq, res, path)) return;
  if (path === '/sim/stats' && httpReq.method === 'GET') return sendJson(res, 200, { chat: d.runtime.stats(), batch: batchStats(d) });
  if (path === '/v1/models' && httpReq.method === 'GET') {
    return sendJson(res, 200, { object: 'list', data: listedModels(d.engine.profile).map(modelEntry) });
  }
  const one = /^\/v1\/models\/(.+)$/.exec(path);
  if (one && httpReq.method === 'GET') {
    const id = decodeURIComponent(one[1]!);
    if (d.engine.modelProfile(id)) return sendJson(res, 200, modelEntry(id));
    throw new HttpError(404, 'model_not_found', `The model "${id}" does not exist in the simulator profile.`);
  }
  throw new HttpError(404, 'not_found', `no route for ${httpReq.method} ${path}`);
}

/** What a test of batch mode asks: which batches were accepted with which custom_ids, and were there online calls. */
export interface SimBatchStats extends BatchApiStats {
  /** POST /v1/chat/completions: `chat_calls` are the real ones (a run in batch mode makes none), `probe_calls` the client's dialect probes */
  online: { chat_calls: number; probe_calls: number };
}

function batchStats(d: ChatDeps): SimBatchStats {
  return { online: { ...d.online }, ...d.batch.stats() };
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<RunningSimulator> {
  const engine = new SimEngine({ profile: opts.profile ?? defaultProfile(), ...(opts.gold ? { gold: opts.gold } : {}), ...(opts.tasks ? { tasks: opts.tasks } : {}) });
  const runtime = new SimRuntime();
  const batch = createBatchApi(engine, engine.profile.batch ?? defaultBatchBehaviour());
  const deps: ChatDeps = { engine, runtime, held: new HeldReplies(runtime), batch, online: { chat_calls: 0, probe_calls: 0 } };
  const server = createServer((httpReq, res) => {
    runtime.noteAuthorization(httpReq.headers.authorization !== undefined);
    route(deps, httpReq, res).catch((e: unknown) => {
      if (e instanceof HttpError) sendError(res, e.status, e.code, e.message);
      else sendError(res, 500, 'simulator_bug', `simulator failed: ${(e as Error)?.message ?? String(e)}`);
    });
  });
  const listening = await listenOpenAICompatible(server, opts.port ?? 0, opts.host ?? '127.0.0.1');
  return {
    url: listening.url,
    port: listening.port,
    engine,
    stats: () => runtime.stats(),
    batchStats: () => batchStats(deps),
    close: () =>
      listening.close(() => {
        deps.held.cancelAll();
        batch.close();
      }),
  };
}
