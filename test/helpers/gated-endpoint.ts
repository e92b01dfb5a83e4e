/**
 * An OpenAI-compatible endpoint that holds every model call until the test lets it through, in front of
 * the juror simulator run as its own process. A run that got past its start (lease, resume,
 * intake) then waits in its first model call: its rivals meet it alive, whatever the machine's
 * speed, and no timing decides who overlaps whom.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GatedEndpoint {
  /** base_url for an endpoint of kind openai */
  url: string;
  /** model calls (POST) that arrived, held or passed */
  arrived(): number;
  /** lets held and later requests through */
  open(): void;
  /** lets `n` more requests through, in arrival order (a writer paced one record at a time) */
  allow(n: number): void;
  close(): Promise<void>;
}

export async function gatedEndpoint(target: string): Promise<GatedEndpoint> {
  let allowed = 0;
  const held: Array<() => void> = [];
  const admit = () => {
    while (held.length > 0 && allowed > 0) {
      allowed--;
      held.shift()!();
    }
  };
  const pass = () => new Promise<void>((resolve) => (held.push(resolve), admit()));
  let arrived = 0;
  const server: Server = createServer((req, res) => {
    if (req.method === 'POST') arrived++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // Only model calls are held and counted; a GET /models probe passes.
      const held = req.method === 'POST' ? pass() : Promise.resolve();
      void held
        .then(() => fetch(`${target}${(req.url ?? '').replace(/^\/v1/, '')}`, { method: req.method ?? 'GET', headers: { 'content-type': req.headers['content-type'] ?? 'application/json' }, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) }))
        .then(async (r) => {
          res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
          res.end(Buffer.from(await r.arrayBuffer()));
        })
        .catch((err: Error) => {
          res.writeHead(502);
          res.end(err.message);
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    arrived: () => arrived,
    open: () => ((allowed = Number.POSITIVE_INFINITY), admit()),
    allow: (n: number) => ((allowed += n), admit()),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
