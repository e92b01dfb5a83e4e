/**
 * The `fetch` the `openai` client is given: one request over an endpoint's own keep-alive pool
 * of `node:http` / `node:https` sockets, with the reply read whole before it is handed back as a
 * standard `Response`.
 *
 * Why not a WHATWG fetch: its machinery (request objects, web streams on both bodies, the fetch
 * controller) cost about as much CPU per call as the rest of the stage together. Why not undici's
 * `request()` (what this was until 2026-12): Node's own HTTP client parses replies in native
 * code and is already loaded with Node, where undici is a megabyte of JavaScript to load and its
 * parser runs in WebAssembly; the same bare client spends ~0.2 ms of CPU less per call on this
 * pool (docs/benchmarks.md, "Whole-run speed"). Chat completions are small JSON bodies read
 * whole anyway, so nothing streams here.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { ReasoningJuryError } from '../util/errors.js';

type FetchLike = typeof globalThis.fetch;

/** One endpoint's sockets: at most `maxSockets` open, idle ones kept for reuse. */
export interface ConnectionPool {
  readonly http: HttpAgent;
  readonly https: HttpsAgent;
  /** closes every socket, idle or busy */
  close(): void;
}

// Idle sockets are closed after this long (a server's own Keep-Alive hint, when shorter, wins).
const IDLE_MS = 30_000;

/**
 * `idleMs` closes sockets that sat idle that long; it is never a limit on a request (the
 * client's own timeout is), so a model that answers slowly keeps its socket.
 */
export function connectionPool(maxSockets: number, idleMs = IDLE_MS): ConnectionPool {
  const opts = { keepAlive: true, maxSockets, timeout: idleMs };
  const http = new HttpAgent(opts);
  const https = new HttpsAgent(opts);
  return {
    http,
    https,
    close() {
      http.destroy();
      https.destroy();
    },
  };
}

/** A reply body longer than the endpoint allows (`max_reply_bytes`): reading it stopped there. */
export class ReplyTooLargeError extends ReasoningJuryError {
  override get kind() {
    return 'internal' as const;
  }
  override name = 'ReplyTooLargeError';
  constructor(readonly limit: number) {
    super(`the reply was larger than ${limit} bytes; reading stopped there`);
  }
}

/** `maxBodyBytes`: a reply body longer than this is not read on (ReplyTooLargeError), so no reply can fill memory. */
export function pooledFetch(pool: ConnectionPool, maxBodyBytes = Number.POSITIVE_INFINITY): FetchLike {
  return (async (input: Parameters<FetchLike>[0], init?: RequestInit): Promise<Response> => {
    // A Request object (the client never sends one) is taken apart into the same parts.
    const fromRequest = input instanceof Request ? { method: input.method, headers: input.headers, body: input.body === null ? undefined : await input.arrayBuffer(), signal: input.signal } : {};
    const url = new URL(input instanceof Request ? input.url : String(input));
    const parts = { ...fromRequest, ...init };
    const body = await bodyBytes(parts.body);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const agent = url.protocol === 'https:' ? pool.https : pool.http;
    const signal = parts.signal ?? undefined;
    try {
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = send(url, { method: parts.method ?? 'GET', headers: headerRecord(parts.headers), agent, ...(signal ? { signal } : {}) }, resolve);
        req.once('error', reject);
        req.end(body);
      });
      return new BufferedResponse(res.statusCode ?? 0, headerPairs(res.rawHeaders), await readText(res, maxBodyBytes)) as unknown as Response;
    } catch (err) {
      // Aborted while the body was still coming, Node reports the reply as cut ('aborted',
      // ECONNRESET); a fetch says AbortError, which is how the client tells its timeout apart.
      if (signal?.aborted && !(err instanceof Error && err.name === 'AbortError')) throw new DOMException('This operation was aborted', 'AbortError');
      throw err;
    }
  }) as FetchLike;
}

/** A body as a string or bytes; anything else (a stream, a Blob) is read whole first. */
async function bodyBytes(body: RequestInit['body'] | ArrayBuffer | undefined): Promise<string | Uint8Array | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  return new Uint8Array(await new Response(body as ConstructorParameters<typeof Response>[0]).arrayBuffer());
}

function readText(res: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    let bytes = 0;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      bytes += Buffer.byteLength(chunk, 'utf8');
      if (bytes > maxBytes) {
        res.destroy();
        reject(new ReplyTooLargeError(maxBytes));
        return;
      }
      text += chunk;
    });
    res.once('end', () => resolve(text));
    res.once('error', reject);
  });
}

/**
 * A real `Response` (status, headers, `ok`, `instanceof` all standard) whose body was read
 * already: `text()` and `json()` answer from the buffered text instead of a web stream, which
 * on Node 20 costs more than the request itself. `body` is null; the client never streams here.
 */
// The DOM typings declare Response's methods as properties, so a subclass cannot override
// them in TypeScript; at run time they are ordinary prototype methods.
const ResponseBase = Response as unknown as new (body: null, init: ResponseInit) => object;

class BufferedResponse extends ResponseBase {
  #text: string;
  #used = false;
  constructor(status: number, headers: [string, string][], text: string) {
    super(null, { status, headers });
    this.#text = text;
  }
  get bodyUsed(): boolean {
    return this.#used;
  }
  async text(): Promise<string> {
    if (this.#used) throw new TypeError('Body is unusable: Body has already been read');
    this.#used = true;
    return this.#text;
  }
  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    return new TextEncoder().encode(await this.text()).buffer as ArrayBuffer;
  }
}

function headerRecord(h: RequestInit['headers']): OutgoingHttpHeaders {
  if (!h) return {};
  const out: Record<string, string> = {};
  if (Array.isArray(h)) for (const [k, v] of h) out[k!.toLowerCase()] = v!;
  else if (typeof (h as Headers).forEach === 'function') (h as Headers).forEach((v, k) => (out[k] = v));
  else for (const [k, v] of Object.entries(h as Record<string, string>)) out[k.toLowerCase()] = v;
  return out;
}

/** Node's raw header list (name, value, name, value, …) as pairs; repeated names stay repeated. */
function headerPairs(raw: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}
