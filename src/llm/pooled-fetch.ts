/**
 * The `fetch` the `openai` client is given: one request over an endpoint's own undici pool,
 * with the reply read whole before it is handed back as a standard `Response`.
 *
 * Why not undici's `fetch`: the WHATWG fetch machinery (request objects, web streams on both
 * bodies, the fetch controller) cost about as much CPU per call as the rest of the stage
 * together (docs/benchmarks.md, "Whole-run speed"). Chat completions are small JSON bodies
 * read whole anyway, so `undici.request` does the same job with far less work (whole-run
 * benchmark: about 1 ms of CPU less per call). Anything this does not handle (streamed request
 * bodies, Request objects) goes to undici's `fetch` over the same pool.
 */
import { type Dispatcher, fetch as undiciFetch, request } from 'undici';

type FetchLike = typeof globalThis.fetch;

export function pooledFetch(dispatcher: Dispatcher): FetchLike {
  // undici's fetch does not take the global Request class: pass its parts instead.
  const fallback = (input: Parameters<FetchLike>[0], init?: RequestInit) => {
    const fromRequest = input instanceof Request ? { method: input.method, headers: input.headers, body: input.body, signal: input.signal, duplex: 'half' } : {};
    const url = input instanceof Request ? input.url : String(input);
    return undiciFetch(url, { ...fromRequest, ...(init as Record<string, unknown>), dispatcher } as Parameters<typeof undiciFetch>[1]) as unknown as Promise<Response>;
  };
  return (async (input: Parameters<FetchLike>[0], init?: RequestInit): Promise<Response> => {
    const body = init?.body;
    if (typeof input !== 'string' && !(input instanceof URL)) return fallback(input, init);
    if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array)) return fallback(input, init);
    const res = await request(input, {
      method: (init?.method ?? 'GET') as Dispatcher.HttpMethod,
      headers: headerRecord(init?.headers),
      ...(body !== undefined && body !== null ? { body } : {}),
      ...(init?.signal ? { signal: init.signal } : {}),
      dispatcher,
    });
    return new BufferedResponse(res.statusCode, headerPairs(res.headers), await res.body.text()) as unknown as Response;
  }) as FetchLike;
}

/**
 * A real `Response` (status, headers, `ok`, `instanceof` all standard) whose body was read
 * already: `text()` and `json()` answer from the buffered text instead of a web stream, which
 * on Node 20 costs more than the request itself. `body` is null; the client never streams here.
 */
// The DOM typings declare Response's methods as properties, so a subclass cannot them
// in TypeScript; at run time they are ordinary prototype methods.
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

function headerRecord(h: RequestInit['headers']): Record<string, string> {
  if (!h) return {};
  const out: Record<string, string> = {};
  if (Array.isArray(h)) for (const [k, v] of h) out[k!.toLowerCase()] = v!;
  else if (typeof (h as Headers).forEach === 'function') (h as Headers).forEach((v, k) => (out[k] = v));
  else for (const [k, v] of Object.entries(h as Record<string, string>)) out[k.toLowerCase()] = v;
  return out;
}

function headerPairs(h: Record<string, string | string[] | undefined>): [string, string][] {
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const one of v) out.push([k, one]);
    else out.push([k, v]);
  }
  return out;
}
