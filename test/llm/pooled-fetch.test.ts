import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionPool, pooledFetch } from '../../src/llm/pooled-fetch.js';

// The fetch the openai client is given: what it hands back must behave like a fetch Response.
let server: Server;
let base: string;
const seen: Array<{ method: string; url: string; headers: Record<string, unknown>; body: string }> = [];
const pool = connectionPool(2);
const fetch = pooledFetch(pool);
let connections = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url === '/empty') return res.writeHead(204).end();
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'application/json', 'x-request-id': 'req-7' });
      res.end(JSON.stringify({ echo: body, path: req.url }));
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  pool.close();
  await new Promise((r) => server.close(r));
});

describe('pooledFetch', () => {
  it('sends method, headers and a string body; answers with a real Response read once', async () => {
    const res = await fetch(`${base}/v1/chat`, { method: 'POST', headers: new Headers({ 'X-Trace': 't1', 'content-type': 'application/json' }), body: '{"q":1}' });
    expect(res).toBeInstanceOf(Response);
    expect(res.ok).toBe(true);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('req-7');
    expect(res.headers.get('set-cookie')).toContain('a=1');
    expect(res.bodyUsed).toBe(false);
    expect(await res.json()).toEqual({ echo: '{"q":1}', path: '/v1/chat' });
    expect(res.bodyUsed).toBe(true);
    await expect(res.text()).rejects.toThrow(/already been read/);
    expect(seen.at(-1)).toMatchObject({ method: 'POST', headers: { 'x-trace': 't1' }, body: '{"q":1}' });
  });

  it('keeps error statuses and bodies; a 204 has no body', async () => {
    const missing = await fetch(new URL(`${base}/missing`), { method: 'GET', headers: [['accept', 'application/json']] });
    expect(missing.ok).toBe(false);
    expect(missing.status).toBe(404);
    expect(JSON.parse(await missing.text())).toMatchObject({ path: '/missing' });
    const empty = await fetch(`${base}/empty`, { method: 'DELETE', headers: {} });
    expect(empty.status).toBe(204);
    expect(await empty.text()).toBe('');
  });

  it('sends a byte body as is, and rejects with an AbortError when the signal aborts first', async () => {
    await fetch(`${base}/bytes`, { method: 'POST', body: new TextEncoder().encode('raw bytes') });
    expect(seen.at(-1)?.body).toBe('raw bytes');
    const ctl = new AbortController();
    ctl.abort(new Error('stop'));
    await expect(fetch(`${base}/x`, { method: 'GET', signal: ctl.signal })).rejects.toThrow();
  });

  it('takes a Request object apart and sends it over the same pool', async () => {
    const own = connectionPool(2);
    const ownFetch = pooledFetch(own);
    const before = connections;
    await (await ownFetch(`${base}/first`, { method: 'GET' })).text();
    const res = await ownFetch(new Request(`${base}/via-request`, { method: 'POST', body: 'r', headers: { 'x-from': 'request' } }));
    expect(await res.json()).toEqual({ echo: 'r', path: '/via-request' });
    expect(seen.at(-1)).toMatchObject({ method: 'POST', headers: { 'x-from': 'request' } });
    expect(connections - before).toBe(1); // the second request reused the pool's idle socket
    own.close();
  });

  it('reads a streamed body whole before sending it', async () => {
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('part one, '));
        c.enqueue(new TextEncoder().encode('part two'));
        c.close();
      },
    });
    await fetch(`${base}/stream`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    expect(seen.at(-1)?.body).toBe('part one, part two');
  });

  it('keeps at most its size of sockets open however many requests run at once', async () => {
    const own = connectionPool(2);
    const before = connections;
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => pooledFetch(own)(`${base}/n${i}`, { method: 'GET' })));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(connections - before).toBeLessThanOrEqual(2);
    expect(connections - before).toBeGreaterThan(0);
    own.close();
  });

  it('closes a socket idle longer than its idle time, but never cuts a reply that takes longer', async () => {
    const closed: Promise<void>[] = [];
    const slow = createServer((req, res) => setTimeout(() => res.end('late reply'), 600));
    slow.keepAliveTimeout = 120_000; // the server keeps idle sockets past the test's timeout: only the pool can close this one
    slow.on('connection', (socket) => closed.push(new Promise((r) => socket.once('close', () => r()))));
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/`;
    const own = connectionPool(1, 200);
    const get = pooledFetch(own);
    // 600 ms replies on a pool whose sockets close after 200 ms idle: both arrive whole, the
    // second on the socket the first left idle.
    expect(await (await get(url, { method: 'GET' })).text()).toBe('late reply');
    expect(await (await get(url, { method: 'GET' })).text()).toBe('late reply');
    expect(closed).toHaveLength(1);
    await closed[0]; // then, idle, the socket is closed by the pool
    own.close();
    await new Promise((r) => slow.close(r));
  });
});
