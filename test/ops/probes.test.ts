// /healthz, /readyz and /metrics over real HTTP (src/ops/server.ts), with readiness taken from
// the metrics' facts as `run` does: an all-endpoints-down health view turns /readyz to 503 and
// its recovery back to 200 (the end-to-end outage check comes with the circuit breaker).
import { afterEach, describe, expect, it } from 'vitest';
import type { EndpointState, HealthView } from '../../src/ops/inputs.js';
import { createRunMetrics } from '../../src/ops/metrics.js';
import { readinessOf, type RunPhase } from '../../src/ops/readiness.js';
import { startOpsServer, type OpsServer } from '../../src/ops/server.js';
import type { Source } from '../../src/pipeline/source.js';
import { newCounters } from '../../src/pipeline/stage.js';
import { parseExposition, total } from '../helpers/prom-text.js';

const servers: OpsServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

class FakeHealth implements HealthView {
  readonly states = new Map<string, EndpointState>([['vllm', 'up'], ['ollama', 'up']]);
  endpoints() {
    return [...this.states].map(([name, state]) => ({ name, state }));
  }
  allDown() {
    return [...this.states.values()].every((s) => s !== 'up');
  }
}

async function serve() {
  const metrics = createRunMetrics();
  const state = { phase: 'running' as RunPhase, connected: true };
  const server = await startOpsServer(
    { host: '127.0.0.1', port: 0 },
    { metrics: async () => ({ ok: true, contentType: metrics.contentType, body: await metrics.exposition() }), readiness: () => readinessOf(state.phase, metrics.facts()) },
  );
  servers.push(server);
  const source = { name: 'fake', async *[Symbol.asyncIterator]() {}, close: async () => undefined, connected: () => state.connected } as Source;
  const get = async (path: string, init?: RequestInit) => {
    const res = await fetch(`${server.url}${path}`, init);
    return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
  };
  return { metrics, state, source, server, get };
}

describe('probes', () => {
  it('/readyz follows the facts: starting, ready, all endpoints down, back, source lost, shutting down', async () => {
    const { metrics, state, source, get } = await serve();
    expect(await get('/readyz')).toMatchObject({ status: 503, body: 'starting: opening the input and the jury\n' });
    const health = new FakeHealth();
    metrics.watch({ source, counters: newCounters(), health });
    expect(await get('/readyz')).toMatchObject({ status: 200, body: 'ready\n' });
    health.states.set('vllm', 'down');
    expect(await get('/readyz')).toMatchObject({ status: 200, body: 'ready (down: vllm)\n' });
    health.states.set('ollama', 'probing');
    const down = await get('/readyz');
    expect(down.status).toBe(503);
    expect(down.body).toBe('all model endpoints down (vllm, ollama): intake paused\n');
    expect(total(parseExposition((await get('/metrics')).body), 'reasoning_jury_endpoint_up')).toBe(0);
    health.states.set('ollama', 'up');
    expect(await get('/readyz')).toMatchObject({ status: 200, body: 'ready (down: vllm)\n' });
    health.states.set('vllm', 'up');
    expect(await get('/readyz')).toMatchObject({ status: 200, body: 'ready\n' });
    state.connected = false;
    expect(await get('/readyz')).toMatchObject({ status: 503, body: 'source not connected\n' });
    state.connected = true;
    state.phase = 'stopping';
    expect(await get('/readyz')).toMatchObject({ status: 503, body: 'shutting down: finishing and committing the records in flight\n' });
    // Alive whatever readiness says.
    expect(await get('/healthz')).toMatchObject({ status: 200, body: 'ok\n' });
  });

  it('/metrics is the text format; other paths and methods are refused', async () => {
    const { get } = await serve();
    const m = await get('/metrics');
    expect(m.status).toBe(200);
    expect(m.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(parseExposition(m.body).types.get('reasoning_jury_records_read_total')).toBe('counter');
    expect((await get('/metrics', { method: 'HEAD' })).status).toBe(200);
    expect((await get('/nope')).status).toBe(404);
    expect((await get('/metrics', { method: 'POST' })).status).toBe(405);
  });

  it('says which port is taken, in one line', async () => {
    const { server } = await serve();
    await expect(startOpsServer({ host: '127.0.0.1', port: server.port }, { metrics: async () => ({ ok: false, reason: 'x' }), readiness: () => ({ ready: true, reason: 'ready' }) })).rejects.toThrow(
      `cannot serve metrics on 127.0.0.1:${server.port}: the port is in use`,
    );
  });

  it('readiness is never ready once stopping or finished', () => {
    const running = { started: true, sourceConnected: true, endpointsDown: [], allEndpointsDown: false };
    expect(readinessOf('running', running).ready).toBe(true);
    expect(readinessOf('stopping', running)).toEqual({ ready: false, reason: 'shutting down: finishing and committing the records in flight' });
    expect(readinessOf('finished', running)).toEqual({ ready: false, reason: 'finished: the run is over' });
  });
});
