/**
 * The viewer's server refuses what it should, over real HTTP: requests addressed to another host
 * name (DNS rebinding), requests without the token when it listens beyond loopback, paths that try
 * to leave the package's three static files, and reviews not sent by the page.
 */
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../../src/pipeline/storage/object-store.js';
import { ShardCommitter } from '../../src/pipeline/commit/shard-commit.js';
import { packageRoot } from '../../src/util/paths.js';
import { startViewServer, type RunningView } from '../../src/view/server.js';
import { decisionRows, verdictRows } from '../shards/synth.js';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw request: the path is sent as written (no URL normalisation), any Host header. */
function send(base: string, path: string, o: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: o.method ?? 'GET', headers: o.headers ?? {} }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

describe('view server: safe by default', () => {
  let local: RunningView;
  let open: RunningView;
  const submitted: string[] = [];

  beforeAll(async () => {
    const out = mkdtempSync(join(tmpdir(), 'rj-view-srv-'));
    const store = new LocalObjectStore(out);
    await new ShardCommitter(store).commit({ source: 'file', first: 'a+000', last: 'a+019', tables: { verdicts: verdictRows(20, 1, 'file'), decisions: decisionRows(20) } });
    const common = {
      store,
      location: out,
      port: 0,
      reviewer: 'tester',
      staticDir: join(packageRoot(), 'viewer'),
      submitReview: async (r: { record_id: string; decision: string; note: string | null }) => {
        submitted.push(r.record_id);
        return { ...r, decision: r.decision as 'keep', reviewer: 'tester', reviewed_at: new Date().toISOString() };
      },
    };
    local = await startViewServer({ ...common, host: '127.0.0.1' });
    // "Another address": the token is asked for; bound to loopback here so the test reaches it.
    open = await startViewServer({ ...common, host: '127.0.0.2', token: 'secret-token-1' });
    await Promise.all([local.ready, open.ready]);
  });
  afterAll(async () => {
    await Promise.all([local?.close(), open?.close()]);
  });

  it('answers only requests addressed to 127.0.0.1 or localhost', async () => {
    const ok = await send(local.url, '/api/meta');
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({ ready: true, records: 20 });
    expect((await send(local.url, '/api/meta', { headers: { host: `localhost:${new URL(local.url).port}` } })).status).toBe(200);
    const rebound = await send(local.url, '/api/meta', { headers: { host: 'attacker.example:80' } });
    expect(rebound.status).toBe(421);
    expect(rebound.body).not.toContain('records');
  });

  it('serves three static files with a strict CSP, and no path outside them', async () => {
    const page = await send(local.url, '/');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    for (const path of ['/../package.json', '/%2e%2e/package.json', '/app.js/../../package.json', '/viewer/app.js', '//etc/passwd', '/api/../../../etc/passwd', '/static/..%2f..%2fpackage.json']) {
      const r = await send(local.url, path);
      expect(r.status, path).toBe(404);
      expect(r.body, path).not.toMatch(/"name": "reasoning-jury"|root:x:0/);
    }
  });

  it('asks for the token on every request when listening beyond loopback', async () => {
    const host = { host: new URL(open.url).host };
    expect((await send(open.url, '/api/meta', { headers: host })).status).toBe(401);
    expect((await send(open.url, '/', { headers: host })).status).toBe(401);
    expect((await send(open.url, '/?token=wrong', { headers: host })).status).toBe(401);
    const entry = await send(open.url, '/?token=secret-token-1', { headers: host });
    expect(entry.status).toBe(303);
    const cookie = String(entry.headers['set-cookie']).split(';')[0]!;
    expect(String(entry.headers['set-cookie'])).toMatch(/HttpOnly; SameSite=Strict/);
    expect((await send(open.url, '/api/meta', { headers: { ...host, cookie } })).status).toBe(200);
    expect((await send(open.url, '/api/meta', { headers: { ...host, authorization: 'Bearer secret-token-1' } })).status).toBe(200);
  });

  it('takes a review only as JSON with the page\'s header (no cross-site form can send one)', async () => {
    const id = verdictRows(20, 1, 'file')[3]!.record_id;
    const body = JSON.stringify({ record_id: id, decision: 'keep' });
    const form = await send(local.url, '/api/review', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `record_id=${id}&decision=keep` });
    expect(form.status).toBe(403);
    const noHeader = await send(local.url, '/api/review', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(noHeader.status).toBe(403);
    const notJson = await send(local.url, '/api/review', { method: 'POST', headers: { 'content-type': 'application/json', 'x-rj-review': '1' }, body: '{"record_id": ' });
    expect([notJson.status, JSON.parse(notJson.body).error]).toEqual([400, 'the body is not JSON']);
    expect(submitted).toEqual([]);
    const ok = await send(local.url, '/api/review', { method: 'POST', headers: { 'content-type': 'application/json', 'x-rj-review': '1' }, body });
    expect(ok.status, ok.body).toBe(200);
    expect(submitted).toEqual([id]);
    expect(JSON.parse(ok.body).summary).toMatchObject({ id, reviewed: 'keep' });
  });
});
