/**
 * The operations endpoint of `run --metrics-port`: `/metrics` (Prometheus text format),
 * `/healthz` (the process is alive: always 200 while it answers) and `/readyz` (200 while the
 * run can make progress, else 503 with the reason as one plain-text line). Plain node:http:
 * three fixed routes need no framework.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readiness } from './readiness.js';

export type Scrape = { ok: true; contentType: string; body: string } | { ok: false; reason: string };

export interface OpsHandlers {
  metrics(): Promise<Scrape>;
  readiness(): Readiness;
}

export interface OpsServer {
  readonly port: number;
  /** http://host:port, with a loopback address when bound to every interface */
  readonly url: string;
  close(): Promise<void>;
}

const text = (res: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8') => {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(res.req.method === 'HEAD' ? undefined : body);
};

async function route(req: IncomingMessage, res: ServerResponse, h: OpsHandlers): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return text(res, 405, 'only GET and HEAD\n');
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/healthz') return text(res, 200, 'ok\n');
  if (path === '/readyz') {
    const r = h.readiness();
    return text(res, r.ready ? 200 : 503, `${r.reason}\n`);
  }
  if (path === '/metrics') {
    const s = await h.metrics();
    return s.ok ? text(res, 200, s.body, s.contentType) : text(res, 503, `${s.reason}\n`);
  }
  return text(res, 404, 'not found: try /metrics, /healthz or /readyz\n');
}

/** Listens on host:port (port 0: a free one, see `port`); rejects with one line if it cannot. */
export async function startOpsServer(opts: { host: string; port: number }, h: OpsHandlers): Promise<OpsServer> {
  const server = createServer((req, res) => {
    route(req, res, h).catch((err: Error) => {
      if (!res.headersSent) text(res, 500, `${err.message}\n`);
      else res.destroy();
    });
  });
  // Probes and scrapes are short; a stuck client must not hold the process open at exit.
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(new Error(`cannot serve metrics on ${opts.host}:${opts.port}: ${err.code === 'EADDRINUSE' ? 'the port is in use' : err.message}`)));
    server.listen(opts.port, opts.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shown = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    port,
    url: `http://${shown}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
