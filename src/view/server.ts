/**
 * `reasoning-jury view`: a local web app over a committed output. node:http serves the page's
 * three static files (from the package, nothing fetched from the network) and a small JSON API
 * over the record index. Safe by default:
 *  - listens on 127.0.0.1 and answers only requests addressed to it by that name (a page on another
 *    site cannot reach it through DNS rebinding); on any other address every request needs the token;
 *  - only the fixed static files and committed data are served: no request names a path;
 *  - a review is a POST with a JSON body and a custom header, which no cross-site form can send;
 *  - the page renders every text with textContent, and the Content-Security-Policy allows no inline
 *    script or handler, so a trace holding HTML shows as characters.
 */
import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ObjectStore } from '../pipeline/storage/object-store.js';
import { overview, summary } from './present.js';
import { parseFilter, RecordQuery, type Filter } from './query.js';
import { recordDetail } from './record-detail.js';
import { buildIndex, type RecordIndex } from './record-index.js';
import type { ReviewRow } from './schema-bits.js';
import { TraceSearch } from './search.js';

export interface ReviewRequest {
  record_id: string;
  decision: string;
  note: string | null;
}

export interface ViewServerOptions {
  store: ObjectStore;
  /** the output's folder or URL, shown in the page */
  location: string;
  host: string;
  port: number;
  /** required on every request when set (the CLI sets one for any address but loopback) */
  token?: string;
  reviewer: string;
  /** the folder holding index.html, app.js and style.css */
  staticDir: string;
  /** commits a review under the output's lease (the CLI's); throws a one-line message when it cannot */
  submitReview(r: ReviewRequest, known: ReadonlySet<string>): Promise<ReviewRow>;
}

export interface RunningView {
  url: string;
  /** resolves once the index is built (the API answers 503 with progress until then) */
  ready: Promise<RecordIndex>;
  close(): Promise<void>;
}

const STATIC: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
};

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const COMMON_HEADERS = { 'content-security-policy': CSP, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'cache-control': 'no-store', 'x-frame-options': 'DENY' };
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
export const isLoopback = (host: string): boolean => LOOPBACK.has(host) || host.startsWith('127.');
const TOKEN_COOKIE = 'rj_view_token';

function send(res: ServerResponse, status: number, body: string | Uint8Array, type = 'application/json; charset=utf-8', extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...COMMON_HEADERS, 'content-type': type, ...extra });
  res.end(body);
}
const json = (res: ServerResponse, status: number, value: unknown) => send(res, status, JSON.stringify(value));

const sameToken = (a: string | undefined, b: string): boolean => a !== undefined && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

function cookieToken(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === TOKEN_COOKIE) return decodeURIComponent(v.join('='));
  }
  return undefined;
}

async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > limit) throw new RangeError(`request body over ${limit} bytes`);
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A body that is not JSON is the client's mistake (400), not the server's. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new RangeError('the body is not JSON');
  }
}

class ViewApp {
  private ix: RecordIndex | null = null;
  private query: RecordQuery | null = null;
  private search: TraceSearch | null = null;
  private progress = { done: 0, total: 0 };
  /** every range read: until then queries answer over the ranges read so far, marked partial */
  private complete = false;
  private failure: string | null = null;
  private readonly files: Record<string, Uint8Array>;
  private knownIds: Set<string> | null = null;
  readonly ready: Promise<RecordIndex>;

  constructor(private readonly o: ViewServerOptions) {
    this.files = Object.fromEntries(Object.values(STATIC).map((s) => [s.file, readFileSync(join(o.staticDir, s.file))]));
    this.ready = buildIndex(o.store, {
      onStart: (ix, total) => {
        this.ix = ix;
        this.query = new RecordQuery(ix);
        this.search = new TraceSearch(o.store, ix);
        this.progress = { done: 0, total };
      },
      onRange: (done, total) => (this.progress = { done, total }),
    }).then(
      (ix) => ((this.complete = true), ix),
      (err: unknown) => {
        this.failure = (err as Error).message;
        throw err;
      },
    );
    this.ready.catch(() => undefined);
  }

