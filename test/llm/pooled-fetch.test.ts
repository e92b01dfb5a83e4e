import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pooledFetch } from '../../src/llm/pooled-fetch.js';

// The fetch the openai client is given: what it hands back must behave like a fetch Response.
let server: Server;
let base: string;
const seen: Array<{ method: string; url: string; headers: Record<string, unknown>; body: string }> = [];
const agent = new Agent({ connections: 2 });
const fetch = pooledFetch(agent);

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
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await agent.close();
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

  it('hands what it does not read itself (a Request object) to undici fetch on the same pool', async () => {
    const res = await fetch(new Request(`${base}/via-fetch`, { method: 'POST', body: 'r' }));
    expect(await res.json()).toEqual({ echo: 'r', path: '/via-fetch' });
  });
});