  /** Host and token checks; false when the request was answered (refused) here. */
  allowed(req: IncomingMessage, res: ServerResponse, url: URL): boolean {
    if (isLoopback(this.o.host)) {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '');
      if (!isLoopback(host)) return send(res, 421, 'this viewer answers only requests to 127.0.0.1 or localhost\n', 'text/plain; charset=utf-8'), false;
    }
    const token = this.o.token;
    if (!token) return true;
    if (req.method === 'GET' && url.pathname === '/' && sameToken(url.searchParams.get('token') ?? undefined, token)) {
      send(res, 303, '', 'text/plain', { location: '/', 'set-cookie': `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/` });
      return false;
    }
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (sameToken(cookieToken(req), token) || sameToken(bearer, token)) return true;
    send(res, 401, 'a token is needed: open the URL `reasoning-jury view` printed (it carries ?token=…)\n', 'text/plain; charset=utf-8');
    return false;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://viewer.invalid');
    if (!this.allowed(req, res, url)) return;
    const file = STATIC[url.pathname];
    if (req.method === 'GET' && file) return send(res, 200, this.files[file.file]!, file.type);
    if (!url.pathname.startsWith('/api/')) return send(res, 404, 'not found\n', 'text/plain; charset=utf-8');
    if (url.pathname === '/api/meta') return json(res, 200, this.meta());
    if (!this.ix) return json(res, this.failure ? 500 : 503, this.failure ? { error: this.failure } : { loading: this.progress });
    try {
      if (req.method === 'GET' && url.pathname === '/api/records') return json(res, 200, await this.records(url.searchParams));
      if (req.method === 'GET' && url.pathname === '/api/record') return await this.record(res, url.searchParams);
      if (req.method === 'GET' && url.pathname === '/api/overview') return json(res, 200, { ...overview(this.ix), partial: this.partial() });
      if (req.method === 'POST' && url.pathname === '/api/review') return await this.review(req, res);
      return json(res, 404, { error: 'no such API' });
    } catch (err) {
      return json(res, err instanceof RangeError ? 400 : 500, { error: (err as Error).message.split('\n')[0] });
    }
  }

  /** How far the index is while it is still being read; null once complete. */
  private partial(): { done: number; total: number } | null {
    return this.complete ? null : this.progress;
  }

  private meta(): unknown {
    const ix = this.ix;
    return {
      location: this.o.location,
      reviewer: this.o.reviewer,
      ready: ix !== null,
      partial: this.partial(),
      loading: this.progress,
      error: this.failure,
      records: ix?.ready ?? 0,
      rules: ix ? ['(default)', ...ix.rules.values.slice(1)] : [],
      categories: ix ? [...new Set(ix.categorySets.values.flatMap((s) => (s ? s.split(',') : [])))].sort() : [],
    };
  }

  private async rowsFor(f: Filter): Promise<Uint32Array> {
    const hits = f.q ? await this.search!.hits(f.q) : null;
    return this.query!.rows(f, hits);
  }

  private async records(p: URLSearchParams): Promise<unknown> {
    const f = parseFilter(p);
    const rows = await this.rowsFor(f);
    const offset = Math.max(0, Math.min(Number(p.get('offset') ?? 0) || 0, rows.length));
    const limit = Math.max(1, Math.min(Number(p.get('limit') ?? 100) || 100, 500));
    return { total: rows.length, offset, partial: this.partial(), rows: Array.from(rows.subarray(offset, offset + limit), (i) => summary(this.ix!, i)) };
  }

  private async record(res: ServerResponse, p: URLSearchParams): Promise<void> {
    const ix = this.ix!;
    const i = ix.find(p.get('id') ?? '');
    if (i < 0) return json(res, 404, { error: `no record ${JSON.stringify(p.get('id') ?? '')} in this output` });
    const rows = await this.rowsFor(parseFilter(p));
    const at = rows.indexOf(i);
    const detail = await recordDetail(this.o.store, ix, i);
    const near = (k: number) => (k >= 0 && k < rows.length ? ix.ids[rows[k]!]! : null);
    // Outside the filter (a reviewed record left `reviewed=no`): its neighbours are where it would sit.
    const next = at >= 0 ? near(at + 1) : near(rows.findIndex((r) => r > i));
    const prev = at >= 0 ? near(at - 1) : null;
    json(res, 200, { ...detail, summary: summary(ix, i), position: at, total: rows.length, next, prev });
  }

  private async review(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.headers['x-rj-review'] !== '1' || !(req.headers['content-type'] ?? '').startsWith('application/json')) return json(res, 403, { error: 'reviews are sent by the page only' });
    const body = parseJson(await readBody(req, 64 * 1024)) as Partial<ReviewRequest>;
    const ix = this.ix!;
    // While ranges are still being read, only the records read so far can be reviewed here.
    const known = this.knownIds ?? new Set(ix.ids.slice(0, ix.ready));
    if (this.complete) this.knownIds = known;
    const input: ReviewRequest = { record_id: String(body.record_id ?? ''), decision: String(body.decision ?? ''), note: typeof body.note === 'string' && body.note.trim() ? body.note.slice(0, 10_000) : null };
    try {
      const row = await this.o.submitReview(input, known);
      ix.applyReview(row);
      this.query!.invalidate();
      json(res, 200, { review: row, summary: summary(ix, ix.find(row.record_id)) });
    } catch (err) {
      json(res, 409, { error: (err as Error).message.split('\n')[0] });
    }
  }
}

export async function startViewServer(o: ViewServerOptions): Promise<RunningView> {
  const app = new ViewApp(o);
  const server: Server = createServer((req, res) => {
    app.handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { error: (err as Error).message.split('\n')[0] });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${shown}:${addr.port}/`,
    ready: app.ready,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
